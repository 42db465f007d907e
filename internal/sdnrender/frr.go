package sdnrender

import (
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The FRR object PVE builds before the proxmox-frr templates print it.
type frrConf struct {
	vrfs        map[string]*frrVRF
	routers     map[string]*bgpRouter // "default" or vrf_<zone>
	prefixLists map[string][]string   // rendered lines
	ofRouters   map[string]string     // fabric -> NET
	ofIfaces    map[string]*ofIface
	ospfRouter  string // router-id; "" = no router
	ospfIfaces  map[string]*ospfIface
	accessLists map[string][]string
	routeMaps   map[string][]routeMap
	ipRoutes    []string
	protoOspf   string
	protoOF4    string
	protoOF6    string
}

type frrVRF struct {
	vni    int
	routes []string
}

type bgpRouter struct {
	asn        int64
	routerID   string
	isDefault  bool
	groups     []neighborGroup
	ipv4, ipv6 *unicastAF
	evpn       *evpnAF
}

type neighborGroup struct {
	name, remoteAS, updateSource string
	ips                          []string
}

type unicastAF struct {
	importVRF    []string
	redistribute []string
}

type evpnAF struct {
	neighbors        bool
	advertiseAllVNI  bool
	defaultOriginate []string
	adv4, adv6       bool
	rtImport         []string
}

type routeMap struct {
	action  string
	seq     int
	matches []string
	sets    []string
}

type ofIface struct {
	fabric                  string
	v4, v6, passive         bool
	hello, csnp, multiplier string
}

type ospfIface struct {
	area         string
	passive, p2p bool
}

func newFRR() *frrConf {
	return &frrConf{vrfs: map[string]*frrVRF{}, routers: map[string]*bgpRouter{}, prefixLists: map[string][]string{},
		ofRouters: map[string]string{}, ofIfaces: map[string]*ofIface{}, ospfIfaces: map[string]*ospfIface{},
		accessLists: map[string][]string{}, routeMaps: map[string][]routeMap{}}
}

// renderFRR builds /etc/frr/frr.conf (NODE-RENDERING §3).
func renderFRR(cfg *Config, node Node) (string, []string) {
	f := newFRR()
	var warn []string
	for _, id := range sortedKeys(cfg.Controllers) {
		if ctl := cfg.Controllers[id]; ctl.Type == "evpn" {
			if err := f.evpnController(cfg, id, ctl, node); err != nil {
				warn = append(warn, err.Error())
			}
		}
	}
	for _, id := range sortedKeys(cfg.Zones) {
		zone := cfg.Zones[id]
		ctl, ok := cfg.Controllers[zone.Controller]
		if zone.Type != "evpn" || !ok || ctl.Type != "evpn" {
			continue
		}
		f.evpnZone(cfg, id, zone, ctl, node)
	}
	for _, id := range sortedKeys(cfg.VNets) {
		vnet := cfg.VNets[id]
		zone, ok := cfg.Zones[vnet.Zone]
		if !ok || zone.Type != "evpn" || !zone.ExitNodesLocalRouting || !slices.Contains(zone.ExitNodes, node.Name) {
			continue
		}
		if ctl, ok := cfg.Controllers[zone.Controller]; !ok || ctl.Type != "evpn" {
			continue
		}
		for _, sid := range sortedKeys(cfg.Subnets) {
			if cfg.Subnets[sid].VNet != id {
				continue
			}
			if _, network, mask, ok := subnetCIDR(sid); ok {
				if isIPv6(network) {
					f.ipRoutes = append(f.ipRoutes, fmt.Sprintf("ipv6 route %s/%s fe80::2 xvrf_%s", network, mask, vnet.Zone))
				} else {
					f.ipRoutes = append(f.ipRoutes, fmt.Sprintf("ip route %s/%s 10.255.255.2 xvrf_%s", network, mask, vnet.Zone))
				}
			}
		}
	}
	// MAP_VTEP_* are renumbered 1..n after controllers and zones
	for _, name := range []string{"MAP_VTEP_IN", "MAP_VTEP_OUT"} {
		for i := range f.routeMaps[name] {
			f.routeMaps[name][i].seq = i + 1
		}
	}
	f.fabrics(cfg, node)
	return f.String(node.Name), warn
}

func (f *frrConf) evpnController(cfg *Config, id string, ctl Controller, node Node) error {
	p, err := place(cfg, id, ctl, node)
	if err != nil {
		return err
	}
	if ctl.ASN == 0 || p.routerID == "" {
		return nil
	}
	r, ok := f.routers["default"]
	if !ok {
		r = &bgpRouter{asn: ctl.ASN, routerID: p.routerID, isDefault: true}
		f.routers["default"] = r
	}
	r.groups = append(r.groups, neighborGroup{name: "VTEP", remoteAS: strconv.FormatInt(ctl.ASN, 10), updateSource: p.updateSource, ips: p.peers})
	if r.evpn == nil {
		r.evpn = &evpnAF{neighbors: true, advertiseAllVNI: true}
	}
	f.routeMaps["MAP_VTEP_IN"] = append(f.routeMaps["MAP_VTEP_IN"], routeMap{action: "permit"})
	f.routeMaps["MAP_VTEP_OUT"] = append(f.routeMaps["MAP_VTEP_OUT"], routeMap{action: "permit"})
	return nil
}

func (f *frrConf) evpnZone(cfg *Config, id string, zone Zone, ctl Controller, node Node) {
	p, err := place(cfg, zone.Controller, ctl, node)
	if err != nil || ctl.ASN == 0 || zone.VRFVXLAN == 0 || p.routerID == "" {
		return
	}
	vrf := "vrf_" + id
	exit := slices.Contains(zone.ExitNodes, node.Name)
	r := &bgpRouter{asn: ctl.ASN, routerID: p.routerID}
	f.routers[vrf] = r
	v := &frrVRF{vni: zone.VRFVXLAN}
	f.vrfs[vrf] = v
	if exit {
		v.routes = nullRoutes(cfg, id)
		if _, ok := f.prefixLists["only_default"]; !ok {
			f.prefixLists["only_default"] = []string{"ip prefix-list only_default seq 1 permit 0.0.0.0/0"}
		}
		if _, ok := f.prefixLists["only_default_v6"]; !ok {
			f.prefixLists["only_default_v6"] = []string{"ipv6 prefix-list only_default_v6 seq 1 permit ::/0"}
		}
		m4 := "ip address prefix-list only_default"
		m6 := "ipv6 address prefix-list only_default_v6"
		if zone.ExitNodesPrimary == "" || zone.ExitNodesPrimary == node.Name {
			f.routeMaps["MAP_VTEP_IN"] = append([]routeMap{{action: "deny", matches: []string{m4}}, {action: "deny", matches: []string{m6}}}, f.routeMaps["MAP_VTEP_IN"]...)
		} else {
			set := []string{"metric 200"}
			f.routeMaps["MAP_VTEP_OUT"] = append([]routeMap{{action: "permit", matches: []string{m4}, sets: set}, {action: "permit", matches: []string{m6}, sets: set}}, f.routeMaps["MAP_VTEP_OUT"]...)
		}
		if !zone.ExitNodesLocalRouting {
			if d, ok := f.routers["default"]; ok {
				if d.ipv4 == nil {
					d.ipv4 = &unicastAF{}
				}
				d.ipv4.importVRF = append(d.ipv4.importVRF, vrf)
				if d.ipv6 == nil {
					d.ipv6 = &unicastAF{}
				}
				d.ipv6.importVRF = append(d.ipv6.importVRF, vrf)
			}
			r.ipv4 = &unicastAF{redistribute: []string{"connected"}}
			r.ipv6 = &unicastAF{redistribute: []string{"connected"}}
		}
		r.evpn = &evpnAF{defaultOriginate: []string{"ipv4", "ipv6"}}
	} else if zone.AdvertiseSubnets {
		r.ipv4 = &unicastAF{redistribute: []string{"connected"}}
		r.ipv6 = &unicastAF{redistribute: []string{"connected"}}
		r.evpn = &evpnAF{adv4: true, adv6: true}
	}
	if len(zone.RTImport) > 0 {
		if r.evpn == nil {
			r.evpn = &evpnAF{}
		}
		r.evpn.rtImport = append(r.evpn.rtImport, zone.RTImport...)
	}
}

// nullRoutes: one null0 route per subnet of the other zones, from the
// pending subnets, keyed by (un-normalised) network, sorted numerically.
func nullRoutes(cfg *Config, zoneID string) []string {
	subs := cfg.PendingSubnets
	if subs == nil {
		subs = cfg.Subnets
	}
	masks := map[string]string{}
	for _, sid := range sortedKeys(subs) {
		z, network, mask, ok := subnetCIDR(sid)
		if ok && z != zoneID {
			masks[network] = mask
		}
	}
	type ipk struct {
		ip string
		n  *big.Int
	}
	var l []ipk
	for ip := range masks {
		n := new(big.Int)
		if a, err := netip.ParseAddr(ip); err == nil {
			b := a.As16()
			if a.Is4() {
				b4 := a.As4()
				n.SetBytes(b4[:])
			} else {
				n.SetBytes(b[:])
			}
		}
		l = append(l, ipk{ip, n})
	}
	sort.SliceStable(l, func(i, j int) bool {
		if c := l[i].n.Cmp(l[j].n); c != 0 {
			return c < 0
		}
		return l[i].ip < l[j].ip
	})
	out := make([]string, 0, len(l))
	for _, e := range l {
		fam := "ip"
		if isIPv6(e.ip) {
			fam = "ipv6"
		}
		out = append(out, fmt.Sprintf("%s route %s/%s null0", fam, e.ip, masks[e.ip]))
	}
	return out
}

// fabrics adds the openfabric/ospf parts (proxmox-ve-config fabric/frr.rs).
func (f *frrConf) fabrics(cfg *Config, node Node) {
	seq := 100
	net := ""
	for _, fid := range sortedKeys(cfg.Fabrics) {
		fab := cfg.Fabrics[fid]
		me, ok := fab.Nodes[node.Name]
		if !ok {
			continue
		}
		switch fab.Protocol {
		case "openfabric":
			if net == "" {
				net = openfabricNET(me)
			}
			if net == "" {
				continue
			}
			f.ofRouters[fid] = net
			f.ofIfaces["dummy_"+fid] = &ofIface{fabric: fid, v4: me.IP != "", v6: me.IP6 != "", passive: true}
			for _, ifc := range me.Interfaces {
				mult := ""
				if ifc.HelloMultiplier != 0 {
					mult = strconv.Itoa(ifc.HelloMultiplier)
				}
				f.ofIfaces[ifc.Name] = &ofIface{fabric: fid, v4: me.IP != "", v6: me.IP6 != "", hello: fab.HelloInterval, csnp: fab.CSNPInterval, multiplier: mult}
			}
			if me.IP != "" {
				f.addSourceRoute("pve_openfabric", &seq, me.IP, fab.IPPrefix, "pve_openfabric_"+fid+"_ips", false)
				f.protoOF4 = "pve_openfabric"
			}
			if me.IP6 != "" {
				f.addSourceRoute("pve_openfabric6", &seq, me.IP6, fab.IP6Prefix, "pve_openfabric_"+fid+"_ip6s", true)
				f.protoOF6 = "pve_openfabric6"
			}
		case "ospf":
			if me.IP == "" {
				continue // PVE requires an IPv4 node address for ospf
			}
			if f.ospfRouter == "" {
				f.ospfRouter = me.IP
			}
			f.ospfIfaces["dummy_"+fid] = &ospfIface{area: fab.Area, passive: true}
			for _, ifc := range me.Interfaces {
				f.ospfIfaces[ifc.Name] = &ospfIface{area: fab.Area, p2p: ifc.IP == ""}
			}
			f.addSourceRoute("pve_ospf", &seq, me.IP, fab.IPPrefix, "pve_ospf_"+fid+"_ips", false)
			f.protoOspf = "pve_ospf"
		}
	}
}

// addSourceRoute adds the entry of route map name (sequence *seq, then 10 more) that sets the
// node's fabric address src as the source of the fabric's routes: those within prefix, through
// access list list, when the fabric has one.
func (f *frrConf) addSourceRoute(name string, seq *int, src, prefix, list string, v6 bool) {
	e := routeMap{action: "permit", seq: *seq, sets: []string{"src " + src}}
	*seq += 10
	if prefix != "" {
		acl, match := "access-list ", "ip address "
		if v6 {
			acl, match = "ipv6 access-list ", "ipv6 address "
		}
		f.accessLists[list] = []string{acl + list + " permit " + cidrString(prefix)}
		e.matches = []string{match + list}
	}
	f.routeMaps[name] = append(f.routeMaps[name], e)
}

// cidrString prints a prefix as proxmox-network-types' Cidr does: the
// address in canonical form, the host bits kept (10.10.10.10/24 stays).
func cidrString(s string) string {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Addr().String() + "/" + strconv.Itoa(p.Bits())
	}
	return s
}

