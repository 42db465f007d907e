// Package moduletest runs a module handler the way Ansible runs the binary, for tests: the task's
// options written to an args file, no environment, the result object back.
package moduletest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/deevnet/tenant/internal/module"
)

// WriteArgs writes args as Ansible writes a binary module's args file and returns its path.
func WriteArgs(t testing.TB, args map[string]any) string {
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

// Execute runs h against spec with args and an empty environment.
func Execute(t testing.TB, spec module.Spec, h module.Handler, args map[string]any) (map[string]any, int) {
	t.Helper()
	return module.Execute(WriteArgs(t, args), func(string) string { return "" }, spec, h)
}
