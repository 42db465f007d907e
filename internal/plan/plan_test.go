package plan

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestSeedNumbersForTdemo(t *testing.T) {
	tn, err := DefaultSite().Tenant("tdemo", 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	vm := tn.VMs[0]
	got := map[string]string{
		"subnet": tn.Subnet.String(), "gateway": tn.Gateway.String(), "vm name": vm.Name,
		"vm address": vm.Address.String(), "vm cidr": vm.CIDR, "fqdn": vm.FQDN, "vmid": fmt.Sprint(vm.VMID),
		"reverse": tn.ReverseZone, "dns zone": tn.DNSZone, "zone": tn.Zone, "vrf": tn.VRFDevice,
		"vrf-vxlan": fmt.Sprint(tn.VRFVXLAN), "vnet": tn.VNets[0].ID, "vnet tag": fmt.Sprint(tn.VNets[0].Tag),
		"subnet id": tn.VNets[0].SubnetID, "pool": tn.Pool, "token": tn.FullTokenID(), "tsig": tn.TSIGKey,
		"storage": tn.Storage, "thinpool": tn.ThinPool,
	}
	want := map[string]string{
		"subnet": "10.20.129.0/24", "gateway": "10.20.129.1", "vm name": "tdemo-1",
		"vm address": "10.20.129.10", "vm cidr": "10.20.129.10/24", "fqdn": "tdemo-1.tdemo.mobile.deevnet.net", "vmid": "10101",
		"reverse": "129.20.10.in-addr.arpa", "dns zone": "tdemo.mobile.deevnet.net", "zone": "tn01", "vrf": "vrf_tn01",
		"vrf-vxlan": "10001", "vnet": "tn01v0", "vnet tag": "20016",
		"subnet id": "tn01-10.20.129.0-24", "pool": "tenant-tdemo", "token": "tenant-tdemo@pve!iac", "tsig": "tenant-tdemo",
		"storage": "tenant-tdemo", "thinpool": "tenant-tdemo",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
}

func TestIndexZeroIsReservedWithAWayOut(t *testing.T) {
	_, err := DefaultSite().Tenant("tref", 0, 1, 1)
	if err == nil {
		t.Fatal("index 0 accepted")
	}
	for _, want := range []string{"index: 0 is reserved for the reference implementation", "onboard"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestRejections(t *testing.T) {
	s := DefaultSite()
	for _, tc := range []struct {
		name            string
		index, vms, vns int
		want            string
	}{
		{"tdemo", 64, 1, 1, "index: 64 is outside 1..63"},
		{"tdemo", -1, 1, 1, "index: -1 is outside"},
		{"TDemo", 1, 1, 1, "name:"},
		{"t", 1, 1, 1, "name:"},
		{"1demo", 1, 1, 1, "name:"},
		{"tdemo-", 1, 1, 1, "name:"},
		{"t_demo", 1, 1, 1, "name:"},
		{"averyveryverylongname1", 1, 1, 1, "too long"},
		{"tdemo", 1, 100, 1, "vms: 100"},
		{"tdemo", 1, 1, 3, "vnets: 3"},
		{"tdemo", 1, 80, 4, "do not fit"},
	} {
		_, err := s.Tenant(tc.name, tc.index, tc.vms, tc.vns)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc, err, tc.want)
		}
	}
}

// No two indices share any identifier: subnet, VNIs, vmids, zone and vnet ids, DNS zones, ...
func TestNoTwoIndicesShareAnIdentifier(t *testing.T) {
	s := DefaultSite()
	owner := map[string]string{}
	for i := 1; i <= s.MaxIndex(); i++ {
		// Two shapes: the most VMs, and the most VNets.
		many, err := s.Tenant(fmt.Sprintf("t%d", i), i, 99, 1)
		if err != nil {
			t.Fatalf("index %d: %v", i, err)
		}
		split, err := s.Tenant(fmt.Sprintf("t%d", i), i, 1, 16)
		if err != nil {
			t.Fatalf("index %d: %v", i, err)
		}
		tn := many
		tn.VNets = split.VNets
		for kind, ids := range tn.identifiers() {
			for _, id := range ids {
				key := kind + "=" + id
				if prev, dup := owner[key]; dup {
					t.Fatalf("%s shared by %s and %s", key, prev, tn.Name)
				}
				owner[key] = tn.Name
			}
		}
		// Every tenant's subnets lie inside the overlay and inside its own /24.
		for _, v := range tn.VNets {
			if !s.Overlay.Contains(v.Subnet.Addr()) || !tn.Subnet.Contains(v.Subnet.Addr()) {
				t.Fatalf("%s: vnet subnet %s escapes", tn.Name, v.Subnet)
			}
		}
	}
}

func TestNodeLoopback(t *testing.T) {
	s := DefaultSite()
	a, err := s.NodeLoopback(2)
	if err != nil || a != netip.MustParseAddr("10.20.255.2") {
		t.Fatalf("got %v %v", a, err)
	}
	if _, err := s.NodeLoopback(255); err == nil {
		t.Fatal("broadcast accepted")
	}
}

func TestSiteOverrides(t *testing.T) {
	s, err := SiteFromMap(map[string]any{"overlay": "10.20.0.0/17", "resolver": "10.20.200.1", "loopbacks": "10.20.254.0/24", "zone": "Lab.Example.", "nodes": []any{"a", "b"}, "asn": "65001"})
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxIndex() != 127 || s.Zone != "lab.example" || s.ASN != 65001 || len(s.Nodes) != 2 {
		t.Fatalf("site = %+v", s)
	}
	tn, err := s.Tenant("big", 127, 1, 1)
	if err != nil || tn.Subnet.String() != "10.20.127.0/24" || tn.Zone != "tn127" {
		t.Fatalf("tenant %v err %v", tn.Subnet, err)
	}
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"overlay": "10.30.0.0/18"}, "site.overlay"},
		{map[string]any{"overlay": "10.20.128.1/18"}, "host bits"},
		{map[string]any{"loopbacks": "10.20.130.0/24"}, "overlaps"},
		{map[string]any{"resolver": "10.20.129.1"}, "site.resolver"},
		{map[string]any{"transit_vlan": 51}, "site.underlay_vlan"},
		{map[string]any{"transit_vlan": 5000}, "site.transit_vlan"},
		{map[string]any{"fabric": "way-too-long-fabric"}, "site.fabric"},
		{map[string]any{"zone": "bad_zone"}, "site.zone"},
		{map[string]any{"colour": "red"}, "site.colour: unknown key"},
		{map[string]any{"mtu": "big"}, "site.mtu"},
		{map[string]any{"nodes": []any{}}, "site.nodes"},
	} {
		_, err := SiteFromMap(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzTenant(f *testing.F) {
	f.Add("tdemo", 1, 1, 1, "10.20.128.0/18")
	f.Add("x-y", 63, 99, 16, "10.20.0.0/17")
	f.Add("a", 0, -1, 0, "garbage")
	f.Fuzz(func(t *testing.T, name string, index, vms, vnets int, overlay string) {
		s, err := SiteFromMap(map[string]any{"overlay": overlay, "loopbacks": "10.20.255.0/24"})
		if err != nil {
			return
		}
		tn, err := s.Tenant(name, index, vms, vnets)
		if err != nil {
			return
		}
		// Whatever is accepted is fully valid and self-consistent.
		if err := tn.checkIDs(); err != nil {
			t.Fatalf("accepted tenant has invalid ids: %v", err)
		}
		if !s.Overlay.Contains(tn.Subnet.Addr()) || !tn.Subnet.Contains(tn.Gateway) || len(tn.VMs) != vms || len(tn.VNets) != vnets {
			t.Fatalf("inconsistent tenant %+v", tn)
		}
		for _, vm := range tn.VMs {
			if !tn.VNets[0].Subnet.Contains(vm.Address) || vm.Address == tn.Gateway {
				t.Fatalf("vm %s address %s outside vnet 0 or on the gateway", vm.Name, vm.Address)
			}
		}
	})
}