// openfabricNET is 49.0001.<system-id>.00: the IPv4 octets zero-padded to
// 3 digits and regrouped by 4, or the last 3 groups of the IPv6 address.
func openfabricNET(n FabricNode) string {
	if a, err := netip.ParseAddr(n.IP); err == nil && a.Is4() {
		b := a.As4()
		s := fmt.Sprintf("%03d%03d%03d%03d", b[0], b[1], b[2], b[3])
		return "49.0001." + s[0:4] + "." + s[4:8] + "." + s[8:12] + ".00"
	}
	if a, err := netip.ParseAddr(n.IP6); err == nil && a.Is6() {
		b := a.As16()
		return fmt.Sprintf("49.0001.%02x%02x.%02x%02x.%02x%02x.00", b[10], b[11], b[12], b[13], b[14], b[15])
	}
	return ""
}

// String prints the config as the proxmox-frr templates do.
func (f *frrConf) String(hostname string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("frr version 10.4.1")
	w("frr defaults datacenter")
	w("hostname %s", hostname)
	w("log syslog informational")
	w("service integrated-vtysh-config")
	f.writeBGP(w)
	writeLists(w, f.prefixLists)
	f.writeOpenfabric(w)
	f.writeOSPF(w)
	writeLists(w, f.accessLists)
	f.writeRouteMaps(w)
	f.writeStatic(w)
	w("!")
	w("line vty")
	w("!")
	return b.String()
}

