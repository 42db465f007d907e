package pvesim

// A node's network, GET /nodes/{node}/network: what pve-manager's API2::Network index returns
// from the node's /etc/network/interfaces (PVE::INotify's parser) plus, for the bridge filters,
// the SDN VNets of the running config that the caller may see (PVE::Network::SDN's
// get_local_vnets). pvesim has no interfaces file: each node's interfaces are declared in the
// config (NodeConfig.Network), the installer's eno1 + vmbr0 when a node declares none.

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// IfaceConfig is one stanza of a node's interfaces file, with INotify's names for its fields.
type IfaceConfig struct {
	Iface string `yaml:"iface" json:"iface"`
	// Type is INotify's: eth, bridge, bond, vlan, OVSBridge, ...; when empty it is derived from
	// the name as INotify does (typeOf).
	Type        string `yaml:"type" json:"type,omitempty"`
	BridgePorts string `yaml:"bridge_ports" json:"bridge_ports,omitempty"` // space separated, as in the file
	VLANAware   bool   `yaml:"bridge_vlan_aware" json:"bridge_vlan_aware,omitempty"`
	BridgeVIDs  string `yaml:"bridge_vids" json:"bridge_vids,omitempty"`
	CIDR        string `yaml:"cidr" json:"cidr,omitempty"` // IPv4 address/prefix; method static when set
	Gateway     string `yaml:"gateway" json:"gateway,omitempty"`
	// VLANRawDevice and VLANID describe a vlan interface (vmbr0.50 has them implicitly).
	VLANRawDevice string `yaml:"vlan-raw-device" json:"vlan-raw-device,omitempty"`
	VLANID        int    `yaml:"vlan-id" json:"vlan-id,omitempty"`
	Comments      string `yaml:"comments" json:"comments,omitempty"`
}

// defaultNetwork is what the PVE installer writes: one port and vmbr0 on it.
func defaultNetwork() []IfaceConfig {
	return []IfaceConfig{{Iface: "eno1", Type: "eth"}, {Iface: "vmbr0", Type: "bridge", BridgePorts: "eno1"}}
}

// network is node n's declared interfaces, or the installer's.
func (n NodeConfig) network() []IfaceConfig {
	if len(n.Network) == 0 {
		return defaultNetwork()
	}
	return n.Network
}

// bridges is the node's own bridges: NodeConfig.Bridges when given, else the bridges of its network.
func (n NodeConfig) bridges() []string {
	if len(n.Bridges) > 0 {
		return n.Bridges
	}
	var out []string
	for _, i := range n.network() {
		if isBridgeType(i.typeOf()) {
			out = append(out, i.Iface)
		}
	}
	return out
}

func isBridgeType(t string) bool { return t == "bridge" || t == "OVSBridge" }

// INotify's names: only vmbrN is a Linux bridge, X.N a VLAN, bondN a bond, a physical NIC
// (PVE::Network::PHYSICAL_NIC_RE) eth; anything else is "unknown".
var (
	vmbrName = regexp.MustCompile(`^vmbr\d+$`)
	vlanName = regexp.MustCompile(`^\S+\.\d+$`)
	bondName = regexp.MustCompile(`^bond\d+$`)
	nicName  = regexp.MustCompile(`^(?:eth\d+|en[^:.]+|ib[^:.]+)$`)
)

// typeOf is f's declared type, or the one INotify gives its name.
func (f IfaceConfig) typeOf() string {
	switch {
	case f.Type != "":
		return f.Type
	case vmbrName.MatchString(f.Iface):
		return "bridge"
	case vlanName.MatchString(f.Iface) || f.VLANRawDevice != "":
		return "vlan"
	case bondName.MatchString(f.Iface):
		return "bond"
	case nicName.MatchString(f.Iface):
		return "eth"
	}
	return "unknown"
}

// checkNetwork refuses a node network pvesim could not have read from an interfaces file.
func (n NodeConfig) checkNetwork() error {
	seen := map[string]bool{}
	for i, f := range n.Network {
		if f.Iface == "" || seen[f.Iface] {
			return fmt.Errorf("node %s: network[%d]: iface %q is empty or given twice", n.Name, i, f.Iface)
		}
		seen[f.Iface] = true
		if f.CIDR != "" {
			if p, err := netip.ParsePrefix(f.CIDR); err != nil || !p.Addr().Is4() {
				return fmt.Errorf("node %s: network[%d] (%s): cidr %q is not an IPv4 address/prefix", n.Name, i, f.Iface, f.CIDR)
			}
		}
	}
	return nil
}

