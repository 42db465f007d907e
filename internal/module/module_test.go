package module

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/argsfile"
)

func noEnv(string) string { return "" }

// run executes h against spec with args and returns the result object, re-encoded as JSON and
// decoded again, exactly as Ansible would read it.
func run(t *testing.T, spec Spec, args map[string]any, h Handler) (map[string]any, string) {
	t.Helper()
	res, code := Execute(argsfile.Write(t, args), noEnv, spec, h)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("result not JSON: %v", err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if failed, _ := back["failed"].(bool); failed != (code != 0) {
		t.Fatalf("exit code %d but failed=%v", code, back["failed"])
	}
	if _, ok := back["changed"].(bool); !ok {
		t.Fatalf("changed is not a boolean: %#v", back["changed"])
	}
	return back, string(b)
}

func ok(m *Module) (Result, error) { return Result{Values: map[string]any{"params": m.params}}, nil }

func TestCoercionLikeAnsible(t *testing.T) {
	spec := Spec{Options: map[string]*Option{
		"b1": {Type: TypeBool}, "b2": {Type: TypeBool}, "b3": {Type: TypeBool}, "b4": {Type: TypeBool},
		"i1": {Type: TypeInt}, "i2": {Type: TypeInt}, "i3": {Type: TypeInt},
		"f": {Type: TypeFloat}, "s": {Type: TypeStr},
		"l1": {Type: TypeList, Elements: TypeInt}, "l2": {Type: TypeList, Elements: TypeStr},
		"d1": {Type: TypeDict}, "d2": {Type: TypeDict}, "p": {Type: TypePath}, "r": {Type: TypeRaw},
	}}
	args := map[string]any{
		"b1": "yes", "b2": "False", "b3": 1, "b4": "on",
		"i1": "8", "i2": 8.0, "i3": " 12 ",
		"f": "1.5", "s": "plain",
		"l1": `[1, "2", 3]`, "l2": "a,b,c",
		"d1": `{"k": {"n": 1}}`, "d2": "a=1, b=2", "p": "~/x", "r": map[string]any{"n": 3},
	}
	type coerced struct {
		B1 bool           `opt:"b1"`
		B2 bool           `opt:"b2"`
		B3 bool           `opt:"b3"`
		B4 bool           `opt:"b4"`
		I1 int            `opt:"i1"`
		I2 int            `opt:"i2"`
		I3 int            `opt:"i3"`
		F  float64        `opt:"f"`
		S  string         `opt:"s"`
		L1 []int          `opt:"l1"`
		L2 []string       `opt:"l2"`
		D1 map[string]any `opt:"d1"`
		D2 map[string]any `opt:"d2"`
		P  string         `opt:"p"`
		R  any            `opt:"r"`
	}
	e := Declare(spec, func(m *Module, o *coerced) (Result, error) {
		got := coerced{B1: o.B1, B2: o.B2, B3: o.B3, B4: o.B4, I1: o.I1, I2: o.I2, I3: o.I3, F: o.F, S: o.S}
		if want := (coerced{B1: true, B3: true, B4: true, I1: 8, I2: 8, I3: 12, F: 1.5, S: "plain"}); !reflect.DeepEqual(got, want) {
			t.Errorf("scalars = %+v, want %+v", got, want)
		}
		if len(o.L1) != 3 || o.L1[1] != 2 {
			t.Errorf("l1 = %#v", o.L1)
		}
		if strings.Join(o.L2, "|") != "a|b|c" {
			t.Errorf("l2 = %#v", o.L2)
		}
		if inner, _ := o.D1["k"].(map[string]any); inner["n"] != 1 {
			t.Errorf("d1 = %#v", o.D1)
		}
		if o.D2["b"] != "2" {
			t.Errorf("d2 = %#v", o.D2)
		}
		if strings.HasPrefix(o.P, "~") {
			t.Errorf("path not expanded: %s", o.P)
		}
		if r, _ := o.R.(map[string]any); r["n"] != 3 {
			t.Errorf("raw = %#v", o.R)
		}
		return Result{}, nil
	})
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	res, _ := run(t, spec, args, e.Handler)
	if res["failed"] == true {
		t.Fatalf("failed: %v", res["msg"])
	}
}

func TestTypeErrorsNameTheField(t *testing.T) {
	spec := Spec{Options: map[string]*Option{"index": {Type: TypeInt}, "flag": {Type: TypeBool}}}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"index": "abc"}, "argument 'index' is of type str and we were unable to convert to int"},
		{map[string]any{"index": 1.5}, "argument 'index'"},
		{map[string]any{"flag": "maybe"}, `"maybe" is not a boolean`},
		{map[string]any{"index": []any{1}}, "a list cannot be converted to an int"},
	} {
		res, _ := run(t, spec, tc.args, ok)
		if res["failed"] != true || !strings.Contains(res["msg"].(string), tc.want) {
			t.Errorf("%v: msg %q, want it to contain %q", tc.args, res["msg"], tc.want)
		}
	}
}

