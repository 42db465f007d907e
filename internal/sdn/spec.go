package sdn

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ID rules of PVE 9.1 (SDN-SEMANTICS §2). They are checked here, before any request, so a bad
// id fails with a message naming the option instead of a half-staged change.
var (
	zoneIDRe       = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*[A-Za-z0-9]$`)
	controllerIDRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*[A-Za-z0-9]$`)
	fabricIDRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,6}[A-Za-z0-9]?$`)
	nodeNameRe     = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`)
	ifaceRe        = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.-]{1,20}$`)
)

// CheckID validates an SDN id of kind k; field names the option in the message.
func CheckID(k Kind, field, id string) error {
	switch k {
	case KindZone, KindVNet:
		if len(id) > 8 {
			return fmt.Errorf("%s: %s id %q is %d characters; PVE allows at most 8 (it becomes part of Linux interface names such as vrf_%s)", field, k, id, len(id), id)
		}
		if !zoneIDRe.MatchString(id) {
			return fmt.Errorf("%s: %s id %q must be 2 to 8 letters and digits, starting with a letter", field, k, id)
		}
	case KindController:
		if len(id) > 64 || !controllerIDRe.MatchString(id) {
			return fmt.Errorf("%s: controller id %q must be 2 to 64 letters, digits, '-' or '_', starting with a letter", field, id)
		}
	case KindFabric:
		if len(id) > 8 || !fabricIDRe.MatchString(id) {
			return fmt.Errorf("%s: fabric id %q must be 1 to 8 letters, digits or inner '-' (PVE names the node interface dummy_<id>)", field, id)
		}
	case KindFabricNode:
		if !nodeNameRe.MatchString(id) {
			return fmt.Errorf("%s: node name %q is not a PVE node name", field, id)
		}
	}
	return nil
}

// ListProp renders a list property (fabric node interfaces) the way the pending view is normalised.
func ListProp(items []string) string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, normPropString(it))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// FabricNode is one member of the fabric.
type FabricNode struct {
	Name       string
	IP         netip.Addr // the VTEP loopback (router id)
	Interfaces []string   // underlay interfaces, as names or PVE property strings
}

// FabricSpec is the PVE 9 fabric, its members and the cluster's one EVPN controller.
type FabricSpec struct {
	ID         string
	Protocol   string // openfabric or ospf
	Prefix     netip.Prefix
	Area       string // ospf only
	Nodes      []FabricNode
	Controller string // "" leaves the controller alone
	ASN        int
}

// Validate checks the spec before anything is read or written.
func (f FabricSpec) Validate() error {
	if err := CheckID(KindFabric, "fabric", f.ID); err != nil {
		return err
	}
	if f.Protocol != "openfabric" && f.Protocol != "ospf" {
		return fmt.Errorf("protocol: %q must be openfabric or ospf", f.Protocol)
	}
	if !f.Prefix.IsValid() || !f.Prefix.Addr().Is4() {
		return fmt.Errorf("ip_prefix: %s must be an IPv4 prefix", f.Prefix)
	}
	if f.Protocol == "ospf" {
		if f.Area == "" {
			return fmt.Errorf("area: required with protocol ospf")
		}
		a, err := netip.ParseAddr(f.Area)
		if _, nerr := strconv.ParseUint(f.Area, 10, 32); nerr != nil && (err != nil || !a.Is4()) {
			return fmt.Errorf("area: %q must be an OSPF area id, a number 0..4294967295 or dotted IPv4", f.Area)
		}
	}
	seenIP := map[netip.Addr]string{}
	seenName := map[string]bool{}
	for i, n := range f.Nodes {
		field := fmt.Sprintf("nodes[%d]", i)
		if err := checkUniqueID(KindFabricNode, field+".name", "node", n.Name, seenName); err != nil {
			return err
		}
		if !f.Prefix.Contains(n.IP) {
			return fmt.Errorf("%s.ip: %s is outside the fabric prefix %s", field, n.IP, f.Prefix)
		}
		if other, dup := seenIP[n.IP]; dup {
			return fmt.Errorf("%s.ip: %s is already the loopback of %s", field, n.IP, other)
		}
		seenIP[n.IP] = n.Name
		if len(n.Interfaces) == 0 {
			return fmt.Errorf("%s.interfaces: at least one underlay interface is required", field)
		}
		for _, itf := range n.Interfaces {
			name := strings.TrimPrefix(strings.Split(itf, ",")[0], "name=")
			if !ifaceRe.MatchString(name) {
				return fmt.Errorf("%s.interfaces: %q is not an interface name", field, itf)
			}
		}
	}
	if f.Controller != "" {
		if err := CheckID(KindController, "controller", f.Controller); err != nil {
			return err
		}
		if f.ASN < 1 || int64(f.ASN) > 4294967295 {
			return fmt.Errorf("asn: %d is outside 1..4294967295", f.ASN)
		}
	}
	return nil
}

// Owned keys per kind for the fabric module.
var (
	fabricOwned     = []string{"protocol", "ip_prefix", "area"}
	fabricNodeOwned = []string{"protocol", "ip", "interfaces"}
	controllerOwned = []string{"type", "asn", "fabric", "peers"}
)

// Desired lists the objects of the spec.
func (f FabricSpec) Desired() []Desired {
	fp := Props{"protocol": f.Protocol, "ip_prefix": f.Prefix.Masked().String()}
	if f.Protocol == "ospf" {
		fp["area"] = f.Area
	}
	out := []Desired{{Object: Object{Kind: KindFabric, ID: f.ID, Props: fp}, Owned: fabricOwned}}
	for _, n := range f.Nodes {
		ifs := make([]string, 0, len(n.Interfaces))
		for _, i := range n.Interfaces {
			if !strings.Contains(i, "=") {
				i = "name=" + i
			}
			ifs = append(ifs, i)
		}
		out = append(out, Desired{Object: Object{Kind: KindFabricNode, ID: n.Name, Parent: f.ID,
			Props: Props{"protocol": f.Protocol, "ip": n.IP.String(), "interfaces": ListProp(ifs)}}, Owned: fabricNodeOwned})
	}
	if f.Controller != "" {
		out = append(out, Desired{Object: Object{Kind: KindController, ID: f.Controller,
			Props: Props{"type": "evpn", "asn": strconv.Itoa(f.ASN), "fabric": f.ID}}, Owned: controllerOwned})
	}
	return out
}

// VNetSpec is one tenant VNet with its one subnet.
type VNetSpec struct {
	ID      string
	Tag     int
	Subnet  netip.Prefix
	Gateway netip.Addr
}

// VRFSpec is a tenant's EVPN zone (its VRF), VNets and subnets.
type VRFSpec struct {
	Tenant     string // the tenant name, for messages
	Owner      string // the ownership mark written to every VNet's alias, e.g. "tenant-tdemo"
	Zone       string
	VRFVXLAN   int
	Controller string
	MTU        int
	Nodes      []string
	VNets      []VNetSpec
	Adopt      bool // take over an unmarked zone that matches by identity (adopt.go)
}

// Validate checks the spec before anything is read or written.
func (v VRFSpec) Validate() error {
	if err := CheckID(KindZone, "zone", v.Zone); err != nil {
		return err
	}
	if v.Owner == "" || len(v.Owner) > 256 {
		return fmt.Errorf("owner: the ownership mark must be 1..256 characters")
	}
	if v.VRFVXLAN < 1 || v.VRFVXLAN > 16777215 {
		return fmt.Errorf("vrf_vxlan: %d is outside 1..16777215", v.VRFVXLAN)
	}
	if err := CheckID(KindController, "controller", v.Controller); err != nil {
		return err
	}
	if v.MTU != 0 && (v.MTU < 576 || v.MTU > 65535) {
		return fmt.Errorf("mtu: %d is outside 576..65535", v.MTU)
	}
	for i, n := range v.Nodes {
		if err := CheckID(KindFabricNode, fmt.Sprintf("nodes[%d]", i), n); err != nil {
			return err
		}
	}
	if len(v.VNets) == 0 {
		return fmt.Errorf("vnets: a tenant needs at least one VNet")
	}
	ids, tags := map[string]bool{}, map[int]string{}
	for i, n := range v.VNets {
		field := fmt.Sprintf("vnets[%d]", i)
		if err := checkUniqueID(KindVNet, field+".id", "", n.ID, ids); err != nil {
			return err
		}
		if n.Tag < 1 || n.Tag > 16777215 {
			return fmt.Errorf("%s.tag: VNI %d is outside 1..16777215", field, n.Tag)
		}
		if n.Tag == v.VRFVXLAN {
			return fmt.Errorf("%s.tag: VNI %d equals the zone's vrf_vxlan", field, n.Tag)
		}
		if other, dup := tags[n.Tag]; dup {
			return fmt.Errorf("%s.tag: VNI %d is already used by %s", field, n.Tag, other)
		}
		tags[n.Tag] = n.ID
		if !n.Subnet.IsValid() || n.Subnet.Bits() < 8 {
			return fmt.Errorf("%s.subnet: %s must be a prefix of /8 or longer", field, n.Subnet)
		}
		if n.Subnet.Masked() != n.Subnet {
			return fmt.Errorf("%s.subnet: %s has host bits set; PVE would keep them in the subnet id", field, n.Subnet)
		}
		if n.Gateway.IsValid() && !n.Subnet.Contains(n.Gateway) {
			return fmt.Errorf("%s.gateway: %s is outside %s", field, n.Gateway, n.Subnet)
		}
	}
	return nil
}

// Owned keys per kind for the tenant module. Exit nodes are owned so that they stay absent:
// egress goes through the perimeter (ADR-0003), never through PVE's exit nodes.
var (
	zoneOwned   = []string{"type", "controller", "vrf-vxlan", "mtu", "nodes", "exitnodes", "exitnodes-primary", "exitnodes-local-routing"}
	vnetOwned   = []string{"zone", "tag", "alias", "vlanaware"}
	subnetOwned = []string{"gateway", "snat"}
)

// ownedKeys are the keys each kind's diff shows for an object being deleted.
var ownedKeys = map[Kind][]string{
	KindFabric: fabricOwned, KindFabricNode: fabricNodeOwned, KindController: controllerOwned,
	KindZone: zoneOwned, KindVNet: vnetOwned, KindSubnet: subnetOwned,
}

// Desired lists the zone, VNets and subnets of the spec.
func (v VRFSpec) Desired() []Desired {
	zp := Props{"type": "evpn", "controller": v.Controller, "vrf-vxlan": strconv.Itoa(v.VRFVXLAN)}
	if v.MTU != 0 {
		zp["mtu"] = strconv.Itoa(v.MTU)
	}
	if len(v.Nodes) > 0 {
		zp["nodes"] = normSet(strings.Join(v.Nodes, ","))
	}
	out := []Desired{{Object: Object{Kind: KindZone, ID: v.Zone, Props: zp}, Owned: zoneOwned}}
	for _, n := range v.VNets {
		out = append(out, Desired{Object: Object{Kind: KindVNet, ID: n.ID,
			Props: Props{"zone": v.Zone, "tag": strconv.Itoa(n.Tag), "alias": v.Owner}}, Owned: vnetOwned})
		sp := Props{}
		if n.Gateway.IsValid() {
			sp["gateway"] = n.Gateway.String()
		}
		out = append(out, Desired{Object: Object{Kind: KindSubnet, ID: SubnetID(v.Zone, n.Subnet.String()), Parent: n.ID, Props: sp}, Owned: subnetOwned})
	}
	return out
}

// checkUniqueID checks id against kind's ID rule and that no earlier list entry had it (seen
// records it); what names the entry in the message ("node"), or nothing.
func checkUniqueID(kind Kind, field, what, id string, seen map[string]bool) error {
	if err := CheckID(kind, field, id); err != nil {
		return err
	}
	if seen[id] {
		if what != "" {
			return fmt.Errorf("%s: %s %s is listed twice", field, what, id)
		}
		return fmt.Errorf("%s: %s is listed twice", field, id)
	}
	seen[id] = true
	return nil
}