// nodeNetworkRoutes: the node network index (read only; pvesim never rewrites a node's interfaces).
func (s *Server) nodeNetworkRoutes() routes {
	return routes{"GET /nodes/{node}/network": s.nodeNetwork}
}

func (s *Server) nodeNetwork(r *reqCtx) (any, error) {
	name := r.params.Str("node")
	var node *NodeConfig
	for i := range s.st.Nodes {
		if s.st.Nodes[i].Name == name {
			node = &s.st.Nodes[i]
		}
	}
	if node == nil {
		return nil, plainErr("no such cluster node '%s'", name)
	}
	filter := r.params.Str("type")
	out := []map[string]any{}
	if filter != "include_sdn" {
		for i, f := range node.network() {
			typ := f.typeOf()
			bridgeMatch := isBridgeType(typ) && (filter == "any_bridge" || filter == "any_local_bridge")
			if filter != "" && filter != typ && !bridgeMatch {
				continue
			}
			out = append(out, ifaceView(f, typ, i+2)) // INotify numbers from 2 (1 is lo, never listed)
		}
	}
	if filter == "any_bridge" || filter == "include_sdn" || filter == "vnet" {
		out = append(out, s.localVNets(r.who, name)...)
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(a["iface"].(string), b["iface"].(string)) })
	return out, nil
}

// ifaceView is one interface as INotify parses it and the API returns it.
func ifaceView(f IfaceConfig, typ string, prio int) map[string]any {
	v := map[string]any{"iface": f.Iface, "type": typ, "priority": prio, "families": []string{"inet"},
		"method": "manual", "method6": "manual", "active": 1, "autostart": 1}
	if typ == "eth" {
		v["exists"] = 1
	}
	if f.CIDR != "" {
		p := netip.MustParsePrefix(f.CIDR) // checkNetwork ran at start
		v["method"], v["cidr"], v["address"], v["netmask"] = "static", f.CIDR, p.Addr().String(), fmt.Sprint(p.Bits())
	}
	if f.Gateway != "" {
		v["gateway"] = f.Gateway
	}
	if isBridgeType(typ) {
		// INotify drops "none" from bridge-ports: a bridge without ports has "".
		v["bridge_ports"], v["bridge_stp"], v["bridge_fd"] = strings.Join(strings.Fields(strings.ReplaceAll(f.BridgePorts, "none", "")), " "), "off", "0"
		if f.VLANAware {
			v["bridge_vlan_aware"] = 1
			v["bridge_vids"] = f.BridgeVIDs
			if f.BridgeVIDs == "" {
				v["bridge_vids"] = "2-4094"
			}
		}
	}
	// Only what the file says: vmbr0.50 has no vlan-raw-device or vlan-id of its own.
	if f.VLANRawDevice != "" {
		v["vlan-raw-device"] = f.VLANRawDevice
	}
	if f.VLANID != 0 {
		v["vlan-id"] = fmt.Sprint(f.VLANID)
	}
	if f.Comments != "" {
		v["comments"] = f.Comments + "\n" // each comment line keeps its newline
	}
	return v
}

// localVNets is get_local_vnets: the running config's VNets of zones on this node that the
// caller holds SDN.Audit or SDN.Use on.
func (s *Server) localVNets(who principal, node string) []map[string]any {
	var out []map[string]any
	run := s.st.SDN.Running
	for _, id := range sortedKeys(run["vnets"]) {
		vn := run["vnets"][id]
		zone := fmt.Sprint(vn["zone"])
		z, ok := run["zones"][zone]
		if !ok || !s.st.has(who, "/sdn/zones/"+zone+"/"+id, []string{"SDN.Audit", "SDN.Use"}, true) {
			continue
		}
		if nodes, set := z["nodes"]; set && !slices.Contains(strings.Split(fmt.Sprint(nodes), ","), node) {
			continue
		}
		v := map[string]any{"iface": id, "type": "vnet", "active": "1", "ipam": boolInt(z["ipam"] != nil && fmt.Sprint(z["ipam"]) != ""),
			"vlanaware": boolInt(fmt.Sprint(vn["vlanaware"]) == "1")}
		if a, ok := vn["alias"]; ok {
			v["comments"] = a
		}
		out = append(out, v)
	}
	return out
}
