package sdnrender

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// unreachableMetric is 0xFF000000, the metric of PVE's VRF default route.
const unreachableMetric = "4278198272"

// stanzas collects zone interfaces; the first vnet to emit a name wins.
type stanzas map[string][]string

func (s stanzas) add(name string, lines ...string) {
	if _, ok := s[name]; !ok {
		s[name] = lines
	}
}

// renderInterfaces builds /etc/network/interfaces.d/sdn (NODE-RENDERING §2).
func renderInterfaces(cfg *Config, node Node) (string, []string) {
	var warn []string
	st := stanzas{}
	for _, id := range sortedKeys(cfg.VNets) {
		vnet := cfg.VNets[id]
		if vnet.Zone == "" {
			warn = append(warn, fmt.Sprintf("can't generate vnet '%s': no zone assigned!", id))
			continue
		}
		zone, ok := cfg.Zones[vnet.Zone]
		if !ok {
			warn = append(warn, fmt.Sprintf("can't generate vnet '%s': zone %s don't exist", id, vnet.Zone))
			continue
		}
		if len(zone.Nodes) > 0 && !slices.Contains(zone.Nodes, node.Name) {
			continue
		}
		if zone.Type != "evpn" {
			continue // other zone types are outside this renderer
		}
		if err := evpnVNetStanzas(st, cfg, node, vnet.Zone, zone, id, vnet); err != nil {
			warn = append(warn, fmt.Sprintf("zone %s : vnet %s : %v", vnet.Zone, id, err))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#version:%d\n", cfg.Version)
	for _, name := range sortedKeys(st) {
		fmt.Fprintf(&b, "\nauto %s\niface %s\n", name, name)
		for _, l := range st[name] {
			b.WriteString("\t" + l + "\n")
		}
	}
	fw := fabricStanzas(&b, cfg, node)
	return b.String(), append(warn, fw...)
}

func evpnVNetStanzas(st stanzas, cfg *Config, node Node, zoneID string, zone Zone, vnetID string, vnet VNet) error {
	ctl, ok := cfg.Controllers[zone.Controller]
	if !ok {
		return fmt.Errorf("controller %s don't exist", zone.Controller)
	}
	p, err := place(cfg, zone.Controller, ctl, node)
	if err != nil {
		return err
	}
	if zone.VRFVXLAN == 0 {
		return fmt.Errorf("missing vrf-vxlan")
	}
	mtu := 1450
	if zone.MTU != 0 {
		mtu = zone.MTU
	}
	exit := slices.Contains(zone.ExitNodes, node.Name)
	vrf := "vrf_" + zoneID
	mtuLine := "mtu " + strconv.Itoa(mtu)

	st.add(vnetID, evpnBridgeLines(cfg, node, zone, vnetID, vnet, exit, mtuLine, vrf)...)

	verb := "add"
	if exit {
		verb = "del"
	}
	st.add(vrf, "vrf-table auto", fmt.Sprintf("post-up ip route %s vrf %s unreachable default metric %s", verb, vrf, unreachableMetric))

	st.add("vrfvx_"+zoneID, vxlanLines(p.localIP, zone, zone.VRFVXLAN, mtuLine)...)
	st.add("vrfbr_"+zoneID, "bridge-ports vrfvx_"+zoneID, "bridge_stp off", "bridge_fd 0", mtuLine, "vrf "+vrf)
	st.add("vxlan_"+vnetID, vxlanLines(p.localIP, zone, vnet.Tag, mtuLine)...)
	if exit && zone.ExitNodesLocalRouting {
		exitVeths(st, cfg, zoneID, vnetID, vrf, mtu)
	}
	return nil
}

// evpnBridgeLines are the VNet bridge's lines: gateways (and SNAT on exit nodes) first, then the
// bridge itself, forwarding where there is a gateway, and its VRF.
func evpnBridgeLines(cfg *Config, node Node, zone Zone, vnetID string, vnet VNet, exit bool, mtuLine, vrf string) []string {
	// the vnet bridge: gateways (+ SNAT on exit nodes) first
	var lines []string
	seen := map[string]bool{}
	hasSubnet, v4gw, v6gw := false, false, false
	for _, sid := range sortedKeys(cfg.Subnets) {
		sn := cfg.Subnets[sid]
		if sn.VNet != vnetID {
			continue
		}
		_, network, mask, ok := subnetCIDR(sid)
		if !ok {
			continue
		}
		hasSubnet = true
		if sn.Gateway == "" {
			continue
		}
		if isIPv6(sn.Gateway) {
			v6gw = true
		} else {
			v4gw = true
		}
		if seen[sn.Gateway] {
			continue
		}
		seen[sn.Gateway] = true
		lines = append(lines, "address "+sn.Gateway+"/"+mask)
		if exit && sn.SNAT {
			lines = append(lines, snatLines(network+"/"+mask, node)...)
		}
	}
	if zone.MAC != "" {
		lines = append(lines, "hwaddress "+zone.MAC)
	}
	lines = append(lines, "bridge_ports vxlan_"+vnetID, "bridge_stp off", "bridge_fd 0", mtuLine)
	if vnet.Alias != "" {
		lines = append(lines, "alias "+vnet.Alias)
	}
	if v4gw {
		lines = append(lines, "ip-forward on")
	}
	if v6gw {
		lines = append(lines, "ip6-forward on")
	}
	if hasSubnet {
		lines = append(lines, "arp-accept on")
	}
	return append(lines, "vrf "+vrf)
}

// vxlanLines are the lines of a VXLAN interface with VNI id.
func vxlanLines(localIP string, zone Zone, id int, mtuLine string) []string {
	l := []string{"vxlan-id " + strconv.Itoa(id)}
	if localIP != "" {
		l = append(l, "vxlan-local-tunnelip "+localIP)
	}
	if zone.VXLANPort != 0 {
		l = append(l, "vxlan-port "+strconv.Itoa(zone.VXLANPort))
	}
	l = append(l, "bridge-learning off")
	if !zone.DisableARPNDSuppression {
		l = append(l, "bridge-arp-nd-suppress on")
	}
	return append(l, mtuLine)
}

// exitVeths are the veth pair between the default VRF and the zone's on an exit node with
// local routing.
func exitVeths(st stanzas, cfg *Config, zoneID, vnetID, vrf string, mtu int) {
	xmtu := "mtu " + strconv.Itoa(mtu+50)
	x := []string{"link-type veth", "address 10.255.255.1/30"}
	xp := []string{"link-type veth", "address 10.255.255.2/30"}
	if vnetHasV6(cfg, vnetID) {
		x = append(x, "address fe80::1/126")
		xp = append(xp, "address fe80::2/126")
	}
	st.add("xvrf_"+zoneID, append(x, "veth-peer-name xvrfp_"+zoneID, xmtu)...)
	st.add("xvrfp_"+zoneID, append(xp, "veth-peer-name xvrf_"+zoneID, "vrf "+vrf, xmtu)...)
}

func vnetHasV6(cfg *Config, vnetID string) bool {
	for sid, sn := range cfg.Subnets {
		if _, network, _, ok := subnetCIDR(sid); ok && sn.VNet == vnetID && isIPv6(network) {
			return true
		}
	}
	return false
}

// snatLines are the 4 SNAT/conntrack lines of an exit node, when the node
// has a route towards the internet (`ip route get` gives src and dev).
func snatLines(cidr string, node Node) []string {
	cmd, up := "iptables", node.Uplink4
	if isIPv6(cidr) {
		cmd, up = "ip6tables", node.Uplink6
	}
	if up == nil || up.Src == "" || up.Dev == "" {
		return nil
	}
	return []string{
		fmt.Sprintf("post-up %s -t nat -A POSTROUTING -s '%s' -o %s -j SNAT --to-source %s", cmd, cidr, up.Dev, up.Src),
		fmt.Sprintf("post-down %s -t nat -D POSTROUTING -s '%s' -o %s -j SNAT --to-source %s", cmd, cidr, up.Dev, up.Src),
		fmt.Sprintf("post-up %s -t raw -I PREROUTING -i fwbr+ -j CT --zone 1", cmd),
		fmt.Sprintf("post-down %s -t raw -D PREROUTING -i fwbr+ -j CT --zone 1", cmd),
	}
}

// fabricStanzas appends the fabric interfaces: fabrics in id order, the
// dummy first, then the node's interfaces in configured order (§2.4).
func fabricStanzas(b *strings.Builder, cfg *Config, node Node) []string {
	var warn []string
	for _, fid := range sortedKeys(cfg.Fabrics) {
		fab := cfg.Fabrics[fid]
		me, ok := fab.Nodes[node.Name]
		if !ok {
			continue
		}
		stanza := func(name, cidr string, dummy bool) {
			fam := "inet"
			if isIPv6(cidr) {
				fam = "inet6"
			}
			fmt.Fprintf(b, "\nauto %s\niface %s %s static\n\taddress %s\n", name, name, fam, cidr)
			if dummy {
				b.WriteString("\tlink-type dummy\n")
			}
			b.WriteString("\tip-forward 1\n")
		}
		if me.IP != "" {
			stanza("dummy_"+fid, hostCIDR(me.IP), true)
		}
		if me.IP6 != "" {
			stanza("dummy_"+fid, hostCIDR(me.IP6), true)
		}
		for _, ifc := range me.Interfaces {
			switch fab.Protocol {
			case "openfabric":
				if ifc.IP != "" {
					stanza(ifc.Name, ifc.IP, false)
				}
				if ifc.IP6 != "" {
					stanza(ifc.Name, ifc.IP6, false)
				}
				if ifc.IP == "" && ifc.IP6 == "" {
					switch {
					case me.IP != "":
						stanza(ifc.Name, hostCIDR(me.IP), false)
					case me.IP6 != "":
						stanza(ifc.Name, hostCIDR(me.IP6), false)
					default:
						warn = append(warn, fmt.Sprintf("fabric %s: there has to be a ipv4 or ipv6 node address", fid))
					}
				}
			case "ospf":
				switch {
				case ifc.IP != "":
					stanza(ifc.Name, ifc.IP, false)
				case me.IP != "":
					stanza(ifc.Name, hostCIDR(me.IP), false)
				}
			}
		}
	}
	return warn
}

// hostCIDR is ip/32 or ip/128.
func hostCIDR(ip string) string {
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() {
		return ip + "/128"
	}
	return ip + "/32"
}
