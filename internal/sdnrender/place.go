package sdnrender

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// placement is where a node sits for the EVPN controller (NODE-RENDERING §2.3).
type placement struct {
	localIP      string   // VTEP source; "" when unknown (peers mode without Node.LocalIP)
	routerID     string   // "" when unknown
	updateSource string   // dummy_<fabric> in fabric mode
	peers        []string // BGP neighbours, local IP removed
}

// place finds the node's local IP, router-id and peers for controller ctl.
// An error means PVE would warn and leave this node without EVPN.
func place(cfg *Config, ctlID string, ctl Controller, node Node) (placement, error) {
	if ctl.Fabric != "" {
		fab, ok := cfg.Fabrics[ctl.Fabric]
		if !ok {
			return placement{}, fmt.Errorf("could not configure EVPN controller %s: fabric '%s' does not exist", ctlID, ctl.Fabric)
		}
		me, ok := fab.Nodes[node.Name]
		if !ok {
			return placement{}, fmt.Errorf("could not configure EVPN controller %s: node '%s' does not exist in fabric '%s'", ctlID, node.Name, ctl.Fabric)
		}
		if me.IP == "" {
			return placement{}, fmt.Errorf("Node %s requires an IP in the fabric %s to configure the EVPN controller", node.Name, ctl.Fabric)
		}
		p := placement{localIP: me.IP, routerID: me.IP, updateSource: "dummy_" + ctl.Fabric}
		for _, name := range sortedKeys(fab.Nodes) {
			if ip := fab.Nodes[name].IP; ip != "" && ip != me.IP {
				p.peers = append(p.peers, ip)
			}
		}
		return p, nil
	}
	if len(ctl.Peers) == 0 {
		return placement{}, fmt.Errorf("neither fabric nor peers configured for EVPN controller %s", ctlID)
	}
	p := placement{localIP: node.LocalIP}
	if a, err := netip.ParseAddr(node.LocalIP); err == nil && a.Is4() {
		p.routerID = node.LocalIP
	} else if err == nil {
		p.routerID = macRouterID(node.MAC)
	}
	for _, ip := range ctl.Peers {
		if ip != p.localIP {
			p.peers = append(p.peers, ip)
		}
	}
	return p, nil
}

// macRouterID is PVE's router-id for an IPv6 VTEP: the MAC's bytes 3-6 as
// a dotted quad; "" without a usable MAC.
func macRouterID(mac string) string {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d.%d", hw[2], hw[3], hw[4], hw[5])
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// subnetCIDR splits a subnet id <zone>-<network>-<mask> into zone and the
// un-normalised "<network>/<mask>" (zone ids have no '-').
func subnetCIDR(id string) (zone, network, mask string, ok bool) {
	i := strings.IndexByte(id, '-')
	j := strings.LastIndexByte(id, '-')
	if i <= 0 || j <= i+1 || j == len(id)-1 {
		return "", "", "", false
	}
	return id[:i], id[i+1 : j], id[j+1:], true
}

func isIPv6(s string) bool { return strings.Contains(s, ":") }
