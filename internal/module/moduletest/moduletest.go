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

// Execute runs the module e with args and an empty environment. It fails the test first when
// e's options struct does not match its spec (a misspelt or missing option).
func Execute(t testing.TB, e module.Entry, args map[string]any) (map[string]any, int) {
	t.Helper()
	if err := e.Check(); err != nil {
		t.Fatalf("options struct and spec disagree: %v", err)
	}
	return module.Execute(WriteArgs(t, args), func(string) string { return "" }, e.Spec, e.Handler)
}

// With returns a copy of args with the key/value pairs kv set (a test's variation of a base task).
func With(args map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(args)+len(kv)/2)
	for k, v := range args {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}