func TestUnknownOptionsListTheValidOnes(t *testing.T) {
	spec := Spec{Options: map[string]*Option{"name": {Type: TypeStr, Aliases: []string{"tenant"}}, "index": {Type: TypeInt}}}
	res, _ := run(t, spec, map[string]any{"nmea": "x", "_ansible_check_mode": false, "_ansible_future_key": 1}, ok)
	msg, _ := res["msg"].(string)
	if !strings.Contains(msg, "Unsupported parameters for") || !strings.Contains(msg, "nmea") || !strings.Contains(msg, "index, name, tenant") {
		t.Fatalf("msg = %q", msg)
	}
	if strings.Contains(msg, "_ansible") {
		t.Fatalf("internal keys reported as unknown: %q", msg)
	}
}

func TestRequiredDefaultsChoicesAliases(t *testing.T) {
	spec := Spec{Options: map[string]*Option{
		"name":  {Type: TypeStr, Required: true, Aliases: []string{"tenant"}},
		"state": {Type: TypeStr, Default: "present", Choices: []any{"present", "absent"}},
		"vms":   {Type: TypeInt, Default: 1},
	}}
	res, _ := run(t, spec, map[string]any{}, ok)
	if res["msg"] != "missing required arguments: name" {
		t.Errorf("msg = %q", res["msg"])
	}
	type opts struct {
		Name  Opt[string] `opt:"name"`
		State Opt[string] `opt:"state"`
		VMs   int         `opt:"vms"`
	}
	res, _ = run(t, spec, map[string]any{"tenant": "tdemo"}, Declare(spec, func(m *Module, o *opts) (Result, error) {
		// Given by its alias counts as given; a default does not.
		if want := (opts{Name: Opt[string]{"tdemo", true}, State: Opt[string]{"present", false}, VMs: 1}); *o != want {
			t.Errorf("options = %+v, want %+v", *o, want)
		}
		return Result{}, nil
	}).Handler)
	if res["failed"] == true {
		t.Fatal(res["msg"])
	}
	res, _ = run(t, spec, map[string]any{"name": "x", "state": "gone"}, ok)
	if res["msg"] != "value of state must be one of: present, absent, got: gone" {
		t.Errorf("msg = %q", res["msg"])
	}
	res, _ = run(t, spec, map[string]any{"name": "x", "tenant": "y"}, ok)
	if !strings.Contains(res["msg"].(string), "both option 'name' and its alias 'tenant' are set") {
		t.Errorf("msg = %q", res["msg"])
	}
}

