// Package wire is what a tenant VM's ports may send on its node (docs/adr/0016-tenant-wire.md):
// from PVE's own objects - each VM's NICs and cloud-init addresses, each VNet's owner mark and
// subnets - it derives, with no I/O, the nftables table the envelope guard loads on every node.
//
// PVE's own answers (the firewall's macfilter and ipfilter, a NIC's rate) are options of the VM's
// configuration, which the tenant's token sets (VM.Config.Network), so they bind nothing. The table
// is the substrate's: a frame a VM sends on a port of a tenant VNet passes only with the NIC's MAC
// and the NIC's own IPv4 address, as IPv4 or ARP, within the tenant's rate; everything else from
// such a port, a port the table does not know yet included, is dropped before the bridge learns
// its source (the bridge family's prerouting hook runs before br_handle_frame_finish's FDB update).
package wire

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Table is the nftables table the guard owns on each node.
const Table = "deevnet_wire"

// VNetPrefix starts every tenant VNet's id (ADR-0002: tn<index>v<n>): the table's scope. A VM
// port on any other bridge (the operator's own VMs on vmbr0) is not touched.
const VNetPrefix = "tn"

// Tenant is one tenant of the envelope file: its pool (whose VMs are its) and the wire's limits,
// 0 for none.
type Tenant struct {
	Name      string
	Pool      string
	Bandwidth int // Mbit/s
	Broadcast int // frames/s
}

// VNet is one applied SDN VNet: its owner mark (the alias the substrate writes, "tenant-<name>";
// a tenant cannot write SDN objects) and its subnets.
type VNet struct {
	ID      string
	Alias   string
	Subnets []netip.Prefix
}

// Guest is a VM whose ports are on this node (running here, or starting here), with the
// configuration it runs with.
type Guest struct {
	VMID   int
	Pool   string
	Config map[string]any
}

// Port is one NIC admitted: the names its frames enter a tenant VNet by (the tap, or with PVE's
// firewall on the NIC the fwpr veth between the NIC's firewall bridge and the VNet), the MAC and
// the one IPv4 source it may use.
type Port struct {
	Tenant string
	VMID   int
	Net    string // net0
	VNet   string
	MAC    net.HardwareAddr
	IP     netip.Addr
}

// Tap is the port's tap device, as qemu-server names it (tap<vmid>i<n>).
func (p Port) Tap() string { return fmt.Sprintf("tap%di%s", p.VMID, strings.TrimPrefix(p.Net, "net")) }

// FirewallPeer is the veth PVE plugs into the VNet in the tap's place when the NIC has firewall=1
// (pve-common PVE::Network: fwpr<vmid>p<n>).
func (p Port) FirewallPeer() string {
	return fmt.Sprintf("fwpr%dp%s", p.VMID, strings.TrimPrefix(p.Net, "net"))
}

// Plan is the table's content: the admitted ports, the tenants whose ports are here, and, for
// each NIC of a tenant VM not admitted, why (its frames are dropped).
type Plan struct {
	Ports   []Port
	Tenants []Tenant
	Refused []string
}

var netKey = regexp.MustCompile(`^net(\d+)$`)

// models are qemu-server's NIC models, the key that carries the MAC (`virtio=BC:24:...`).
var models = []string{"e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "e1000e", "i82551", "i82557b",
	"i82559er", "ne2k_isa", "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3"}

