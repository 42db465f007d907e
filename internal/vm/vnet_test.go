package vm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// addVNet adds VNet id to zone tn01 and applies it, as tenant_vrf does for tenant.vnets: 2.
func (e *simEnv) addVNet(id string, tag int) {
	e.t.Helper()
	ctx := context.Background()
	e.must(e.root.Post(ctx, "/cluster/sdn/vnets", map[string]any{"vnet": id, "zone": "tn01", "tag": tag}, nil))
	var upid string
	e.must(e.root.Put(ctx, "/cluster/sdn", nil, &upid))
	if upid != "" {
		e.must(e.root.WaitTask(ctx, upid))
	}
	e.srv.ResetStats()
}

// TestVMOnChosenVNet: vms[].vnet puts a VM's NIC on that VNet with an address and gateway of the
// VNet's subnet (VM k at .9+k of it); a second run changes nothing; declaring an existing VM on
// another VNet is refused before any write, naming both VNets.
func TestVMOnChosenVNet(t *testing.T) {
	e := newSim(t)
	e.addVNet("tn01v1", 20017)
	args := map[string]any{"vnet_count": 2, "vms": []any{map[string]any{"index": 1}, map[string]any{"index": 2, "vnet": 1}}}
	res, code := e.run(args, false, false)
	if code != 0 {
		t.Fatalf("code %d, %v", code, res["msg"])
	}
	want := map[int][2]string{
		10101: {"tn01v0", "gw=10.20.129.1,ip=10.20.129.10/25"},
		10102: {"tn01v1", "gw=10.20.129.129,ip=10.20.129.139/25"},
	}
	for id, w := range want {
		c := e.config(id)
		if !strings.Contains(fmt.Sprint(c["net0"]), "bridge="+w[0]) {
			t.Errorf("VM %d net0 %v, want bridge %s", id, c["net0"], w[0])
		}
		if got := fmt.Sprint(c["ipconfig0"]); got != w[1] && got != swapProps(w[1]) {
			t.Errorf("VM %d ipconfig0 %q, want %q", id, got, w[1])
		}
	}
	e.srv.ResetStats()
	res, code = e.run(args, false, false)
	if code != 0 || res["changed"] != false || e.srv.Stats().Writes != 0 {
		t.Fatalf("second run: code %d changed %v writes %d %v", code, res["changed"], e.srv.Stats().Writes, res["msg"])
	}
	// moving VM 2 back to VNet 0 (the default) is refused, and nothing is written
	res, code = e.run(map[string]any{"vnet_count": 2, "count": 2}, false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "tdemo-2 (vmid 10102) is on VNet tn01v1 and is declared on tn01v0") {
		t.Fatalf("move: code %d, msg %v", code, res["msg"])
	}
	if w := e.srv.Stats().Writes; w != 0 {
		t.Fatalf("%d writes before the refusal", w)
	}
	// a rebuild is how a VM changes VNet
	res, code = e.run(map[string]any{"vnet_count": 2, "vms": []any{map[string]any{"index": 2, "vnet": 0, "state": "rebuilt"}}}, false, false)
	if code != 0 || !strings.Contains(fmt.Sprint(e.config(10102)["net0"]), "bridge=tn01v0") {
		t.Fatalf("rebuild on VNet 0: code %d, %v, net0 %v", code, res["msg"], e.config(10102)["net0"])
	}
}

// swapProps is "a,b" as "b,a": PVE keeps ipconfig0's keys in the order they were written.
func swapProps(s string) string {
	a, b, _ := strings.Cut(s, ",")
	return b + "," + a
}

// TestVNetRefusals: a VNet the tenant does not have is refused before any request, naming the field.
func TestVNetRefusals(t *testing.T) {
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"module-level vnet beyond vnet_count", map[string]any{"count": 1, "vnet": 1}, "vnet: VNet 1 does not exist: tenant tdemo has 1 VNet(s)"},
		{"vms[].vnet beyond vnet_count", map[string]any{"vnet_count": 2, "vms": []any{map[string]any{"index": 1}, map[string]any{"index": 2, "vnet": 2}}},
			"vms[1].vnet: VNet 2 does not exist"},
		{"negative vnet", map[string]any{"vms": []any{map[string]any{"index": 1, "vnet": -1}}}, "vms[0].vnet: VNet -1 does not exist"},
		{"vnet_count not a power of two", map[string]any{"count": 1, "vnet_count": 3}, "vnets: 3 must be 1, 2, 4, 8 or 16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newSim(t)
			res, code := e.run(c.args, false, false)
			if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), c.want) {
				t.Fatalf("code %d, msg %v; want %q", code, res["msg"], c.want)
			}
			if n := len(e.srv.Stats().Requests); n != 0 {
				t.Fatalf("%d kinds of request before the refusal", n)
			}
		})
	}
}

// TestPlannedVNet: check mode plans a VM on a VNet this run's tenant_vrf would create
// (planned_vnets) and says so in a warning; without planned_vnets, and in a real run, the missing
// VNet refuses the run before any write.
func TestPlannedVNet(t *testing.T) {
	e := newSim(t)
	args := map[string]any{"vnet_count": 2, "vms": []any{map[string]any{"index": 1}, map[string]any{"index": 2, "vnet": 1}}}
	res, code := e.run(args, true, true)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "VNet tn01v1: cannot use it for net0") {
		t.Fatalf("check mode without planned_vnets: code %d, %v", code, res["msg"])
	}
	args["planned_vnets"] = []any{"tn01v1"}
	res, code = e.run(args, true, true)
	if code != 0 || res["changed"] != true || !strings.Contains(fmt.Sprint(res["warnings"]), "VM tdemo-2: VNet tn01v1 does not exist yet; check mode plans net0 on it") {
		t.Fatalf("check mode with planned_vnets: code %d, changed %v, warnings %v, %v", code, res["changed"], res["warnings"], res["msg"])
	}
	if !strings.Contains(fmt.Sprint(res["diff"]), "bridge=tn01v1") {
		t.Fatalf("the plan does not show net0 on tn01v1: %v", res["diff"])
	}
	if w := e.srv.Stats().Writes; w != 0 {
		t.Fatalf("check mode wrote %d times", w)
	}
	res, code = e.run(args, false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "VNet tn01v1: cannot use it for net0") || e.srv.Stats().Writes != 0 {
		t.Fatalf("real run with planned_vnets: code %d, writes %d, %v", code, e.srv.Stats().Writes, res["msg"])
	}
}
