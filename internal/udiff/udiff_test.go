package udiff

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var cases = []struct{ name, a, b string }{
	{"equal", "a\nb\n", "a\nb\n"},
	{"all new (-N)", "", "#version:1\n\nauto x\niface x\n\tmtu 1450\n"},
	{"all gone", "a\nb\n", ""},
	{"insert middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\n5\nnew\n6\n7\n8\n9\n10\n"},
	{"two far hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n", "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\ny\n"},
	{"two near hunks merge", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "x\n2\n3\n4\n5\n6\n7\ny\n9\n"},
	{"change", "a\nb\nc\n", "a\nB\nc\n"},
	{"blank change ignored (-b)", "a\n\tb  c\nd\n", "a\n\tb c \nd\n"},
	{"no newline at end", "a\nb", "a\nb\n"},
	{"vnet added", "#version:1\n\nauto v0\niface v0\n\tmtu 1450\n\nauto vrf_t\niface vrf_t\n\tvrf-table auto\n", "#version:1\n\nauto v0\niface v0\n\tmtu 1450\n\nauto v1\niface v1\n\tmtu 1450\n\nauto vrf_t\niface vrf_t\n\tvrf-table auto\n"},
}

// TestAgainstGNUDiff compares with `diff -b -u` from diffutils (Essential in
// Debian), header lines aside.
func TestAgainstGNUDiff(t *testing.T) {
	bin, err := exec.LookPath("diff")
	if err != nil {
		t.Fatalf("GNU diff is needed for this test: %v", err)
	}
	dir := t.TempDir()
	for _, c := range cases {
		for _, b := range []bool{true, false} {
			t.Run(c.name+map[bool]string{true: " -b", false: ""}[b], func(t *testing.T) {
				fa, fb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
				if err := os.WriteFile(fa, []byte(c.a), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(fb, []byte(c.b), 0o600); err != nil {
					t.Fatal(err)
				}
				args := []string{"-u", "--label", "A", "--label", "B", fa, fb}
				if b {
					args = append([]string{"-b"}, args...)
				}
				out, err := exec.Command(bin, args...).Output()
				var ee *exec.ExitError
				if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
					t.Fatalf("diff: %v", err)
				}
				got := Unified(c.a, c.b, Options{From: "A", To: "B", IgnoreSpaceChange: b})
				if got != string(out) {
					t.Errorf("differs from GNU diff:\n--- want\n%s--- got\n%s", out, got)
				}
			})
		}
	}
}

func TestRange(t *testing.T) {
	if got := strings.Join([]string{rng(1, 0), rng(5, 1), rng(2, 7)}, " "); got != "0,0 5 2,7" {
		t.Fatal(got)
	}
}
