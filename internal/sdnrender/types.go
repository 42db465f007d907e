package sdnrender

// Config is the running SDN snapshot (PVE's .running-config), in this
// package's own small types (FromObjects builds it from PVE's objects). Maps are keyed by object id.
type Config struct {
	Version     int
	Zones       map[string]Zone
	VNets       map[string]VNet
	Subnets     map[string]Subnet // id <zone>-<network>-<mask>
	Controllers map[string]Controller
	Fabrics     map[string]Fabric
	// PendingSubnets are the current (not yet applied) subnets; exit-node
	// null routes read them (PVE quirk). Nil means "same as Subnets".
	PendingSubnets map[string]Subnet
}

// Zone is an SDN zone; only type evpn renders anything.
type Zone struct {
	Type                    string
	Controller              string
	VRFVXLAN                int
	MTU                     int
	MAC                     string
	Nodes                   []string
	ExitNodes               []string
	ExitNodesPrimary        string
	ExitNodesLocalRouting   bool
	AdvertiseSubnets        bool
	DisableARPNDSuppression bool
	RTImport                []string
	VXLANPort               int
}

// VNet is a virtual network of a zone; Tag is its VNI.
type VNet struct {
	Zone  string
	Tag   int
	Alias string
}

// Subnet belongs to a vnet; its network and mask come from its id.
type Subnet struct {
	VNet    string
	Gateway string
	SNAT    bool
}

// Controller is an SDN controller; only type evpn renders anything.
type Controller struct {
	Type   string
	ASN    int64
	Peers  []string
	Fabric string
}

// Fabric is an openfabric or ospf fabric with its member nodes.
type Fabric struct {
	Protocol      string // openfabric|ospf
	IPPrefix      string
	IP6Prefix     string
	HelloInterval string
	CSNPInterval  string
	Area          string
	Nodes         map[string]FabricNode // by node name
}

// FabricNode is one node's entry in a fabric.
type FabricNode struct {
	IP         string
	IP6        string
	Interfaces []FabricInterface
}

// FabricInterface is one interface of a fabric node, in configured order.
type FabricInterface struct {
	Name            string
	IP              string // CIDR
	IP6             string // CIDR
	HelloMultiplier int
}

// Route is what `ip route get` answers on a node: the source address and
// the device towards a destination.
type Route struct {
	Src string `yaml:"src"`
	Dev string `yaml:"dev"`
}

// Node is the node being rendered and the node-local facts PVE reads.
type Node struct {
	Name string `yaml:"name"`
	// LocalIP is the node's underlay IP for an EVPN controller in peers
	// mode (PVE finds it in /etc/network/interfaces); fabric mode ignores it.
	LocalIP string `yaml:"local_ip,omitempty"`
	// MAC is the MAC of the interface holding an IPv6 LocalIP: PVE builds
	// the BGP router-id from its last 4 bytes.
	MAC string `yaml:"mac,omitempty"`
	// Uplink4/Uplink6 answer `ip route get 8.8.8.8` / `2001:4860:4860::8888`
	// for SNAT on exit nodes; nil means no route (no SNAT lines).
	Uplink4 *Route `yaml:"uplink4,omitempty"`
	Uplink6 *Route `yaml:"uplink6,omitempty"`
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