func TestCrossOptionRules(t *testing.T) {
	spec := Spec{
		Options: map[string]*Option{
			"a": {Type: TypeStr}, "b": {Type: TypeStr}, "c": {Type: TypeStr}, "d": {Type: TypeStr},
			"state": {Type: TypeStr, Default: "present"},
		},
		MutuallyExclusive: [][]string{{"a", "b"}},
		RequiredTogether:  [][]string{{"c", "d"}},
		RequiredOneOf:     [][]string{{"a", "b"}},
		RequiredIf:        []RequiredIf{{Key: "state", Value: "present", Requires: []string{"c", "d"}, Any: true}},
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"a": "1", "b": "2", "c": "x", "d": "y"}, "parameters are mutually exclusive: a|b"},
		{map[string]any{"a": "1", "c": "x"}, "parameters are required together: c, d"},
		{map[string]any{"c": "x", "d": "y"}, "one of the following is required: a, b"},
		{map[string]any{"a": "1"}, "state is present but any of the following are missing: c, d"},
		{map[string]any{"a": "1", "c": "x", "d": "y", "state": "absent"}, ""},
		{map[string]any{"a": "1", "state": "absent"}, ""},
	} {
		res, _ := run(t, spec, tc.args, ok)
		msg, _ := res["msg"].(string)
		if tc.want == "" {
			if res["failed"] == true {
				t.Errorf("%v: unexpected failure %q", tc.args, msg)
			}
			continue
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%v: msg %q, want %q", tc.args, msg, tc.want)
		}
	}
}

func TestSuboptions(t *testing.T) {
	spec := Spec{Options: map[string]*Option{
		"vms": {Type: TypeList, Elements: TypeDict, Options: map[string]*Option{
			"name":     {Type: TypeStr, Required: true},
			"cores":    {Type: TypeInt, Default: 2},
			"password": {Type: TypeStr, NoLog: true},
		}},
		"site": {Type: TypeDict, Options: map[string]*Option{"zone": {Type: TypeStr, Default: "mobile.deevnet.net"}}},
	}}
	type vm struct {
		Name     string   `opt:"name"`
		Cores    Opt[int] `opt:"cores"`
		Password *string  `opt:"password"`
	}
	type opts struct {
		VMs  []vm `opt:"vms"`
		Site *struct {
			Zone string `opt:"zone"`
		} `opt:"site"`
	}
	res, _ := run(t, spec, map[string]any{"vms": `[{"name": "a", "cores": "4"}, {"name": "b"}]`, "site": map[string]any{}}, Declare(spec, func(m *Module, o *opts) (Result, error) {
		// Set is tracked per suboption: a's cores were given, b's are the default.
		want := []vm{{Name: "a", Cores: Opt[int]{4, true}}, {Name: "b", Cores: Opt[int]{2, false}}}
		if !reflect.DeepEqual(o.VMs, want) {
			t.Errorf("vms = %+v, want %+v", o.VMs, want)
		}
		if o.Site == nil || o.Site.Zone != "mobile.deevnet.net" {
			t.Errorf("site = %#v", o.Site)
		}
		return Result{}, nil
	}).Handler)
	if res["failed"] == true {
		t.Fatal(res["msg"])
	}
	res, _ = run(t, spec, map[string]any{"vms": []any{map[string]any{"cores": 1, "colour": "red"}}}, ok)
	msg := res["msg"].(string)
	for _, want := range []string{"vms[0].colour", "missing required arguments: name (found in vms[0])"} {
		if !strings.Contains(msg, want) {
			t.Errorf("msg %q lacks %q", msg, want)
		}
	}
}

func TestEnvFallback(t *testing.T) {
	spec := Spec{Options: map[string]*Option{
		"api_host":         {Type: TypeStr, Required: true, EnvFallback: []string{"PROXMOX_HOST"}},
		"api_token_secret": {Type: TypeStr, NoLog: true, EnvFallback: []string{"PROXMOX_TOKEN_SECRET"}},
	}}
	env := map[string]string{"PROXMOX_HOST": "pve.example", "PROXMOX_TOKEN_SECRET": "s3cr3t-from-env"}
	res, code := Execute(argsfile.Write(t, map[string]any{}), func(k string) string { return env[k] }, spec, func(m *Module) (Result, error) {
		return Result{Msg: fmt.Sprint("connected with ", m.params["api_token_secret"])}, nil
	})
	if code != 0 {
		t.Fatal(res["msg"])
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "s3cr3t-from-env") {
		t.Fatalf("secret from environment leaked: %s", b)
	}
	if args := res["invocation"].(map[string]any)["module_args"].(map[string]any); args["api_host"] != "pve.example" {
		t.Fatalf("fallback not applied: %v", args)
	}
}

