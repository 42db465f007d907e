package sdn

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func rows(t *testing.T, s string) []map[string]any {
	t.Helper()
	var r []map[string]any
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// The example of SDN-SEMANTICS §1: one zone never applied, one with a changed mtu and a
// removed exitnodes.
func TestParseViewStates(t *testing.T) {
	obs, err := ParseView(KindZone, "", rows(t, `[
	 {"zone":"tenA","type":"evpn","state":"new","digest":null,
	  "pending":{"controller":"evpn1","vrf-vxlan":10000,"ipam":"pve","mac":"BC:24:11:3F:22:10"}},
	 {"zone":"tenB","type":"evpn","controller":"evpn1","vrf-vxlan":10001,"mtu":1450,"exitnodes":"pve1",
	  "mac":"BC:24:11:01:02:03","state":"changed","digest":null,"pending":{"mtu":1400,"exitnodes":"deleted"}},
	 {"zone":"tenC","type":"evpn","controller":"evpn1","vrf-vxlan":10002,"state":"deleted","pending":{}},
	 {"zone":"tenD","type":"evpn","controller":"evpn1","vrf-vxlan":10003,"nodes":"n2,n1"}]`))
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(obs)
	a := ix["zone/tenA"]
	if a.State != StateNew || a.Running != nil || a.Props["vrf-vxlan"] != "10000" || a.Props["type"] != "evpn" {
		t.Errorf("new zone: %+v", a)
	}
	b := ix["zone/tenB"]
	if b.State != StateChanged || b.Props["mtu"] != "1400" || b.Running["mtu"] != "1450" {
		t.Errorf("changed zone: %+v", b)
	}
	if _, ok := b.Props["exitnodes"]; ok {
		t.Errorf("a pending 'deleted' key must be absent from the current view: %+v", b.Props)
	}
	if c := ix["zone/tenC"]; c.Exists() || c.Running == nil || c.State != StateDeleted {
		t.Errorf("deleted zone: %+v", c)
	}
	if d := ix["zone/tenD"]; d.Props["nodes"] != "n1,n2" || d.State != StateNone {
		t.Errorf("unchanged zone: %+v", d)
	}
}

func TestParseViewSubnetAndFabricNode(t *testing.T) {
	obs, err := ParseView(KindSubnet, "tn01v0", rows(t, `[{"subnet":"tn01-10.20.129.0-24","id":"tn01-10.20.129.0-24","type":"subnet",
	  "vnet":"tn01v0","state":"new","pending":{"gateway":"10.20.129.1"},"cidr":"10.20.129.0/24","zone":"tn01","mask":"24","dhcp-range":[]}]`))
	if err != nil {
		t.Fatal(err)
	}
	s := obs[0]
	if s.Key() != "subnet/tn01-10.20.129.0-24" || s.Parent != "tn01v0" || s.Props["gateway"] != "10.20.129.1" {
		t.Errorf("subnet: %+v", s)
	}
	if _, ok := s.Props["cidr"]; ok {
		t.Errorf("derived keys must not be properties: %+v", s.Props)
	}
	n, err := ParseView(KindFabricNode, "", rows(t, `[{"fabric_id":"ufab","node_id":"dv02hyp002p02","protocol":"openfabric",
	  "ip":"10.20.255.1","interfaces":["name=vmbr0.51"]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if n[0].Key() != "fabric_node/ufab/dv02hyp002p02" || n[0].Props["interfaces"] != "name=vmbr0.51" {
		t.Errorf("fabric node: %+v", n[0])
	}
	if _, err := ParseView(KindZone, "", rows(t, `[{"type":"evpn"}]`)); err == nil {
		t.Error("a row without id must fail")
	}
	if _, err := ParseView(KindZone, "", rows(t, `[{"zone":"a1","state":"weird"}]`)); err == nil {
		t.Error("an unknown state must fail")
	}
}

func tdemo() VRFSpec {
	return VRFSpec{Tenant: "tdemo", Owner: "tenant-tdemo", Zone: "tn01", VRFVXLAN: 10001, Controller: "evpnctl", MTU: 1450,
		Nodes: []string{"dv02hyp002p02"}, VNets: []VNetSpec{{ID: "tn01v0", Tag: 20016,
			Subnet: netip.MustParsePrefix("10.20.129.0/24"), Gateway: netip.MustParseAddr("10.20.129.1")}}}
}

func TestPlanCreateOrderAndRequests(t *testing.T) {
	ops := Plan(tdemo().Desired(), nil, Index{})
	var got []string
	for _, op := range ops {
		got = append(got, string(op.Action)+" "+op.Object.Key())
	}
	want := []string{"create zone/tn01", "create vnet/tn01v0", "create subnet/tn01-10.20.129.0-24"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ops = %v, want %v", got, want)
	}
	z := ops[0].Request("tok")
	if z.Method != "POST" || z.Path != "/cluster/sdn/zones" || z.Body["zone"] != "tn01" || z.Body["vrf-vxlan"] != 10001 ||
		z.Body["type"] != "evpn" || z.Body["lock-token"] != "tok" || z.Body["nodes"] != "dv02hyp002p02" {
		t.Errorf("zone request: %+v", z)
	}
	if _, ok := z.Body["mac"]; ok {
		t.Error("mac must not be sent")
	}
	s := ops[2].Request("")
	if s.Path != "/cluster/sdn/vnets/tn01v0/subnets" || s.Body["subnet"] != "10.20.129.0/24" || s.Body["type"] != "subnet" || s.Body["gateway"] != "10.20.129.1" {
		t.Errorf("subnet request: %+v", s)
	}
	if _, ok := s.Body["lock-token"]; ok {
		t.Error("no lock token when not locked")
	}
}

// A second run against the pending view of the first (never applied) is a no-op, and a
// server-generated mac or digest is never a difference.
func TestPlanNoopAgainstPending(t *testing.T) {
	zones, _ := ParseView(KindZone, "", rows(t, `[{"zone":"tn01","type":"evpn","state":"new","digest":null,
	  "pending":{"controller":"evpnctl","vrf-vxlan":10001,"mtu":1450,"nodes":"dv02hyp002p02","mac":"BC:24:11:AA:BB:CC","ipam":"pve"}}]`))
	vnets, _ := ParseView(KindVNet, "", rows(t, `[{"vnet":"tn01v0","type":"vnet","state":"new","pending":{"zone":"tn01","tag":20016,"alias":"tenant-tdemo"}}]`))
	subnets, _ := ParseView(KindSubnet, "tn01v0", rows(t, `[{"subnet":"tn01-10.20.129.0-24","type":"subnet","vnet":"tn01v0","state":"new","pending":{"gateway":"10.20.129.1","snat":0}}]`))
	ops := Plan(tdemo().Desired(), nil, NewIndex(zones, vnets, subnets))
	if len(ops) != 0 {
		t.Fatalf("want no ops, got %+v", ops)
	}
}

func TestPlanUpdateSendsOnlyDifferences(t *testing.T) {
	zones, _ := ParseView(KindZone, "", rows(t, `[{"zone":"tn01","type":"evpn","controller":"evpnctl","vrf-vxlan":10001,"mtu":1500,
	  "nodes":"dv02hyp002p02","exitnodes":"dv02hyp002p02","mac":"BC:24:11:AA:BB:CC"}]`))
	spec := tdemo()
	ops := Plan(spec.Desired()[:1], nil, NewIndex(zones))
	if len(ops) != 1 || ops[0].Action != Update {
		t.Fatalf("ops = %+v", ops)
	}
	r := ops[0].Request("")
	if r.Method != "PUT" || r.Path != "/cluster/sdn/zones/tn01" || r.Body["mtu"] != 1450 || r.Body["delete"] != "exitnodes" || len(r.Body) != 2 {
		t.Errorf("update request: %+v", r)
	}
	if !reflect.DeepEqual(ops[0].Before, Props{"type": "evpn", "controller": "evpnctl", "vrf-vxlan": "10001", "mtu": "1500", "nodes": "dv02hyp002p02", "exitnodes": "dv02hyp002p02"}) {
		t.Errorf("before = %v", ops[0].Before)
	}
	if got := PendingAfter(ops[0].Obs, &ops[0]); got != StateChanged {
		t.Errorf("pending after = %q", got)
	}
}

func TestPlanDeleteOrder(t *testing.T) {
	zones, _ := ParseView(KindZone, "", rows(t, `[{"zone":"tn01","type":"evpn","controller":"evpnctl","vrf-vxlan":10001}]`))
	vnets, _ := ParseView(KindVNet, "", rows(t, `[{"vnet":"tn01v0","zone":"tn01","tag":20016,"alias":"tenant-tdemo"}]`))
	subnets, _ := ParseView(KindSubnet, "tn01v0", rows(t, `[{"subnet":"tn01-10.20.129.0-24","vnet":"tn01v0","gateway":"10.20.129.1"}]`))
	ix := NewIndex(zones, vnets, subnets)
	remove := []Object{{Kind: KindZone, ID: "tn01"}, {Kind: KindVNet, ID: "tn01v0"}, subnets[0].Object, {Kind: KindVNet, ID: "gone1"}}
	ops := Plan(nil, remove, ix)
	var got []string
	for _, op := range ops {
		got = append(got, op.Request("t").Method+" "+op.Request("t").Path)
	}
	want := []string{"DELETE /cluster/sdn/vnets/tn01v0/subnets/tn01-10.20.129.0-24", "DELETE /cluster/sdn/vnets/tn01v0", "DELETE /cluster/sdn/zones/tn01"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("delete order = %v, want %v", got, want)
	}
	if q := ops[0].Request("t").Query.Get("lock-token"); q != "t" {
		t.Errorf("delete lock token = %q", q)
	}
	if PendingAfter(ops[2].Obs, &ops[2]) != StateDeleted {
		t.Error("an applied zone being deleted is pending 'deleted'")
	}
}

func TestFabricRequests(t *testing.T) {
	f := FabricSpec{ID: "ufab", Protocol: "openfabric", Prefix: netip.MustParsePrefix("10.20.255.0/24"), Controller: "evpnctl", ASN: 65020,
		Nodes: []FabricNode{{Name: "dv02hyp002p02", IP: netip.MustParseAddr("10.20.255.1"), Interfaces: []string{"vmbr0.51"}}}}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	ops := Plan(f.Desired(), nil, Index{})
	if len(ops) != 3 || ops[0].Object.Kind != KindFabric || ops[1].Object.Kind != KindFabricNode || ops[2].Object.Kind != KindController {
		t.Fatalf("ops = %+v", ops)
	}
	n := ops[1].Request("")
	if n.Path != "/cluster/sdn/fabrics/node/ufab" || n.Body["node_id"] != "dv02hyp002p02" || !reflect.DeepEqual(n.Body["interfaces"], []string{"name=vmbr0.51"}) || n.Body["protocol"] != "openfabric" {
		t.Errorf("node request: %+v", n)
	}
	c := ops[2].Request("")
	if c.Body["controller"] != "evpnctl" || c.Body["asn"] != 65020 || c.Body["fabric"] != "ufab" || c.Body["type"] != "evpn" {
		t.Errorf("controller request: %+v", c)
	}
	// A fabric PUT always carries protocol and a delete array (PVE requires both).
	obs, _ := ParseView(KindFabric, "", rows(t, `[{"id":"ufab","protocol":"openfabric","ip_prefix":"10.20.0.0/16"}]`))
	up := Plan(f.Desired()[:1], nil, NewIndex(obs))[0].Request("")
	if up.Body["protocol"] != "openfabric" || up.Body["ip_prefix"] != "10.20.255.0/24" || !reflect.DeepEqual(up.Body["delete"], []string{}) {
		t.Errorf("fabric update: %+v", up)
	}
}

func TestValidation(t *testing.T) {
	bad := map[string]func(*VRFSpec){
		"zone too long":   func(v *VRFSpec) { v.Zone = "tenant0001" },
		"zone bad chars":  func(v *VRFSpec) { v.Zone = "tn_01" },
		"vnet too long":   func(v *VRFSpec) { v.VNets[0].ID = "tn01vnet00" },
		"vni equals vrf":  func(v *VRFSpec) { v.VNets[0].Tag = 10001 },
		"vni range":       func(v *VRFSpec) { v.VNets[0].Tag = 1 << 24 },
		"gateway outside": func(v *VRFSpec) { v.VNets[0].Gateway = netip.MustParseAddr("10.0.0.1") },
		"host bits":       func(v *VRFSpec) { v.VNets[0].Subnet = netip.MustParsePrefix("10.20.129.5/24") },
		"bad controller":  func(v *VRFSpec) { v.Controller = "-x" },
		"duplicate vnet tag": func(v *VRFSpec) {
			v.VNets = append(v.VNets, VNetSpec{ID: "tn01v1", Tag: 20016, Subnet: v.VNets[0].Subnet})
		},
	}
	for name, mut := range bad {
		v := tdemo()
		mut(&v)
		if err := v.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := tdemo().Validate(); err != nil {
		t.Errorf("tdemo: %v", err)
	}
	err := CheckID(KindZone, "zone", "tenant0001")
	if err == nil || !strings.Contains(err.Error(), "at most 8") {
		t.Errorf("too-long message: %v", err)
	}
}

func TestSubnetIDRoundTrip(t *testing.T) {
	for _, c := range []string{"10.20.129.0/24", "fd00:10::/64"} {
		if got := SubnetCIDR(SubnetID("tn01", c)); got != c {
			t.Errorf("%s -> %s", c, got)
		}
	}
}

// FuzzParseView: the pending-view parser never panics, and whatever it accepts keeps the
// invariant that an object in the current config has properties and a deleted one has none.
func FuzzParseView(f *testing.F) {
	f.Add(`[{"zone":"a1","type":"evpn","state":"new","pending":{"mtu":1450}}]`)
	f.Add(`[{"zone":"a1","mtu":1,"state":"changed","pending":{"mtu":"deleted","nodes":"b,a"}}]`)
	f.Add(`[{"zone":"a1","state":"deleted","pending":{}}]`)
	f.Add(`[{"subnet":"a-1.2.3.0-24","id":"a-1.2.3.0-24","vnet":"v","dhcp-range":[{"start-address":"1.2.3.4"}]}]`)
	f.Fuzz(func(t *testing.T, s string) {
		var r []map[string]any
		if json.Unmarshal([]byte(s), &r) != nil {
			return
		}
		for _, k := range []Kind{KindZone, KindSubnet, KindFabricNode} {
			obs, err := ParseView(k, "p", r)
			if err != nil {
				continue
			}
			for _, o := range obs {
				if o.ID == "" {
					t.Fatalf("accepted an object without id: %+v", o)
				}
				if (o.State == StateDeleted) == o.Exists() {
					t.Fatalf("state %q but exists=%v", o.State, o.Exists())
				}
				_ = Plan([]Desired{{Object: o.Object, Owned: []string{"mtu"}}}, nil, NewIndex(obs))
			}
		}
	})
}
