// Package moduletest runs a module handler the way Ansible runs the binary, for tests: the task's
// options written to an args file, no environment, the result object back.
package moduletest

import (
	"testing"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/module/argsfile"
)

// Execute runs the module e with args and an empty environment. It fails the test first when
// e's options struct does not match its spec (a misspelt or missing option).
func Execute(t testing.TB, e module.Entry, args map[string]any) (map[string]any, int) {
	t.Helper()
	if err := e.Check(); err != nil {
		t.Fatalf("options struct and spec disagree: %v", err)
	}
	return module.Execute(argsfile.Write(t, args), func(string) string { return "" }, e.Spec, e.Handler)
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
