package module

import "context"

// Module is what a handler sees: the task's modes. Its options reach it as a struct (Declare).
type Module struct {
	CheckMode      bool
	DiffMode       bool
	Verbosity      int
	AnsibleVersion string
	TmpDir         string
	// Name is the module's name as Ansible called it (for messages).
	Name string

	// params holds every option of the spec under its canonical name, coerced and defaulted:
	// string, int, bool, float64, []any, map[string]any or nil. Handlers read the struct
	// Declare decodes from it, never the map, so an option's name is checked once (Entry.Check).
	params       map[string]any
	ctx          context.Context
	given        map[string]bool
	warnings     []string
	deprecations []map[string]any
	mask         *masker
}

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
