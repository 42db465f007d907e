package vm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/vm"
)

// values is what the diff shows of VM vmid as it is now: its pending config read back from
// pvesim, rendered by the module's own renderer (sshkeys decoded, cipassword masked).
func (e *simEnv) values(vmid int) map[string]any {
	e.t.Helper()
	cur, _, err := vm.ReadConfig(context.Background(), e.root, node, vmid)
	e.must(err)
	return vm.Values(vm.Desired{}, cur)
}

// entry is one diff entry as Ansible's diff callback receives it.
func entry(name string, vmid int, before, after any) map[string]any {
	h := fmt.Sprintf("%s (vmid %d)", name, vmid)
	return map[string]any{"before_header": h, "after_header": h, "before": before, "after": after}
}

// unchanged is the result of a VM the run leaves as it is.
func unchanged(name string, vmid int, state, status, mac string) map[string]any {
	r := map[string]any{"name": name, "vmid": vmid, "node": node, "state": state, "status": status, "changed": false,
		"actions": []any{}, "changes": []any{}, "pending": []any{}, "warnings": []any{}}
	if mac != "" {
		r["mac"] = mac
	}
	return r
}

// sameJSON fails unless got and want serialise alike: key for key, value for value, type for
// type (a number 4 is not the string "4").
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.MarshalIndent(want, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Fatalf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

// The --diff output of a run that keeps one VM, changes one, destroys one and creates one: an
// entry for every declared VM in declared order, unchanged ones too, headed "name (vmid N)";
// an absent side is {}; before is the VM as read, after what the run made (check mode: would
// make). A VM whose write failed before anything was read back shows after as null.
func TestDiffOfEveryKindOfVM(t *testing.T) {
	e := newSim(t)
	if res, code := e.run(moduletest.With(tdemo, "count", 3), false, false); code != 0 {
		t.Fatal(res)
	}
	args := moduletest.With(tdemo, "count", nil, "vms", []any{
		map[string]any{"index": 1},
		map[string]any{"index": 2, "cores": 4},
		map[string]any{"index": 3, "state": "absent"},
		map[string]any{"index": 4},
	})
	delete(args, "count")
	kept, changed, gone := e.values(10101), e.values(10102), e.values(10103)
	grown := moduletest.With(changed, "cores", 4) // the declared value, as declared (a number)
	want := func(created any) []any {
		return []any{
			entry("tdemo-1", 10101, kept, kept),
			entry("tdemo-2", 10102, changed, grown),
			entry("tdemo-3", 10103, gone, map[string]any{}),
			entry("tdemo-4", 10104, map[string]any{}, created),
		}
	}

	e.srv.ResetStats()
	res, code := e.run(args, true, true)
	if code != 0 || e.srv.Stats().Writes != 0 {
		t.Fatalf("check mode: code %d, writes %d, %v", code, e.srv.Stats().Writes, res)
	}
	// Check mode shows a VM to create as declared: net0 without the MAC PVE has not chosen yet.
	sameJSON(t, "check-mode diff", res["diff"], want(map[string]any{
		"name": "tdemo-4", "cores": 2, "memory": 1024, "net0": "virtio,bridge=tn01v0",
		"ipconfig0": "ip=10.20.129.13/24,gw=10.20.129.1", "nameserver": "10.20.99.1",
		"searchdomain": "tdemo.mobile.deevnet.net", "ciuser": "debian", "sshkeys": []any{sshKey},
		"cipassword": vm.Masked, "tags": "tenant-tdemo", "disk": "8G",
		"description": "tdemo-4.tdemo.mobile.deevnet.net: VM 4 of tenant tdemo, managed by deevnet.tenant.tenant_vm",
	}))

	res, code = e.run(args, false, true)
	if code != 0 || res["changed"] != true {
		t.Fatalf("run: code %d, %v", code, res)
	}
	// A created VM shows the clone as read back, each key the run then wrote as declared: the
	// template has 2 cores already (kept as read, "2") and 2048 MiB (written, 1024); it has no NIC
	// (ADR-0013), so net0 is written as declared too.
	sameJSON(t, "diff", res["diff"], want(moduletest.With(e.values(10104), "memory", 1024, "net0", "virtio,bridge=tn01v0")))

	e.srv.InjectFault(pvesim.Fault{Method: "POST", Path: "/nodes/{node}/qemu/{vmid}/clone", Nth: 1, Status: 500, Message: "storage busy"})
	// Run again: nothing to do, in check mode and for real alike. Every VM still has its result
	// and its diff entry, before = after (tdemo-3 absent on both sides).
	two, four := e.values(10102), e.values(10104)
	mac := func(vmid int) string { return vm.ParseNIC(fmt.Sprint(e.config(vmid)["net0"])).MAC }
	for _, check := range []bool{true, false} {
		res, code = e.run(args, check, true)
		if code != 0 || res["changed"] != false || res["msg"] != "4 VM(s) already as declared" || res["warnings"] != nil {
			t.Fatalf("no-op run (check=%v): code %d, %v", check, code, res)
		}
		sameJSON(t, fmt.Sprintf("no-op vms (check=%v)", check), res["vms"], []any{
			unchanged("tdemo-1", 10101, "started", "running", mac(10101)),
			unchanged("tdemo-2", 10102, "started", "running", mac(10102)),
			unchanged("tdemo-3", 10103, "absent", "absent", ""),
			unchanged("tdemo-4", 10104, "started", "running", mac(10104)),
		})
		sameJSON(t, fmt.Sprintf("no-op diff (check=%v)", check), res["diff"], []any{
			entry("tdemo-1", 10101, kept, kept),
			entry("tdemo-2", 10102, two, two),
			entry("tdemo-3", 10103, map[string]any{}, map[string]any{}),
			entry("tdemo-4", 10104, four, four),
		})
	}

	// One VM, so one clone request meets the fault, and the diff is that VM's entry alone.
	res, code = e.run(moduletest.With(args, "vms", []any{map[string]any{"index": 5}}), false, true)
	if code != 1 {
		t.Fatalf("faulted run: code %d, %v", code, res)
	}
	sameJSON(t, "diff of the VM whose clone failed", res["diff"], entry("tdemo-5", 10105, map[string]any{}, nil))
}
