package vm_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// tenantsOf lists n tenants with count VMs each, as tenant_vm's tenants option takes them:
// t02 (index 2) to t<n+1> (index 1 is newSim's tdemo).
func tenantsOf(n, count int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("t%02d", i+2), "index": i + 2, "count": count}
	}
	return out
}

// many is a simulator holding n tenants' pools and VNets beside tdemo's.
func many(t *testing.T, n int) *simEnv {
	t.Helper()
	e := newSim(t)
	for i := 2; i <= n+1; i++ {
		e.tenantInfra(fmt.Sprintf("tenant-t%02d", i), fmt.Sprintf("tn%02d", i), fmt.Sprintf("tn%02dv0", i), 20000+16*i)
	}
	e.srv.ResetStats()
	return e
}

// Run without name and index (newSim's run sets them for one tenant).
func (e *simEnv) runMany(args map[string]any, check bool) (map[string]any, int) {
	e.t.Helper()
	all := map[string]any{"name": nil, "index": nil}
	for k, v := range args {
		all[k] = v
	}
	return e.run(all, check, true)
}

// tenants: one run converges each tenant's VMs as a run per tenant does (same VMs, same
// configs), and its no-op reads the resources and the nodes once, each VM's pending config once.
func TestTenantsConvergeAsOneRunPerTenant(t *testing.T) {
	const n, count = 3, 2
	one, all := many(t, n), many(t, n)
	for _, tn := range tenantsOf(n, count) {
		m := tn.(map[string]any)
		if res, code := one.run(map[string]any{"name": m["name"], "index": m["index"], "count": count, "cores": 2}, false, false); code != 0 {
			t.Fatalf("%s: %v", m["name"], res["msg"])
		}
	}
	args := map[string]any{"tenants": tenantsOf(n, count), "cores": 2}
	res, code := all.runMany(args, true)
	if code != 0 || res["changed"] != true || all.srv.Stats().Writes != 0 {
		t.Fatalf("check mode: code %d, %v, %d writes", code, res["msg"], all.srv.Stats().Writes)
	}
	res, code = all.runMany(args, false)
	if code != 0 || res["changed"] != true || len(vmsOf(t, res)) != n*count {
		t.Fatalf("first run: code %d, %v", code, res)
	}
	for i := 2; i <= n+1; i++ {
		for k := 1; k <= count; k++ {
			vmid := vmidOf(t, one, fmt.Sprintf("t%02d-%d", i, k))
			if vmid != vmidOf(t, all, fmt.Sprintf("t%02d-%d", i, k)) {
				t.Fatalf("t%02d-%d has another vmid", i, k)
			}
			a, b := one.config(vmid), all.config(vmid)
			for _, c := range []map[string]any{a, b} {
				delete(c, "digest")
				delete(c, "net0") // the MAC is generated
				delete(c, "vmgenid")
				delete(c, "smbios1")
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("vmid %d: one run per tenant made %v, tenants made %v", vmid, a, b)
			}
		}
	}
	all.srv.ResetStats()
	res, code = all.runMany(args, false)
	s := all.srv.Stats()
	if code != 0 || res["changed"] != false || s.Writes != 0 {
		t.Fatalf("no-op: code %d, changed %v, %d writes", code, res["changed"], s.Writes)
	}
	want := map[string]int{"GET /cluster/resources": 1, "GET /nodes": 1, "GET /nodes/{node}/qemu/{vmid}/pending": n * count}
	if !reflect.DeepEqual(s.Requests, want) {
		t.Errorf("no-op requests %v, want %v", s.Requests, want)
	}
}

func vmidOf(t *testing.T, e *simEnv, name string) int {
	t.Helper()
	var list []map[string]any
	e.must(e.root.Get(t.Context(), "/cluster/resources", nil, &list))
	for _, r := range list {
		if r["name"] == name {
			return int(r["vmid"].(float64))
		}
	}
	t.Fatalf("no VM %s", name)
	return 0
}

// Bad tenants lists are refused before anything is read, naming the entry.
func TestTenantsRefused(t *testing.T) {
	e := many(t, 2)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"tenants": []any{map[string]any{"name": "t02", "index": 2, "count": 1}, map[string]any{"name": "t03", "index": 2, "count": 1}}},
			"tenants[1].index: 2 is also tenants[0]'s (t02)"},
		{map[string]any{"tenants": []any{map[string]any{"name": "t02", "index": 2, "count": 1}, map[string]any{"name": "t02", "index": 3, "count": 1}}},
			"tenants[1].name: t02 is also tenants[0]'s"},
		{map[string]any{"tenants": []any{map[string]any{"name": "t02", "index": 2, "count": 1}, map[string]any{"name": "t03", "index": 3, "count": -1}}},
			"tenants[1] (t03): count -1: must be 0 or more"},
		{map[string]any{"tenants": []any{map[string]any{"name": "t01", "index": 1}}}, "one of the following is required: vms, count (found in tenants[0])"},
		{map[string]any{"tenants": tenantsOf(1, 1), "name": "t01"}, "parameters are mutually exclusive: name|tenants"},
		{map[string]any{"tenants": tenantsOf(1, 1), "count": 2}, "parameters are mutually exclusive: count|tenants"},
		{map[string]any{"name": "t01", "count": 1}, "one of the following is required: index, tenants"},
	} {
		e.srv.ResetStats()
		res, code := e.runMany(c.args, false)
		msg, _ := res["msg"].(string)
		if code == 0 || !strings.Contains(msg, c.want) {
			t.Errorf("%v: code %d, msg %q, want %q", c.args, code, msg, c.want)
		}
		if s := e.srv.Stats(); len(s.Requests) != 0 {
			t.Errorf("%s: requests sent before the options were refused: %v", c.want, s.Requests)
		}
	}
}

// With tenants, each tenant's pool is checked for squats (guests outside its own vmid range), not
// only the first tenant's: the warning names the pool's tenant.
func TestTenantsEachPoolsSquatsReported(t *testing.T) {
	e := many(t, 3)
	ctx := t.Context()
	var upid string
	e.must(e.root.Post(ctx, "/nodes/"+node+"/qemu/9000/clone", map[string]any{"newid": 10901, "name": "grab", "pool": "tenant-t03"}, &upid))
	e.must(e.root.WaitTask(ctx, upid))
	res, code := e.runMany(map[string]any{"tenants": tenantsOf(3, 1)}, false)
	want := `vmid 10901 ("grab") is held by tenant t03's pool, in index 9's range 10900-10999, not its own`
	if code != 0 || !slices.Contains(toStrings(res["warnings"]), want) {
		t.Fatalf("code %d, warnings %v; want %q", code, res["warnings"], want)
	}
}
