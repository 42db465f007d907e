package module

import (
	"context"
	"fmt"
)

// Module is what a handler sees: validated parameters and the task's modes.
type Module struct {
	// Params holds every option of the spec under its canonical name, coerced and defaulted.
	// Values are string, int, bool, float64, []any, map[string]any or nil.
	Params         map[string]any
	CheckMode      bool
	DiffMode       bool
	Verbosity      int
	AnsibleVersion string
	TmpDir         string
	// Name is the module's name as Ansible called it (for messages).
	Name string

	ctx          context.Context
	given        map[string]bool
	warnings     []string
	deprecations []map[string]any
	mask         *masker
}

// Str returns a string option ("" when unset).
func (m *Module) Str(name string) string {
	s, _ := m.Params[name].(string)
	return s
}

// Int returns an int option (0 when unset).
func (m *Module) Int(name string) int {
	i, _ := m.Params[name].(int)
	return i
}

// Bool returns a bool option (false when unset).
func (m *Module) Bool(name string) bool {
	b, _ := m.Params[name].(bool)
	return b
}

// Float returns a float option (0 when unset).
func (m *Module) Float(name string) float64 {
	f, _ := m.Params[name].(float64)
	return f
}

// List returns a list option (nil when unset).
func (m *Module) List(name string) []any {
	l, _ := m.Params[name].([]any)
	return l
}

// StrList returns a list option's elements as strings.
func (m *Module) StrList(name string) []string {
	l := m.List(name)
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		} else {
			out = append(out, fmt.Sprint(e))
		}
	}
	return out
}

// Dict returns a dict option (nil when unset).
func (m *Module) Dict(name string) map[string]any {
	d, _ := m.Params[name].(map[string]any)
	return d
}

// IsSet reports whether the user gave the option (directly, by alias or by environment
// fallback), as opposed to its default.
func (m *Module) IsSet(name string) bool { return m.given[name] }

// Warn adds a warning to the result.
func (m *Module) Warn(msg string) { m.warnings = append(m.warnings, msg) }

// Deprecate adds a deprecation to the result.
func (m *Module) Deprecate(msg, version string) {
	m.deprecations = append(m.deprecations, map[string]any{"msg": msg, "version": version, "collection_name": "deevnet.tenant"})
}

// AddSecret registers values learned at run time (a token secret read from an API, say) that
// must be masked like no_log options.
func (m *Module) AddSecret(values ...string) { m.mask.add(values...) }

// Context is cancelled when the module receives SIGTERM or SIGINT.
func (m *Module) Context() context.Context {
	if m.ctx == nil {
		return context.Background()
	}
	return m.ctx
}
