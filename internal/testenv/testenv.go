// Package testenv decides whether a test that needs something from the machine (root, a Debian
// package, a kernel feature, a server) may skip when it is missing. Outside CI a missing
// prerequisite skips with the reason; in CI (the CI environment variable is set) it fails, so a
// forgotten install step can never turn into a green run that tested nothing.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run under CI, where every prerequisite must be present.
func InCI() bool { return os.Getenv("CI") != "" }

// Require skips (outside CI) or fails (in CI) the test when ok is false, naming what is missing.
func Require(t testing.TB, what string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if InCI() {
		t.Fatalf("prerequisite missing in CI: %s", what)
	}
	t.Skipf("prerequisite missing: %s (set up with scripts/install-deps.sh)", what)
}

// Root requires the test to run as root.
func Root(t testing.TB) {
	t.Helper()
	Require(t, "running as root", os.Geteuid() == 0)
}

// Binary requires an executable on PATH and returns its path.
func Binary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	Require(t, "executable "+name+" on PATH", err == nil)
	return p
}
