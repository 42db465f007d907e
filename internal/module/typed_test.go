package module

import (
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/argsfile"
)

// Check names every way an options struct can disagree with its spec, so a misspelt option
// fails the module's tests instead of reading "" at run time.
func TestCheckFindsMismatches(t *testing.T) {
	spec := Spec{Options: map[string]*Option{
		"state": {Type: TypeStr, Default: "present"},
		"count": {Type: TypeInt},
		"vms":   {Type: TypeList, Elements: TypeDict, Options: map[string]*Option{"cores": {Type: TypeInt}}},
		"tags":  {Type: TypeList, Elements: TypeStr},
	}}
	type vm struct {
		Cores *int `opt:"cores"`
	}
	type good struct {
		State Opt[string] `opt:"state"`
		Count *int        `json:"count,omitempty"` // a json tag names the option when there is no opt tag
		VMs   []vm        `opt:"vms"`
		Tags  []string    `opt:"tags"`
	}
	if err := Declare(spec, func(*Module, *good) (Result, error) { return Result{}, nil }).Check(); err != nil {
		t.Fatalf("matching struct refused: %v", err)
	}
	type badVM struct {
		Cores string `opt:"cores"`
	}
	type bad struct {
		State string   `opt:"stat"`
		Count bool     `opt:"count"`
		VMs   []badVM  `opt:"vms"`
		Tags  string   `opt:"tags"`
		Extra []string `opt:"extra"`
		Plain int
	}
	err := Declare(spec, func(*Module, *bad) (Result, error) { return Result{}, nil }).Check()
	if err == nil {
		t.Fatal("mismatching struct accepted")
	}
	for _, want := range []string{
		"stat: field of module.bad names no option",
		"state: option of the spec has no field",
		"count: a int option needs int, not bool",
		"vms[].cores: a int option needs int, not string",
		"tags: a list needs a slice, not string",
		"extra: field of module.bad names no option",
		"field module.bad.Plain has no opt (or json) tag",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if err := (Entry{Spec: spec, Handler: ok}).Check(); err == nil || !strings.Contains(err.Error(), "module.Declare") {
		t.Errorf("an untyped entry passed: %v", err)
	}
}

// A struct that disagrees with its spec fails the run with a message, never a panic.
func TestDecodeMismatchFailsTheRun(t *testing.T) {
	spec := Spec{Options: map[string]*Option{"count": {Type: TypeInt, Default: 1}}}
	type bad struct {
		Count string `opt:"count"`
	}
	e := Declare(spec, func(*Module, *bad) (Result, error) { return Result{Changed: true}, nil })
	res, code := Execute(argsfile.Write(t, map[string]any{}), noEnv, e.Spec, e.Handler)
	if msg, _ := res["msg"].(string); code != 1 || !strings.Contains(msg, "does not match its spec") {
		t.Fatalf("code %d res %v", code, res)
	}
}