// frrWriter writes one line of frr.conf.
type frrWriter func(format string, a ...any)

// writeBGP writes the VRFs and the BGP routers, the default one and one per VRF.
func (f *frrConf) writeBGP(w frrWriter) {
	for _, name := range sortedKeys(f.vrfs) {
		v := f.vrfs[name]
		w("!")
		w("vrf %s", name)
		w(" vni %d", v.vni)
		for _, r := range v.routes {
			w(" %s", r)
		}
		w("exit-vrf")
	}
	for _, name := range sortedKeys(f.routers) {
		r := f.routers[name]
		w("!")
		if name == "default" {
			w("router bgp %d", r.asn)
		} else {
			w("router bgp %d vrf %s", r.asn, name)
		}
		r.write(w)
		w("exit")
	}
}

// writeLists writes prefix or access lists, one block per list.
func writeLists(w frrWriter, lists map[string][]string) {
	for _, name := range sortedKeys(lists) {
		w("!")
		for _, l := range lists[name] {
			w("%s", l)
		}
	}
}

// writeOpenfabric writes the openfabric routers and their interfaces.
func (f *frrConf) writeOpenfabric(w frrWriter) {
	for _, name := range sortedKeys(f.ofRouters) {
		w("!")
		w("router openfabric %s", name)
		w(" net %s", f.ofRouters[name])
		w("exit")
	}
	for _, name := range sortedKeys(f.ofIfaces) {
		i := f.ofIfaces[name]
		w("!")
		w("interface %s", name)
		if i.v4 {
			w(" ip router openfabric %s", i.fabric)
		}
		if i.v6 {
			w(" ipv6 router openfabric %s", i.fabric)
		}
		if i.passive {
			w(" openfabric passive")
		}
		if i.hello != "" {
			w(" openfabric hello-interval %s", i.hello)
		}
		if i.multiplier != "" {
			w(" openfabric hello-multiplier %s", i.multiplier)
		}
		if i.csnp != "" {
			w(" openfabric csnp-interval %s", i.csnp)
		}
		w("exit")
	}
}

