package sdnrender

import (
	"fmt"
	"testing"
)

// BenchmarkRender63Tenants renders one node of a 3-node openfabric fabric
// carrying 63 EVPN zones, each with one vnet and one subnet.
func BenchmarkRender63Tenants(b *testing.B) {
	cfg := &Config{Version: 7, Zones: map[string]Zone{}, VNets: map[string]VNet{}, Subnets: map[string]Subnet{},
		Controllers: map[string]Controller{"evpn": {Type: "evpn", ASN: 65020, Fabric: "ufab"}},
		Fabrics: map[string]Fabric{"ufab": {Protocol: "openfabric", IPPrefix: "10.20.255.0/24", Nodes: map[string]FabricNode{
			"n1": {IP: "10.20.255.1", Interfaces: []FabricInterface{{Name: "vmbr0.51"}}},
			"n2": {IP: "10.20.255.2", Interfaces: []FabricInterface{{Name: "vmbr0.51"}}},
			"n3": {IP: "10.20.255.3", Interfaces: []FabricInterface{{Name: "vmbr0.51"}}},
		}}}}
	for i := 1; i <= 63; i++ {
		z, v := fmt.Sprintf("tn%02d", i), fmt.Sprintf("tn%02dv0", i)
		cfg.Zones[z] = Zone{Type: "evpn", Controller: "evpn", VRFVXLAN: 10000 + i, MTU: 1450, MAC: "BC:24:11:00:00:01"}
		cfg.VNets[v] = VNet{Zone: z, Tag: 20000 + 16*i}
		cfg.Subnets[fmt.Sprintf("%s-10.20.%d.0-24", z, 128+i)] = Subnet{VNet: v, Gateway: fmt.Sprintf("10.20.%d.1", 128+i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		f := Render(cfg, Node{Name: "n2"})
		if len(f.Warnings) != 0 {
			b.Fatal(f.Warnings)
		}
	}
}
