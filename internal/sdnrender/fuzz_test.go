package sdnrender

import (
	"strings"
	"testing"
)

// FuzzRender feeds arbitrary ids, lists, addresses and MTUs to the renderer:
// it must not panic, and the files keep their fixed frame.
func FuzzRender(f *testing.F) {
	f.Add("myzone", "myvnet", "myzone-10.0.0.0-24", "10.0.0.1", 1450, "192.168.0.1,192.168.0.2", "test", "localhost", "ens20,ens21", "172.20.3.1", "openfabric", true, "65001:1")
	f.Add("z", "v", "-", "", -1, ",", "", "", "", "", "ospf", false, "")
	f.Add("a", "b", "a-2a08::-64", "2a08::1", 0, "2a08::1", "f", "n", "x", "2a08::5", "openfabric", true, "")
	f.Fuzz(func(t *testing.T, zone, vnet, subnet, gw string, mtu int, peers, fabric, node, ifaces, ip, proto string, exit bool, rt string) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		fn := FabricNode{IP: ip, IP6: ip}
		for _, n := range split(ifaces) {
			fn.Interfaces = append(fn.Interfaces, FabricInterface{Name: n, IP: ip, HelloMultiplier: mtu})
		}
		ctl := Controller{Type: "evpn", ASN: int64(mtu), Peers: split(peers)}
		if exit {
			ctl.Fabric = fabric
		}
		z := Zone{Type: "evpn", Controller: "c", VRFVXLAN: mtu, MTU: mtu, MAC: gw, VXLANPort: mtu, RTImport: split(rt),
			AdvertiseSubnets: exit, ExitNodesLocalRouting: exit, DisableARPNDSuppression: !exit, ExitNodesPrimary: peers}
		if exit {
			z.ExitNodes = []string{node}
		} else {
			z.Nodes = split(peers)
		}
		cfg := &Config{
			Version:     mtu,
			Zones:       map[string]Zone{zone: z},
			VNets:       map[string]VNet{vnet: {Zone: zone, Tag: mtu, Alias: gw}, vnet + "x": {Zone: "missing"}},
			Subnets:     map[string]Subnet{subnet: {VNet: vnet, Gateway: gw, SNAT: exit}, "other-" + ip + "-24": {VNet: vnet}},
			Controllers: map[string]Controller{"c": ctl},
			Fabrics:     map[string]Fabric{fabric: {Protocol: proto, IPPrefix: ip, IP6Prefix: ip, Area: gw, HelloInterval: rt, Nodes: map[string]FabricNode{node: fn, "peer": {IP: gw}}}},
		}
		files := Render(cfg, Node{Name: node, LocalIP: ip, Uplink4: &Route{Src: ip, Dev: ifaces}, Uplink6: &Route{Src: ip, Dev: ifaces}})
		if !strings.HasPrefix(files.Interfaces, "#version:") || !strings.HasSuffix(files.Interfaces, "\n") {
			t.Fatalf("interfaces frame broken: %q", files.Interfaces)
		}
		if !strings.HasPrefix(files.FRR, "frr version ") || !strings.HasSuffix(files.FRR, "!\nline vty\n!\n") {
			t.Fatalf("frr frame broken: %q", files.FRR)
		}
	})
}
