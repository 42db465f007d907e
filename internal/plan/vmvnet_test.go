package plan

import (
	"strings"
	"testing"
)

// TestPlaceVMs: VM k lands at .9+k of the VNet it is put on, with that VNet's gateway; the
// others keep VNet 0's numbers; every address stays in the tenant /24 (its one reverse zone).
func TestPlaceVMs(t *testing.T) {
	tn, err := DefaultSite().Tenant("tdemo", 1, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := tn.PlaceVMs("vms.vnet", []int{0, 0, 1}); err != nil {
		t.Fatal(err)
	}
	want := []struct{ vnet, cidr, gw string }{
		{"tn01v0", "10.20.129.10/25", "10.20.129.1"},
		{"tn01v0", "10.20.129.11/25", "10.20.129.1"},
		{"tn01v1", "10.20.129.140/25", "10.20.129.129"},
	}
	m := tn.Map()["vms"].([]any)
	for i, w := range want {
		vm := tn.VMs[i]
		if tn.VNets[vm.VNet].ID != w.vnet || vm.CIDR != w.cidr || vm.Gateway.String() != w.gw || !tn.Subnet.Contains(vm.Address) {
			t.Errorf("VM %d: vnet %s cidr %s gw %s, want %+v", i+1, tn.VNets[vm.VNet].ID, vm.CIDR, vm.Gateway, w)
		}
		got := m[i].(map[string]any)
		if got["vnet"] != w.vnet || got["cidr"] != w.cidr || got["gateway"] != w.gw {
			t.Errorf("Map vms[%d] = %v, want %+v", i, got, w)
		}
	}
	// no list: every VM on VNet 0, as before VNets could be chosen
	tn, _ = DefaultSite().Tenant("tdemo", 1, 2, 2)
	if err := tn.PlaceVMs("vms.vnet", nil); err != nil || tn.VMs[1].CIDR != "10.20.129.11/25" || tn.VMs[1].Gateway.String() != "10.20.129.1" {
		t.Fatalf("empty list: %v %+v", err, tn.VMs[1])
	}
}

func TestPlaceVMsRefusals(t *testing.T) {
	for _, c := range []struct {
		vnets int
		list  []int
		want  string
	}{
		{2, []int{0}, "vms.vnet: 1 entries for 3 VMs"},
		{2, []int{0, 2, 1}, "vms.vnet[1]: VNet 2 does not exist: the tenant has 2 VNet(s), numbered 0..1"},
		{1, []int{0, 0, -1}, "vms.vnet[2]: VNet -1 does not exist"},
	} {
		tn, err := DefaultSite().Tenant("tdemo", 1, 3, c.vnets)
		if err != nil {
			t.Fatal(err)
		}
		if err := tn.PlaceVMs("vms.vnet", c.list); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.list, err, c.want)
		}
	}
}