// Build admits, for each guest of a tenant's pool, each NIC that sits on one of the tenant's own
// VNets with a MAC and a cloud-init address inside that VNet's subnets: at most one NIC per VNet
// per VM, and no address twice in one tenant. Guests in no tenant's pool are not this table's.
func Build(tenants []Tenant, vnets []VNet, guests []Guest) Plan {
	byPool := map[string]Tenant{}
	for _, t := range tenants {
		byPool[t.Pool] = t
	}
	vnetByID := map[string]VNet{}
	for _, v := range vnets {
		vnetByID[v.ID] = v
	}
	var p Plan
	here := map[string]bool{}
	used := map[string]map[netip.Addr]string{} // tenant -> address -> the port holding it
	guests = slices.Clone(guests)
	slices.SortFunc(guests, func(a, b Guest) int { return a.VMID - b.VMID })
	for _, g := range guests {
		t, ok := byPool[g.Pool]
		if !ok {
			continue
		}
		onVNet := map[string]string{}
		for _, key := range netKeys(g.Config) {
			refuse := func(why string, args ...any) {
				p.Refused = append(p.Refused, fmt.Sprintf("tenant %s: VM %d %s: %s: its frames are dropped", t.Name, g.VMID, key, fmt.Sprintf(why, args...)))
			}
			nic, err := parseNet(fmt.Sprint(g.Config[key]))
			if err != nil {
				refuse("%v", err)
				continue
			}
			if nic.linkDown {
				continue // no frame passes a NIC whose link is down: nothing to admit
			}
			v, ok := vnetByID[nic.bridge]
			if !ok || v.Alias != t.Pool || !strings.HasPrefix(v.ID, VNetPrefix) {
				refuse("bridge %s is not one of the tenant's VNets", nic.bridge)
				continue
			}
			if other, ok := onVNet[v.ID]; ok {
				refuse("a second NIC on VNet %s (%s is on it already): one NIC per VNet per VM", v.ID, other)
				continue
			}
			ip, err := ipconfigAddr(g.Config, key)
			if err != nil {
				refuse("%v", err)
				continue
			}
			if !slices.ContainsFunc(v.Subnets, func(s netip.Prefix) bool { return s.Contains(ip) }) {
				refuse("ipconfig%s address %s is in none of VNet %s's subnets (%s)", strings.TrimPrefix(key, "net"), ip, v.ID, prefixes(v.Subnets))
				continue
			}
			if used[t.Name] == nil {
				used[t.Name] = map[netip.Addr]string{}
			}
			if holder, ok := used[t.Name][ip]; ok {
				refuse("address %s is %s's already", ip, holder)
				continue
			}
			port := Port{Tenant: t.Name, VMID: g.VMID, Net: key, VNet: v.ID, MAC: nic.mac, IP: ip}
			used[t.Name][ip] = fmt.Sprintf("VM %d %s", g.VMID, key)
			onVNet[v.ID] = key
			p.Ports = append(p.Ports, port)
			if !here[t.Name] {
				here[t.Name] = true
				p.Tenants = append(p.Tenants, t)
			}
		}
	}
	slices.SortFunc(p.Tenants, func(a, b Tenant) int { return strings.Compare(a.Name, b.Name) })
	return p
}

// netKeys are the config's netN keys in N's order.
func netKeys(c map[string]any) []string {
	var keys []string
	for k := range c {
		if netKey.MatchString(k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, _ := strconv.Atoi(strings.TrimPrefix(a, "net"))
		y, _ := strconv.Atoi(strings.TrimPrefix(b, "net"))
		return x - y
	})
	return keys
}

type nic struct {
	mac      net.HardwareAddr
	bridge   string
	linkDown bool
}

// parseNet reads qemu-server's netN property string: `[model=]MAC` or `macaddr=`, `bridge=`,
// `link_down=`.
func parseNet(s string) (nic, error) {
	var n nic
	var mac string
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch {
		case k == "bridge":
			n.bridge = v
		case k == "macaddr":
			mac = v
		case k == "link_down":
			n.linkDown = v == "1"
		case slices.Contains(models, k):
			if mac == "" {
				mac = v
			}
		}
	}
	if n.bridge == "" {
		return nic{}, fmt.Errorf("no bridge in %q", s)
	}
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return nic{}, fmt.Errorf("no Ethernet MAC in %q", s)
	}
	if hw[0]&1 == 1 {
		return nic{}, fmt.Errorf("MAC %s is a group address", hw)
	}
	n.mac = hw
	return n, nil
}

// ipconfigAddr is the IPv4 address of ipconfigN (`ip=10.20.129.11/24,gw=...`), the one cloud-init
// gives the NIC.
func ipconfigAddr(c map[string]any, netKey string) (netip.Addr, error) {
	key := "ipconfig" + strings.TrimPrefix(netKey, "net")
	s, ok := c[key].(string)
	if !ok || s == "" {
		return netip.Addr{}, fmt.Errorf("no %s: a NIC without a static IPv4 address may send nothing", key)
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if k != "ip" {
			continue
		}
		pfx, err := netip.ParsePrefix(v)
		if err != nil || !pfx.Addr().Is4() {
			return netip.Addr{}, fmt.Errorf("%s ip=%s is not a static IPv4 address/prefix (dhcp is not admitted)", key, v)
		}
		return pfx.Addr(), nil
	}
	return netip.Addr{}, fmt.Errorf("%s %q has no ip=", key, s)
}

func prefixes(ps []netip.Prefix) string {
	if len(ps) == 0 {
		return "none"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// Bound is what the plan lets the tenants' ports make this node learn: one FDB entry (and one
// EVPN type-2 MAC route) and one neighbour entry (one MAC/IP route) per admitted port.
func (p Plan) Bound(tenant string) (macs, ips int) {
	for _, port := range p.Ports {
		if port.Tenant == tenant {
			macs++
			ips++
		}
	}
	return macs, ips
}