// writeOSPF writes the OSPF router and its interfaces.
func (f *frrConf) writeOSPF(w frrWriter) {
	if f.ospfRouter != "" {
		w("!")
		w("router ospf")
		w(" ospf router-id %s", f.ospfRouter)
		w("exit")
	}
	for _, name := range sortedKeys(f.ospfIfaces) {
		i := f.ospfIfaces[name]
		w("!")
		w("interface %s", name)
		w(" ip ospf area %s", i.area)
		if i.passive {
			w(" ip ospf passive")
		}
		if i.p2p {
			w(" ip ospf network point-to-point")
		}
		w("exit")
	}
}

func (f *frrConf) writeRouteMaps(w frrWriter) {
	for _, name := range sortedKeys(f.routeMaps) {
		for _, e := range f.routeMaps[name] {
			w("!")
			w("route-map %s %s %d", name, e.action, e.seq)
			for _, m := range e.matches {
				w(" match %s", m)
			}
			for _, s := range e.sets {
				w(" set %s", s)
			}
			w("exit")
		}
	}
}

// writeStatic writes the static routes and which route map each routing protocol's routes take.
func (f *frrConf) writeStatic(w frrWriter) {
	for _, r := range f.ipRoutes {
		w("!")
		w("%s", r)
	}
	if f.protoOspf != "" {
		w("!")
		w("ip protocol ospf route-map %s", f.protoOspf)
	}
	if f.protoOF4 != "" || f.protoOF6 != "" {
		w("!")
		if f.protoOF4 != "" {
			w("ip protocol openfabric route-map %s", f.protoOF4)
		}
		if f.protoOF6 != "" {
			w("!")
			w("ipv6 protocol openfabric route-map %s", f.protoOF6)
		}
	}
}

