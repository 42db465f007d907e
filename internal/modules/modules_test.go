package modules

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/module/argsfile"
)

func run(t *testing.T, def string, args map[string]any) map[string]any {
	t.Helper()
	res, _ := module.ExecuteNamed(argsfile.Write(t, args), func(string) string { return "" }, def, Lookup)
	return res
}

// Every shipped doc stub but transit_route's (its own binary) is a module of the multi-call binary.
func TestRegistryMatchesDocStubs(t *testing.T) {
	stubs, err := filepath.Glob(filepath.Join("..", "..", "plugins", "modules", "*.py"))
	if err != nil || len(stubs) == 0 {
		t.Fatalf("no doc stubs found: %v", err)
	}
	var want []string
	for _, s := range stubs {
		if n := strings.TrimSuffix(filepath.Base(s), ".py"); n != "transit_route" {
			want = append(want, n)
		}
	}
	sort.Strings(want)
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("registry holds %v, doc stubs %v", got, want)
	}
	for _, n := range Names() {
		e, ok := Lookup(n)
		if !ok || e.Handler == nil || len(e.Spec.Options) == 0 {
			t.Errorf("%s: entry %+v", n, e)
		}
		// Every module reads typed options, and its struct names exactly its spec's options.
		if err := e.Check(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

func TestSelectKeyPicksTheModule(t *testing.T) {
	res := run(t, "", map[string]any{module.SelectKey: "deevnet.tenant.tenant_plan", "name": "tdemo", "index": 1})
	if res["failed"] != false || res["tenant"] == nil {
		t.Fatalf("res = %v", res)
	}
	if inv := res["invocation"].(map[string]any)["module_args"].(map[string]any); inv[module.SelectKey] != nil {
		t.Fatalf("the selector leaked into the invocation: %v", inv)
	}
	// Messages name the module as the task did, not the binary Ansible ran.
	res = run(t, "", map[string]any{module.SelectKey: "deevnet.tenant.tenant_plan", "_ansible_module_name": "deevnet.tenant.__bin.tenant_modules_linux_amd64", "nope": 1})
	if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, "deevnet.tenant.tenant_plan") || strings.Contains(msg, "__bin") {
		t.Fatalf("res = %v", res)
	}
}

func TestSelectionErrors(t *testing.T) {
	for _, tc := range []struct {
		def  string
		args map[string]any
		want string
	}{
		{"", map[string]any{"name": "tdemo", "index": 1}, "must name one"},
		{"", map[string]any{module.SelectKey: "deevnet.tenant.transit_route"}, `no module "deevnet.tenant.transit_route"`},
		{"", map[string]any{module.SelectKey: 7}, "must name a module"},
		// A single-module main refuses to be another module.
		{"tenant_plan", map[string]any{module.SelectKey: "deevnet.tenant.tenant_vm_typo"}, "no module"},
	} {
		res := run(t, tc.def, tc.args)
		if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, tc.want) {
			t.Errorf("def %q args %v: res = %v, want %q", tc.def, tc.args, res, tc.want)
		}
	}
	// Without the selector a cmd/<module> main is its default module.
	if res := run(t, "tenant_plan", map[string]any{"name": "tdemo", "index": 1}); res["failed"] != false {
		t.Fatalf("default module: %v", res)
	}
}

// Every import points down: the module protocol (internal/module/...) imports none of the domain
// packages, only the mains in cmd/ import this package, which imports all of them, and the
// simulator (internal/pvesim/...) is imported only by its own main and by tests that start it:
// what it shares with shipped code (the PVE schema) lives below it, in internal/pveschema.
func TestImportsPointDown(t *testing.T) {
	const self = "github.com/deevnet/tenant/internal/modules"
	const proto = "github.com/deevnet/tenant/internal/module"
	const sim = "github.com/deevnet/tenant/internal/pvesim"
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".venv" || d.Name() == ".venv-oldest") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if p == self && !strings.HasPrefix(rel, "cmd/") && !strings.HasPrefix(rel, "internal/modules/") {
				t.Errorf("%s imports %s: only cmd/ may", rel, p)
			}
			if strings.HasPrefix(rel, "internal/module/") && strings.HasPrefix(p, "github.com/deevnet/tenant/") &&
				p != proto && !strings.HasPrefix(p, proto+"/") {
				t.Errorf("%s (the module protocol) imports %s, a package above it", rel, p)
			}
			if (p == sim || strings.HasPrefix(p, sim+"/")) && !strings.HasPrefix(rel, "internal/pvesim/") &&
				!strings.HasPrefix(rel, "cmd/pvesim/") && !strings.HasSuffix(rel, "_test.go") {
				t.Errorf("%s imports %s: only cmd/pvesim and tests may import the simulator", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
