package module

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
)

// Diff is one before/after pair, in the shape Ansible's diff callback prints.
type Diff struct {
	Before       any    `json:"before"`
	After        any    `json:"after"`
	BeforeHeader string `json:"before_header,omitempty"`
	AfterHeader  string `json:"after_header,omitempty"`
}

// Result is what a handler returns on success.
type Result struct {
	Changed bool
	Msg     string
	// Diffs are emitted only in diff mode: one as a dict, several as a list.
	Diffs []Diff
	// Values are merged at the top level of the result.
	Values map[string]any
}

// Handler does the module's work.
type Handler func(m *Module) (Result, error)

// failure is an error that carries extra return values.
type failure struct {
	msg    string
	values map[string]any
}

func (f *failure) Error() string { return f.msg }

// Fail builds an error that fails the module with msg and the extra values.
func Fail(msg string, values map[string]any) error { return &failure{msg: msg, values: values} }

// Run is a module's whole main(): it reads the args file named by os.Args[1], validates it, calls
// h, prints exactly one JSON object on stdout and exits 0, or 1 when the module failed.
func Run(spec Spec, h Handler) {
	Main("", func(string) (Entry, bool) { return Entry{Spec: spec, Handler: h}, true })
}

// Entry is one module of a binary: its argument spec and its handler.
type Entry struct {
	Spec    Spec
	Handler Handler
	// Options is the struct type the handler reads its options from (Declare sets it).
	Options reflect.Type
}

// SelectKey is the argument by which the action plugins (GoModuleAction, plugins/plugin_utils/go_module.py)
// names the module a binary is to be, as "<namespace>.<collection>.<module>"; one binary holds
// several modules (docs/adr/0011-binary-selection.md). It is never a module option.
const SelectKey = "_deevnet_tenant_module"