// The no_log value must not appear anywhere: msg, diff, warnings, nested values, invocation,
// even when the module fails with a message that quotes it.
func TestNoLogMaskedEverywhere(t *testing.T) {
	const secret = "hunter2-very-secret"
	spec := Spec{SupportsCheckMode: true, Options: map[string]*Option{
		"key_secret": {Type: TypeStr, NoLog: true},
		"vms":        {Type: TypeList, Elements: TypeDict, Options: map[string]*Option{"pw": {Type: TypeStr, NoLog: true}}},
	}}
	args := map[string]any{"key_secret": secret, "vms": []any{map[string]any{"pw": "nested-pw-123"}}, "_ansible_diff": true}
	handlers := map[string]Handler{
		"success": func(m *Module) (Result, error) {
			m.Warn("the key " + secret + " is weak")
			return Result{Changed: true, Msg: "used " + secret,
				Diffs:  []Diff{{Before: map[string]any{"k": secret}, After: "x nested-pw-123 y"}},
				Values: map[string]any{"nested": []any{map[string]any{secret: []string{"a" + secret}}}, "typed": struct{ S string }{secret}}}, nil
		},
		"failure": func(m *Module) (Result, error) {
			return Result{}, Fail("server said: bad key "+secret, map[string]any{"detail": secret})
		},
		"error": func(m *Module) (Result, error) { return Result{}, errors.New("wrapped: " + secret) },
		"panic": func(m *Module) (Result, error) { panic("boom " + secret) },
		"runtime": func(m *Module) (Result, error) {
			m.AddSecret("token-from-api")
			return Result{Msg: "got token-from-api"}, nil
		},
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			res, text := run(t, spec, args, h)
			for _, s := range []string{secret, "nested-pw-123", "token-from-api"} {
				if strings.Contains(text, s) {
					t.Fatalf("secret %q leaked: %s", s, text)
				}
			}
			inv := res["invocation"].(map[string]any)["module_args"].(map[string]any)
			if inv["key_secret"] != maskedParam {
				t.Fatalf("invocation key_secret = %v", inv["key_secret"])
			}
		})
	}
}

// A type error that quotes the value must not leak a no_log value either.
func TestNoLogMaskedInValidationErrors(t *testing.T) {
	spec := Spec{Options: map[string]*Option{"pin": {Type: TypeInt, NoLog: true}}}
	_, text := run(t, spec, map[string]any{"pin": "not-a-number-secret"}, ok)
	if strings.Contains(text, "not-a-number-secret") {
		t.Fatalf("leaked: %s", text)
	}
}

func TestCheckModeAndDiff(t *testing.T) {
	args := map[string]any{"_ansible_check_mode": true, "_ansible_diff": "yes"}
	res, _ := run(t, Spec{}, args, func(m *Module) (Result, error) {
		t.Fatal("handler ran in check mode without support")
		return Result{}, nil
	})
	if res["skipped"] != true || res["changed"] != false || !strings.Contains(res["msg"].(string), "does not support check mode") {
		t.Fatalf("res = %v", res)
	}
	res, _ = run(t, Spec{SupportsCheckMode: true}, args, func(m *Module) (Result, error) {
		if !m.CheckMode || !m.DiffMode {
			t.Fatalf("modes not read: %+v", m)
		}
		return Result{Changed: true, Diffs: []Diff{{Before: "a", After: "b"}, {Before: "c", After: "d"}}}, nil
	})
	if l, ok := res["diff"].([]any); !ok || len(l) != 2 {
		t.Fatalf("diff = %#v", res["diff"])
	}
	res, _ = run(t, Spec{}, map[string]any{}, func(m *Module) (Result, error) {
		return Result{Changed: true, Diffs: []Diff{{Before: "a", After: "b"}}}, nil
	})
	if _, present := res["diff"]; present {
		t.Fatal("diff emitted without diff mode")
	}
}

