package sdnrender

import (
	"reflect"
	"strings"
	"testing"
)

func TestFabricInterfaceProperty(t *testing.T) {
	for in, want := range map[string]FabricInterface{
		"name=ens19,":              {Name: "ens19"},
		"ens20":                    {Name: "ens20"},
		"name=ens21,ip=3.3.3.4/31": {Name: "ens21", IP: "3.3.3.4/31"},
		"name=ens22,hello_multiplier=50,ip6=a::1/64": {Name: "ens22", HelloMultiplier: 50, IP6: "a::1/64"},
	} {
		if got := fabricInterface(in); got != want {
			t.Errorf("%q: got %+v, want %+v", in, got, want)
		}
	}
}

// PVE's API gives a list as an array or as one string with its separators, and a boolean as
// 1/0 (a JSON number once stored); both read the same.
func TestObjectValuesInPVEForms(t *testing.T) {
	asString := map[string]map[string]map[string]any{"zones": {"z": {
		"type": "evpn", "vrf-vxlan": "100", "nodes": "a,b;c", "advertise-subnets": "1"}}}
	asJSON := map[string]map[string]map[string]any{"zones": {"z": {
		"type": "evpn", "vrf-vxlan": float64(100), "nodes": []any{"a", "b", "c"}, "advertise-subnets": float64(1)}}}
	a, b := FromObjects(asString, nil, 1).Zones["z"], FromObjects(asJSON, nil, 1).Zones["z"]
	want := Zone{Type: "evpn", VRFVXLAN: 100, Nodes: []string{"a", "b", "c"}, AdvertiseSubnets: true}
	if !reflect.DeepEqual(a, want) || !reflect.DeepEqual(b, want) {
		t.Fatalf("string form %+v, JSON form %+v, want %+v", a, b, want)
	}
}

// FuzzFabricInterface: any property string parses without panicking, and a plain name given
// with or without its key reads back as the name.
func FuzzFabricInterface(f *testing.F) {
	f.Add("name=ens19,ip=10.0.0.1/31,hello_multiplier=3")
	f.Add("ens20")
	f.Add(",=,,hello_multiplier=x")
	f.Fuzz(func(t *testing.T, s string) {
		_ = fabricInterface(s)
		if s == "" || strings.ContainsAny(s, ",=") {
			return
		}
		if got := fabricInterface("name=" + s); got.Name != s {
			t.Fatalf("name=%q read as %q", s, got.Name)
		}
		if got := fabricInterface(s); got.Name != s {
			t.Fatalf("%q read as %q", s, got.Name)
		}
	})
}