// Main is the main() of a binary holding one or more modules. The module is the one SelectKey
// names in the args file, else def; lookup gives its spec and handler. The protocol is Run's.
func Main(def string, lookup func(name string) (Entry, bool)) {
	// Anything a library prints to stdout would corrupt the one JSON object Ansible reads, so
	// stdout is handed only to the final write.
	stdout := os.Stdout
	os.Stdout = os.Stderr
	argsFile := ""
	if len(os.Args) > 1 {
		argsFile = os.Args[1]
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	result, code := execute(ctx, argsFile, os.Getenv, def, lookup)
	stop()
	out, err := json.Marshal(result)
	if err != nil {
		out = []byte(`{"failed": true, "changed": false, "msg": "module result could not be encoded as JSON"}`)
		code = 1
	}
	_, _ = stdout.Write(append(out, '\n'))
	os.Exit(code)
}

// Execute is Run without the process, for tests: it returns the result object and exit code.
func Execute(argsFile string, getenv func(string) string, spec Spec, h Handler) (map[string]any, int) {
	return execute(context.Background(), argsFile, getenv, "", func(string) (Entry, bool) { return Entry{Spec: spec, Handler: h}, true })
}

// ExecuteNamed is Main without the process, for tests.
func ExecuteNamed(argsFile string, getenv func(string) string, def string, lookup func(string) (Entry, bool)) (map[string]any, int) {
	return execute(context.Background(), argsFile, getenv, def, lookup)
}

// selectModule takes SelectKey out of the arguments and returns the module's name (as the task
// named it, for messages) and its entry.
func selectModule(raw map[string]any, def string, lookup func(string) (Entry, bool)) (string, Entry, error) {
	full, leaf := "", def
	if v, given := raw[SelectKey]; given {
		s, ok := v.(string)
		if !ok || s == "" {
			return "", Entry{}, fmt.Errorf("%s must name a module, got %v", SelectKey, v)
		}
		full, leaf = s, s[strings.LastIndex(s, ".")+1:]
		delete(raw, SelectKey)
	}
	e, ok := lookup(leaf)
	switch {
	case ok && e.Handler != nil:
		return full, e, nil
	case full == "":
		return "", Entry{}, fmt.Errorf("this binary holds several modules: the argument %s must name one (each module's action plugin sets it: plugins/plugin_utils/go_module.py)", SelectKey)
	default:
		return "", Entry{}, fmt.Errorf("this binary has no module %q", full)
	}
}

func execute(ctx context.Context, argsFile string, getenv func(string) string, def string, lookup func(string) (Entry, bool)) (result map[string]any, code int) {
	name := moduleName()
	m := &Module{Name: name, ctx: ctx, mask: newMasker(nil)}
	var spec Spec
	defer func() {
		// A panic is a failed result, never a stack trace on stdout.
		if r := recover(); r != nil {
			result, code = m.finish(spec, nil, fmt.Errorf("module %s failed unexpectedly: %v", name, r))
		}
	}()

	raw, err := readArgs(argsFile)
	if err != nil {
		return m.finish(spec, nil, err)
	}
	if n, ok := raw["_ansible_module_name"].(string); ok && n != "" {
		m.Name = n
	}
	selected, entry, err := selectModule(raw, def, lookup)
	if err != nil {
		return m.finish(spec, nil, err)
	}
	if selected != "" {
		// Ansible names the binary file (…__bin.tenant_modules_linux_amd64), not the module.
		m.Name = selected
	}
	spec, h := entry.Spec, entry.Handler
	m.CheckMode = flag(raw, "_ansible_check_mode")
	m.DiffMode = flag(raw, "_ansible_diff")
	if v, err := toInt(raw["_ansible_verbosity"]); err == nil {
		m.Verbosity = v
	}
	m.AnsibleVersion, _ = raw["_ansible_version"].(string)
	m.TmpDir, _ = raw["_ansible_tmpdir"].(string)

	v := &validator{module: m.Name, getenv: getenv, given: map[string]bool{}}
	params := v.validateOptions(spec.Options, raw, "", spec.rules())
	m.mask.add(v.secrets...)
	m.warnings = append(m.warnings, v.warnings...)
	m.params = params
	m.given = v.given
	if len(v.errs) > 0 {
		return m.finish(spec, nil, errors.New(joinErrors(v.errs)))
	}
	if m.CheckMode && !spec.SupportsCheckMode {
		// The controller never refuses check mode for a binary module, so the module does.
		return m.finish(spec, &Result{Values: map[string]any{"skipped": true}, Msg: fmt.Sprintf("remote module (%s) does not support check mode", m.Name)}, nil)
	}
	res, err := h(m)
	if err != nil {
		return m.finish(spec, &res, err)
	}
	return m.finish(spec, &res, nil)
}

func joinErrors(errs []string) string {
	out := errs[0]
	for _, e := range errs[1:] {
		out += "; " + e
	}
	return out
}

// finish builds the result object, masking every secret in every part of it.
func (m *Module) finish(spec Spec, res *Result, err error) (map[string]any, int) {
	out := map[string]any{"changed": false, "failed": false}
	if res != nil {
		for k, v := range res.Values {
			out[k] = v
		}
		out["changed"] = res.Changed
		if res.Msg != "" {
			out["msg"] = res.Msg
		}
		if m.DiffMode && len(res.Diffs) > 0 {
			if len(res.Diffs) == 1 {
				out["diff"] = res.Diffs[0]
			} else {
				out["diff"] = res.Diffs
			}
		}
	}
	code := 0
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			for k, v := range f.values {
				out[k] = v
			}
		}
		out["failed"] = true
		out["msg"] = err.Error()
		code = 1
		// A failed write may still have changed something; a handler says so in res.Changed.
	}
	if len(m.warnings) > 0 {
		out["warnings"] = m.warnings
	}
	if len(m.deprecations) > 0 {
		out["deprecations"] = m.deprecations
	}
	// Round-trip through JSON so structs and typed slices are masked like everything else.
	generic := jsonRoundTrip(out)
	masked, ok := m.mask.value(normalizeNumbers(generic)).(map[string]any)
	if !ok {
		masked = map[string]any{"failed": true, "changed": false, "msg": "module result is not an object"}
		code = 1
	}
	if m.params != nil {
		masked["invocation"] = map[string]any{"module_args": m.mask.invocation(spec.Options, m.params)}
	}
	// failed and changed are booleans whatever a handler put in Values.
	masked["failed"] = code != 0
	if _, isBool := masked["changed"].(bool); !isBool {
		masked["changed"] = false
	}
	return masked, code
}

func flag(raw map[string]any, key string) bool {
	b, err := toBool(raw[key])
	return err == nil && b
}

// readArgs reads the args file. Ansible writes the options as a flat JSON object; the wrapped
// form {"ANSIBLE_MODULE_ARGS": {...}} (used by some test harnesses) is accepted too.
func readArgs(path string) (map[string]any, error) {
	if path == "" {
		return nil, errors.New("no argument file given: Ansible runs a binary module with the path of a JSON file of its options")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the argument file: %w", err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the argument file: %w", err)
	}
	var raw map[string]any
	if err := decodeJSON(data, &raw); err != nil {
		return nil, fmt.Errorf("the argument file is not a JSON object: %w", err)
	}
	if raw == nil {
		return nil, errors.New("the argument file is not a JSON object: it holds null")
	}
	if inner, ok := raw["ANSIBLE_MODULE_ARGS"].(map[string]any); ok && len(raw) == 1 {
		raw = inner
	}
	return raw, nil
}

func moduleName() string {
	if len(os.Args) > 0 && os.Args[0] != "" {
		return filepath.Base(os.Args[0])
	}
	return "module"
}
