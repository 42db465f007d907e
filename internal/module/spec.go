// Package module implements the Ansible binary-module protocol in Go.
//
// Ansible runs a binary module with one argument: the path of a JSON file holding the task's
// options plus internal `_ansible_*` keys. Nothing is validated on the controller for binary
// modules, so this package does all of what AnsibleModule does for Python modules: argument
// spec validation and coercion, environment fallbacks, check and diff mode, no_log masking
// everywhere in the result, and exactly one JSON object on stdout.
package module

// Type names an option type, as Ansible's argument spec spells it.
type Type string

// Option types.
const (
	TypeStr, TypeInt, TypeBool, TypeFloat Type = "str", "int", "bool", "float"
	TypeList, TypeDict, TypePath, TypeRaw Type = "list", "dict", "path", "raw"
)

// Option describes one module option (or suboption).
type Option struct {
	Type     Type
	Required bool
	Default  any
	Choices  []any
	// Elements is the type of each element of a list.
	Elements Type
	// Options are the suboptions of a dict, or of each dict in a list (Elements: TypeDict).
	Options map[string]*Option
	Aliases []string
	// NoLog masks the value everywhere in the module's output.
	NoLog bool
	// EnvFallback names environment variables read, in order, when the option is not given.
	EnvFallback []string

	// Rules among the suboptions.
	MutuallyExclusive [][]string
	RequiredTogether  [][]string
	RequiredOneOf     [][]string
	RequiredIf        []RequiredIf
}

// RequiredIf says: when option Key equals Value, the options in Requires must be set
// (all of them, or at least one when Any is true).
type RequiredIf struct {
	Key      string
	Value    any
	Requires []string
	Any      bool
}

// Spec is a module's whole argument specification.
type Spec struct {
	Options           map[string]*Option
	MutuallyExclusive [][]string
	RequiredTogether  [][]string
	RequiredOneOf     [][]string
	RequiredIf        []RequiredIf
	SupportsCheckMode bool
}
