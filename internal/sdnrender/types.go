package sdnrender

// Config is the running SDN snapshot (PVE's .running-config), in this
// package's own small types. Maps are keyed by object id.
type Config struct {
	Version     int                   `yaml:"version" json:"version"`
	Zones       map[string]Zone       `yaml:"zones" json:"zones"`
	VNets       map[string]VNet       `yaml:"vnets" json:"vnets"`
	Subnets     map[string]Subnet     `yaml:"subnets" json:"subnets"` // id <zone>-<network>-<mask>
	Controllers map[string]Controller `yaml:"controllers" json:"controllers"`
	Fabrics     map[string]Fabric     `yaml:"fabrics" json:"fabrics"`
	// PendingSubnets are the current (not yet applied) subnets; exit-node
	// null routes read them (PVE quirk). Nil means "same as Subnets".
	PendingSubnets map[string]Subnet `yaml:"pending_subnets,omitempty" json:"pending_subnets,omitempty"`
}

// Zone is an SDN zone; only type evpn renders anything.
type Zone struct {
	Type                    string   `yaml:"type" json:"type"`
	Controller              string   `yaml:"controller" json:"controller"`
	VRFVXLAN                int      `yaml:"vrf_vxlan" json:"vrf_vxlan"`
	MTU                     int      `yaml:"mtu,omitempty" json:"mtu,omitempty"`
	MAC                     string   `yaml:"mac,omitempty" json:"mac,omitempty"`
	Nodes                   []string `yaml:"nodes,omitempty" json:"nodes,omitempty"`
	ExitNodes               []string `yaml:"exitnodes,omitempty" json:"exitnodes,omitempty"`
	ExitNodesPrimary        string   `yaml:"exitnodes_primary,omitempty" json:"exitnodes_primary,omitempty"`
	ExitNodesLocalRouting   bool     `yaml:"exitnodes_local_routing,omitempty" json:"exitnodes_local_routing,omitempty"`
	AdvertiseSubnets        bool     `yaml:"advertise_subnets,omitempty" json:"advertise_subnets,omitempty"`
	DisableARPNDSuppression bool     `yaml:"disable_arp_nd_suppression,omitempty" json:"disable_arp_nd_suppression,omitempty"`
	RTImport                []string `yaml:"rt_import,omitempty" json:"rt_import,omitempty"`
	VXLANPort               int      `yaml:"vxlan_port,omitempty" json:"vxlan_port,omitempty"`
}

// VNet is a virtual network of a zone; Tag is its VNI.
type VNet struct {
	Zone  string `yaml:"zone" json:"zone"`
	Tag   int    `yaml:"tag" json:"tag"`
	Alias string `yaml:"alias,omitempty" json:"alias,omitempty"`
}

// Subnet belongs to a vnet; its network and mask come from its id.
type Subnet struct {
	VNet    string `yaml:"vnet" json:"vnet"`
	Gateway string `yaml:"gateway,omitempty" json:"gateway,omitempty"`
	SNAT    bool   `yaml:"snat,omitempty" json:"snat,omitempty"`
}

// Controller is an SDN controller; only type evpn renders anything.
type Controller struct {
	Type   string   `yaml:"type" json:"type"`
	ASN    int64    `yaml:"asn" json:"asn"`
	Peers  []string `yaml:"peers,omitempty" json:"peers,omitempty"`
	Fabric string   `yaml:"fabric,omitempty" json:"fabric,omitempty"`
}

// Fabric is an openfabric or ospf fabric with its member nodes.
type Fabric struct {
	Protocol      string                `yaml:"protocol" json:"protocol"` // openfabric|ospf
	IPPrefix      string                `yaml:"ip_prefix,omitempty" json:"ip_prefix,omitempty"`
	IP6Prefix     string                `yaml:"ip6_prefix,omitempty" json:"ip6_prefix,omitempty"`
	HelloInterval string                `yaml:"hello_interval,omitempty" json:"hello_interval,omitempty"`
	CSNPInterval  string                `yaml:"csnp_interval,omitempty" json:"csnp_interval,omitempty"`
	Area          string                `yaml:"area,omitempty" json:"area,omitempty"`
	Nodes         map[string]FabricNode `yaml:"nodes" json:"nodes"` // by node name
}

// FabricNode is one node's entry in a fabric.
type FabricNode struct {
	IP         string            `yaml:"ip,omitempty" json:"ip,omitempty"`
	IP6        string            `yaml:"ip6,omitempty" json:"ip6,omitempty"`
	Interfaces []FabricInterface `yaml:"interfaces,omitempty" json:"interfaces,omitempty"`
}

// FabricInterface is one interface of a fabric node, in configured order.
type FabricInterface struct {
	Name            string `yaml:"name" json:"name"`
	IP              string `yaml:"ip,omitempty" json:"ip,omitempty"`   // CIDR
	IP6             string `yaml:"ip6,omitempty" json:"ip6,omitempty"` // CIDR
	HelloMultiplier int    `yaml:"hello_multiplier,omitempty" json:"hello_multiplier,omitempty"`
}

// Route is what `ip route get` answers on a node: the source address and
// the device towards a destination.
type Route struct {
	Src string `yaml:"src" json:"src"`
	Dev string `yaml:"dev" json:"dev"`
}

// Node is the node being rendered and the node-local facts PVE reads.
type Node struct {
	Name string `yaml:"name" json:"name"`
	// LocalIP is the node's underlay IP for an EVPN controller in peers
	// mode (PVE finds it in /etc/network/interfaces); fabric mode ignores it.
	LocalIP string `yaml:"local_ip,omitempty" json:"local_ip,omitempty"`
	// MAC is the MAC of the interface holding an IPv6 LocalIP: PVE builds
	// the BGP router-id from its last 4 bytes.
	MAC string `yaml:"mac,omitempty" json:"mac,omitempty"`
	// Uplink4/Uplink6 answer `ip route get 8.8.8.8` / `2001:4860:4860::8888`
	// for SNAT on exit nodes; nil means no route (no SNAT lines).
	Uplink4 *Route `yaml:"uplink4,omitempty" json:"uplink4,omitempty"`
	Uplink6 *Route `yaml:"uplink6,omitempty" json:"uplink6,omitempty"`
}

// Files is what apply leaves on one node.
type Files struct {
	Interfaces string // /etc/network/interfaces.d/sdn
	FRR        string // /etc/frr/frr.conf
	Fabricd    bool   // /etc/frr/daemons fabricd=yes
	Ospfd      bool   // /etc/frr/daemons ospfd=yes
	// Warnings are what PVE prints and skips (a vnet it cannot place, ...).
	Warnings []string
}

// Daemons is the daemons.pve text: the two lines PVE sets in /etc/frr/daemons.
func (f Files) Daemons() string {
	return "fabricd=" + yesNo(f.Fabricd) + "\nospfd=" + yesNo(f.Ospfd) + "\n"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