func (r *bgpRouter) write(w func(string, ...any)) {
	w(" bgp router-id %s", r.routerID)
	w(" no bgp hard-administrative-reset")
	if r.isDefault {
		w(" no bgp default ipv4-unicast")
		w(" coalesce-time 1000")
	}
	w(" no bgp graceful-restart notification")
	for _, g := range r.groups {
		w(" neighbor %s peer-group", g.name)
		w(" neighbor %s remote-as %s", g.name, g.remoteAS)
		w(" neighbor %s bfd", g.name)
		if g.updateSource != "" {
			w(" neighbor %s update-source %s", g.name, g.updateSource)
		}
		for _, ip := range g.ips {
			w(" neighbor %s peer-group %s", ip, g.name)
		}
	}
	for _, af := range []struct {
		name string
		a    *unicastAF
	}{{"ipv4 unicast", r.ipv4}, {"ipv6 unicast", r.ipv6}} {
		if af.a == nil {
			continue
		}
		w(" !")
		w(" address-family %s", af.name)
		for _, v := range af.a.importVRF {
			w("  import vrf %s", v)
		}
		for _, p := range af.a.redistribute {
			w("  redistribute %s", p)
		}
		w(" exit-address-family")
	}
	if e := r.evpn; e != nil {
		w(" !")
		w(" address-family l2vpn evpn")
		if e.neighbors {
			w("  neighbor VTEP activate")
			w("  neighbor VTEP route-map MAP_VTEP_IN in")
			w("  neighbor VTEP route-map MAP_VTEP_OUT out")
		}
		if e.advertiseAllVNI {
			w("  advertise-all-vni")
		}
		for _, d := range e.defaultOriginate {
			w("  default-originate %s", d)
		}
		if e.adv4 {
			w("  advertise ipv4 unicast")
		}
		if e.adv6 {
			w("  advertise ipv6 unicast")
		}
		for _, rt := range e.rtImport {
			w("  route-target import %s", rt)
		}
		w(" exit-address-family")
	}
}
