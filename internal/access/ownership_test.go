package access

import (
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
	"github.com/deevnet/tenant/internal/sdn"
)

// runOther executes another module of the collection with the root token (builds what a
// tenant owns, so that the access module has something to be refused on).
func runOther(t *testing.T, srv *pvesim.Server, mod module.Entry, args map[string]any) {
	t.Helper()
	if res, code := runAsRoot(t, srv, mod, args); code != 0 {
		t.Fatalf("setup %v: %v", args, res)
	}
}

// accessRun runs the access module with the root token, for pvesimtest's refusal checks.
func accessRun(srv *pvesim.Server) pvesimtest.RunFunc {
	return func(t testing.TB, args map[string]any) (map[string]any, int) {
		return runAsRoot(t, srv, Module(), args)
	}
}

// refused runs the access module, wants it failed with field in msg, and 0 writes attempted.
func refused(t *testing.T, srv *pvesim.Server, args map[string]any, field string) {
	t.Helper()
	pvesimtest.Refused(t, srv, args, field, accessRun(srv))
}

// A tenant given another tenant's index is refused before any write: once the other tenant's
// VRF exists (its VNets' ownership marks), and already when only its access objects exist.
func TestCrossTenantGrantRefused(t *testing.T) {
	srv := startSim(t)
	if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1}); res["failed"] == true {
		t.Fatalf("onboard tdemo: %v", res)
	}
	refused(t, srv, map[string]any{"name": "tother", "index": 1}, "index")
	refused(t, srv, map[string]any{"name": "tother", "index": 1, "_ansible_check_mode": true}, "index")

	runOther(t, srv, sdn.FabricModule(), map[string]any{
		"nodes": []any{map[string]any{"name": "dv02hyp002p02", "interfaces": []any{"vmbr0.51"}}}, "apply": true})
	runOther(t, srv, sdn.VRFModule(), map[string]any{"name": "tdemo", "index": 1, "apply": true})
	refused(t, srv, map[string]any{"name": "tother", "index": 1}, "index: 1 is tenant tdemo's")

	// Without tdemo's access objects the VRF's marks alone refuse it.
	if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1, "state": "absent"}); res["failed"] == true {
		t.Fatalf("remove tdemo's access: %v", res)
	}
	refused(t, srv, map[string]any{"name": "tother", "index": 1}, `its vnet tn01v0 is marked "tenant-tdemo"`)

	// tdemo itself and tother on its own index are fine.
	for _, args := range []map[string]any{{"name": "tdemo", "index": 1}, {"name": "tother", "index": 2}} {
		if res := run(t, srv, args); res["failed"] == true {
			t.Fatalf("%v: %v", args, res)
		}
	}
}

// ACL paths only on objects that exist and are shared: the template, the storages, the bridges.
func TestGrantTargetsChecked(t *testing.T) {
	cfg := pvesim.DefaultConfig()
	cfg.Templates = append(cfg.Templates,
		pvesim.TemplateConfig{VMID: 9100, Node: "dv02hyp002p02", Name: "plain-vm", Config: map[string]string{"memory": "512"}},
		pvesim.TemplateConfig{VMID: 9200, Node: "dv02hyp002p02", Name: "tdemo-golden", Template: true, Pool: "tenant-tdemo",
			Config: map[string]string{"memory": "512", "template": "1"}},
		// In tdemo's pool, tagged as tother's: tdemo's token can set any tag, so the pool decides.
		pvesim.TemplateConfig{VMID: 10310, Node: "dv02hyp002p02", Name: "tdemo-stray", Pool: "tenant-tdemo",
			Config: map[string]string{"memory": "512", "tags": "tenant-tother"}},
		// Tagged as tdemo's, in no pool: a tag alone makes nobody's template.
		pvesim.TemplateConfig{VMID: 9300, Node: "dv02hyp002p02", Name: "tagged-only", Template: true,
			Config: map[string]string{"memory": "512", "template": "1", "tags": "tenant-tdemo"}})
	srv, _ := pvesimtest.Start(t, cfg)
	base := func(k string, v any) map[string]any { return map[string]any{"name": "tother", "index": 2, k: v} }
	refused(t, srv, base("template", 99999), "template")
	refused(t, srv, base("template", 9100), "template")
	refused(t, srv, base("template", 9200), "template")
	refused(t, srv, base("storages", []any{"nosuchstorage"}), "storages[0]")
	refused(t, srv, base("storages", []any{"local-lvm", "x;y"}), "storages[1]")
	refused(t, srv, base("bridges", []any{"vm br0;x"}), "bridges[0]")
	refused(t, srv, base("bridges", []any{"vmbr0", ""}), "bridges[1]")
	refused(t, srv, base("template", 42), "template")
	// A guest of tdemo's in index 3's vmid range: index 3 is not free for tother.
	refused(t, srv, map[string]any{"name": "tother", "index": 3}, `index: vmid 10310 ("tdemo-stray") in index 3's range belongs to tenant tdemo`)
	if res := run(t, srv, map[string]any{"name": "tother", "index": 2, "template": 9300}); res["failed"] == true {
		t.Fatalf("a template tagged tenant-tdemo in no pool is shared: %v", res)
	}
	if res := run(t, srv, map[string]any{"name": "tother", "index": 2}); res["failed"] == true {
		t.Fatalf("defaults: %v", res)
	}
}

// Every refused input fails naming its field, with 0 writes sent to PVE.
func TestBadInput(t *testing.T) {
	srv := startSim(t)
	if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1}); res["failed"] == true {
		t.Fatalf("onboard tdemo: %v", res)
	}
	cases := append(pvesimtest.BadConnections(t),
		pvesimtest.Bad("another tenant's index", map[string]any{"index": 1}, "index"),
		pvesimtest.Bad("index 0 (the reference tenant)", map[string]any{"index": 0}, "index"),
		pvesimtest.Bad("index 64", map[string]any{"index": 64}, "index"),
		pvesimtest.Bad("index not a number", map[string]any{"index": "two"}, "index"),
		pvesimtest.Bad("name upper case", map[string]any{"name": "TOther"}, "name"),
		pvesimtest.Bad("name too long", map[string]any{"name": "t" + strings.Repeat("x", 20)}, "name"),
		pvesimtest.Bad("tdemo under another index", map[string]any{"name": "tdemo", "index": 3}, "index"),
		pvesimtest.Bad("template missing", map[string]any{"template": 99999}, "template"),
		pvesimtest.Bad("template below 100", map[string]any{"template": 7}, "template"),
		pvesimtest.Bad("storage missing", map[string]any{"storages": []any{"nosuchstorage"}}, "storages[0]"),
		pvesimtest.Bad("storage id format", map[string]any{"storages": []any{"a b"}}, "storages[0]"),
		pvesimtest.Bad("bridge id format", map[string]any{"bridges": []any{"vm br0;x"}}, "bridges[0]"),
		pvesimtest.Bad("bridge empty", map[string]any{"bridges": []any{""}}, "bridges[0]"),
		pvesimtest.Bad("state unknown", map[string]any{"state": "gone"}, "state"),
		pvesimtest.Bad("privsep not a bool", map[string]any{"privsep": "maybe"}, "privsep"),
		pvesimtest.Bad("unknown option", map[string]any{"acl": []any{"/"}}, "acl"),
		pvesimtest.Bad("site not a dict", map[string]any{"site": "x"}, "site"),
	)
	pvesimtest.RefuseAll(t, srv, map[string]any{"name": "tother", "index": 2}, cases, accessRun(srv))
}
