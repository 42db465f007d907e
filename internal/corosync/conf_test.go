package corosync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
)

func fixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/pve-two-node.conf")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ffsplit(host string) Device {
	return Device{Host: host, Algorithm: "ffsplit", Votes: 1, TLS: "on"}
}

// A file round-trips byte for byte: comments, tabs, blank lines and order are kept.
func TestParseRenderRoundTrip(t *testing.T) {
	for _, text := range []string{
		fixture(t),
		"# corosync's example\ntotem {\n\tversion: 2\n\t# a comment\n\tcluster_name: x\n}\n\n\nquorum {\n\tprovider: corosync_votequorum\n}",
		"",
		"a: b\r\nsec {\r\n}\r\n",
	} {
		c, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse: %v\n%s", err, text)
		}
		if got := c.Render(); got != text {
			t.Errorf("round trip changed the file:\n%q\n%q", text, got)
		}
	}
}

// Syntax errors name the line and the rule, as corosync's parser refuses them.
func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"totem {\n  version: 2\n":           "line 1: section \"totem\" is never closed",
		"totem {\n}\n}\n":                   "line 3: '}' closes no section",
		"totem { version: 2\n}\n":           "line 1: nothing may follow '{' on its line",
		"totem {\n  version 2\n}\n":         "line 2: \"version 2\" is neither 'key: value'",
		"{\n}\n":                            "line 1: \"{\" is not a section name",
		"quorum {\n  : corosync\n}\n":       "line 2:",
		"two words {\n}\n":                  "line 1: \"two words {\" is not a section name",
		"totem {\n  a: b\n  }x\n}\n":        "line 3:",
		"nodelist {\n  node {\n  }\n\n":     "line 1: section \"nodelist\" is never closed",
		"totem {\n  cluster_name: a{b\n}\n": "line 2: nothing may follow '{'",
	} {
		_, err := Parse(text)
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want an ErrSyntax containing %q", text, err, want)
		}
	}
}