func TestWarningsAndDeprecationsAreLists(t *testing.T) {
	res, _ := run(t, Spec{Options: map[string]*Option{"s": {Type: TypeStr}}}, map[string]any{"s": 5}, func(m *Module) (Result, error) {
		m.Deprecate("old option", "1.0.0")
		return Result{}, nil
	})
	if w, ok := res["warnings"].([]any); !ok || len(w) != 1 || !strings.Contains(w[0].(string), "converted to the string") {
		t.Fatalf("warnings = %#v", res["warnings"])
	}
	if d, ok := res["deprecations"].([]any); !ok || len(d) != 1 {
		t.Fatalf("deprecations = %#v", res["deprecations"])
	}
}

func TestHandlerCannotBreakTheBooleans(t *testing.T) {
	res, _ := run(t, Spec{}, map[string]any{}, func(m *Module) (Result, error) {
		return Result{Values: map[string]any{"failed": "no", "changed": "maybe"}}, nil
	})
	if res["failed"] != false || res["changed"] != false {
		t.Fatalf("res = %v", res)
	}
}

func TestBadArgsFiles(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{"empty": "", "array": "[1]", "null": "null", "garbage": "{nope", "trailing": "{} {}"}
	for name, content := range cases {
		p := filepath.Join(dir, name)
		_ = os.WriteFile(p, []byte(content), 0o600)
		res, code := Execute(p, noEnv, Spec{}, ok)
		if code != 1 || res["failed"] != true {
			t.Errorf("%s: code %d res %v", name, code, res)
		}
	}
	res, code := Execute(filepath.Join(dir, "missing"), noEnv, Spec{}, ok)
	if code != 1 || !strings.Contains(res["msg"].(string), "reading the argument file") {
		t.Errorf("missing: %v", res)
	}
	// The wrapped form some harnesses write.
	p := argsfile.Write(t, map[string]any{"ANSIBLE_MODULE_ARGS": map[string]any{"s": "v"}})
	res, code = Execute(p, noEnv, Spec{Options: map[string]*Option{"s": {}}}, ok)
	if code != 0 {
		t.Errorf("wrapped: %v", res)
	}
}

func FuzzArgs(f *testing.F) {
	f.Add([]byte(`{"name": "tdemo", "index": "1", "vms": [{"cores": "2"}], "flag": "yes"}`))
	f.Add([]byte(`{"index": 1e400}`))
	f.Add([]byte(`{"vms": "[{\"cores\": 1}]", "site": "a=1,b"}`))
	f.Add([]byte(`{"ANSIBLE_MODULE_ARGS": {"secret": 7}}`))
	spec := Spec{Options: map[string]*Option{
		"name":   {Type: TypeStr, Aliases: []string{"tenant"}},
		"index":  {Type: TypeInt},
		"flag":   {Type: TypeBool},
		"ratio":  {Type: TypeFloat},
		"path":   {Type: TypePath},
		"raw":    {Type: TypeRaw},
		"secret": {Type: TypeStr, NoLog: true},
		"site":   {Type: TypeDict},
		"vms": {Type: TypeList, Elements: TypeDict, Options: map[string]*Option{
			"cores": {Type: TypeInt, Default: 1, Choices: []any{1, 2, 4}},
		}},
		"tags": {Type: TypeList, Elements: TypeStr},
	}}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "args")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		res, code := Execute(p, noEnv, spec, func(m *Module) (Result, error) { return Result{Values: map[string]any{"p": m.params}}, nil })
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("result not encodable: %v", err)
		}
		if res["failed"] != (code != 0) {
			t.Fatalf("failed %v, code %d", res["failed"], code)
		}
		if _, ok := res["changed"].(bool); !ok {
			t.Fatalf("changed not bool")
		}
	})
}
