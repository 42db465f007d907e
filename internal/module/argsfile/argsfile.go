// Package argsfile writes the args file Ansible hands a binary module, for tests. It is a package
// of its own so that package module's own tests can use it: moduletest, the other users' helper,
// imports module.
package argsfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Write writes args as Ansible writes a binary module's args file and returns its path.
func Write(t testing.TB, args map[string]any) string {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatalf("encoding module args: %v", err)
	}
	p := filepath.Join(t.TempDir(), "args")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatalf("writing module args: %v", err)
	}
	return p
}