// The device pvecm writes: a section in quorum, the version raised by one, nothing else touched;
// the same device again changes nothing.
func TestSetDevice(t *testing.T) {
	text := fixture(t)
	c, _ := Parse(text)
	e, err := c.SetDevice(ffsplit("10.20.10.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !e.Changed || e.ConfigVersion != 3 || e.TwoNodeRemoved {
		t.Fatalf("edit %+v; want changed, version 3", e)
	}
	got := c.Render()
	want := strings.Replace(text, "quorum {\n  provider: corosync_votequorum\n}",
		"quorum {\n  provider: corosync_votequorum\n  device {\n    model: net\n    votes: 1\n    net {\n      tls: on\n      host: 10.20.10.1\n      algorithm: ffsplit\n    }\n  }\n}", 1)
	want = strings.Replace(want, "config_version: 2", "config_version: 3", 1)
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	again, _ := Parse(got)
	e2, err := again.SetDevice(ffsplit("10.20.10.1"))
	if err != nil || e2.Changed || e2.ConfigVersion != 3 || again.Render() != got {
		t.Fatalf("second edit %+v %v: not idempotent", e2, err)
	}
	if d := again.CurrentDevice(); d == nil || *d != ffsplit("10.20.10.1") {
		t.Fatalf("CurrentDevice = %+v", d)
	}
	// another host: only its line and the version change
	e3, err := again.SetDevice(ffsplit("qnetd.example.net"))
	if err != nil || !e3.Changed || e3.ConfigVersion != 4 {
		t.Fatalf("host change %+v %v", e3, err)
	}
	if r := again.Render(); strings.Count(r, "\n") != strings.Count(got, "\n") || !strings.Contains(r, "      host: qnetd.example.net\n") {
		t.Fatalf("host change rewrote more than the line:\n%s", r)
	}
}

// votequorum refuses two_node beside a device: the edit drops it and says so.
func TestSetDeviceRemovesTwoNode(t *testing.T) {
	c, _ := Parse(strings.Replace(fixture(t), "provider: corosync_votequorum\n", "provider: corosync_votequorum\n  two_node: 1\n", 1))
	e, err := c.SetDevice(ffsplit("10.20.10.1"))
	if err != nil || !e.Changed || !e.TwoNodeRemoved || strings.Contains(c.Render(), "two_node") {
		t.Fatalf("%+v %v\n%s", e, err, c.Render())
	}
}

// lms: no votes line unless given (the algorithm gives sum(node votes) - 1).
func TestSetDeviceLMS(t *testing.T) {
	c, _ := Parse(fixture(t))
	if _, err := c.SetDevice(Device{Host: "h", Algorithm: "lms", TLS: "on"}); err != nil {
		t.Fatal(err)
	}
	if r := c.Render(); strings.Contains(r, "votes: 1\n    net") || !strings.Contains(r, "algorithm: lms") {
		t.Fatalf("lms device:\n%s", r)
	}
}

// Bad files and devices fail naming the field and the rule, and leave the file as it was.
func TestSetDeviceErrors(t *testing.T) {
	base := fixture(t)
	for name, c := range map[string]struct {
		text string
		dev  Device
		want string
	}{
		"no version":    {strings.Replace(base, "  config_version: 2\n", "", 1), ffsplit("h"), "totem.config_version: missing"},
		"bad version":   {strings.Replace(base, "config_version: 2", "config_version: two", 1), ffsplit("h"), `totem.config_version: "two": not a whole number`},
		"no totem":      {"quorum {\n  provider: corosync_votequorum\n}\n", ffsplit("h"), "totem: no totem section"},
		"no quorum":     {strings.Replace(base, "quorum {\n  provider: corosync_votequorum\n}\n", "", 1), ffsplit("h"), "quorum: no quorum section"},
		"provider":      {strings.Replace(base, "corosync_votequorum", "other", 1), ffsplit("h"), `quorum.provider: "other"`},
		"node votes":    {strings.Replace(base, "quorum_votes: 1\n    ring0_addr: 10.20.10.3", "quorum_votes: 2\n    ring0_addr: 10.20.10.3", 1), ffsplit("h"), "node dv02hyp002p03 has quorum_votes 2"},
		"ffsplit votes": {base, Device{Host: "h", Algorithm: "ffsplit", Votes: 2, TLS: "on"}, "votes: 2: the ffsplit algorithm gives exactly 1 vote"},
		"no host":       {base, ffsplit(""), "host: required"},
		"host syntax":   {base, ffsplit("a b"), `host: "a b": one address`},
		"algorithm":     {base, Device{Host: "h", Algorithm: "x", Votes: 1, TLS: "on"}, `algorithm: "x": one of ffsplit, lms`},
		"tls":           {base, Device{Host: "h", Algorithm: "ffsplit", Votes: 1, TLS: "yes"}, `tls: "yes": one of on, off, required`},
	} {
		conf, err := Parse(c.text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = conf.SetDevice(c.dev)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", name, err, c.want)
		}
		if conf.Render() != c.text {
			t.Errorf("%s: a refused edit changed the file", name)
		}
	}
}

func TestRemoveDevice(t *testing.T) {
	text := fixture(t)
	c, _ := Parse(text)
	if _, err := c.SetDevice(ffsplit("h")); err != nil {
		t.Fatal(err)
	}
	e, err := c.RemoveDevice()
	if err != nil || !e.Changed || e.ConfigVersion != 4 {
		t.Fatalf("%+v %v", e, err)
	}
	if got := c.Render(); got != strings.Replace(text, "config_version: 2", "config_version: 4", 1) {
		t.Fatalf("after remove:\n%s", got)
	}
	e, _ = c.RemoveDevice()
	if e.Changed {
		t.Fatal("removing no device changed the file")
	}
}

// The module: check mode reports the diff and writes nothing; a run writes it atomically; a
// second run is ok; a refused run leaves the file as it was.
func TestModule(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "corosync.conf")
	text := fixture(t)
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"path": path, "host": "10.20.10.1"}
	res, code := moduletest.Execute(t, Module(), moduletest.With(args, "_ansible_check_mode", true, "_ansible_diff", true))
	if code != 0 || res["changed"] != true || fmt.Sprint(res["config_version"]) != "3" {
		t.Fatalf("check mode: %d %v", code, res)
	}
	if diff, _ := res["diff"].(map[string]any); diff == nil || !strings.Contains(diff["after"].(string), "algorithm: ffsplit") {
		t.Fatalf("check mode diff: %v", res["diff"])
	}
	if b, _ := os.ReadFile(path); string(b) != text {
		t.Fatal("check mode wrote the file")
	}
	res, code = moduletest.Execute(t, Module(), args)
	if code != 0 || res["changed"] != true || !strings.Contains(res["msg"].(string), "quorum device set in "+path+", config_version 3") {
		t.Fatalf("run: %d %v", code, res)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v; want the file's own 0640", st.Mode().Perm())
	}
	if _, err := os.Stat(path + ".new"); err == nil {
		t.Error("path.new left behind")
	}
	res, code = moduletest.Execute(t, Module(), args)
	if code != 0 || res["changed"] != false {
		t.Fatalf("second run: %d %v", code, res)
	}
	written, _ := os.ReadFile(path)
	res, code = moduletest.Execute(t, Module(), moduletest.With(args, "votes", 2))
	if code != 1 || !strings.Contains(res["msg"].(string), "votes: 2") {
		t.Fatalf("votes 2: %d %v", code, res)
	}
	if b, _ := os.ReadFile(path); string(b) != string(written) {
		t.Fatal("a refused run changed the file")
	}
	res, code = moduletest.Execute(t, Module(), map[string]any{"path": filepath.Join(dir, "none.conf"), "host": "h"})
	if code != 1 || !strings.Contains(res["msg"].(string), "not in a cluster yet") {
		t.Fatalf("missing file: %d %v", code, res)
	}
	res, code = moduletest.Execute(t, Module(), map[string]any{"path": path})
	if code != 1 || !strings.Contains(res["msg"].(string), "host") {
		t.Fatalf("no host: %d %v", code, res)
	}
	res, code = moduletest.Execute(t, Module(), map[string]any{"path": path, "state": "absent"})
	if code != 0 || res["changed"] != true || res["device"] != nil {
		t.Fatalf("absent: %d %v", code, res)
	}
}

// FuzzParse: no panic; what parses renders back byte for byte, and an edit of it renders a file
// that parses again with the device in it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"totem {\n config_version: 1\n}\nquorum {\n provider: corosync_votequorum\n}\n", "a: b", "x {\n}\n}", "#c\n\n\tk:v\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse(text)
		if err != nil {
			return
		}
		if got := c.Render(); got != text {
			t.Fatalf("round trip %q -> %q", text, got)
		}
		if _, err := c.SetDevice(ffsplit("10.20.10.1")); err != nil {
			return
		}
		again, err := Parse(c.Render())
		if err != nil {
			t.Fatalf("edited file does not parse: %v\n%q", err, c.Render())
		}
		if d := again.CurrentDevice(); d == nil || d.Host != "10.20.10.1" || d.Algorithm != "ffsplit" {
			t.Fatalf("edited file lost the device: %+v\n%q", d, c.Render())
		}
	})
}
