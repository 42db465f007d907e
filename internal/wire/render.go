package wire

import (
	"fmt"
	"strings"
)

// Counters the table keeps, read by the guard's report and the lab's probes: frames dropped for
// a source the port may not use (or from a port not admitted), over the tenant's rate, and over
// its broadcast rate.
const (
	CounterForged    = "forged"
	CounterRate      = "over_rate"
	CounterBroadcast = "over_broadcast"
)

// Render is the nft script that replaces the table in one transaction (nft -f applies a file
// atomically: there is no moment without the table, and a script that fails changes nothing).
// Its prerouting chain (bridge family, before the bridge learns a frame's source) sends every
// frame from a VM port (tap*, fwpr*) entering a tenant VNet (tn*) through the checks; a port the
// table does not know (a NIC hotplugged, a VM started without the guard, a MAC changed through
// the API) matches no element and is dropped until the guard admits it.
func (p Plan) Render() string {
	var b strings.Builder
	b.WriteString("# deevnet.tenant envelope guard: what each tenant VM's ports may send on this node\n")
	b.WriteString("# (docs/adr/0016-tenant-wire.md). Replaced whole by `envelope_guard wire`; do not edit.\n")
	fmt.Fprintf(&b, "table bridge %s\ndelete table bridge %s\ntable bridge %s {\n", Table, Table, Table)
	var macs, ips, arps, tenantOf []string
	for _, port := range p.Ports {
		for _, name := range []string{port.Tap(), port.FirewallPeer()} {
			macs = append(macs, fmt.Sprintf("%q . %s", name, port.MAC))
			ips = append(ips, fmt.Sprintf("%q . %s", name, port.IP))
			// 0.0.0.0: an ARP probe (RFC 5227) before the guest uses its address
			arps = append(arps, fmt.Sprintf("%q . %s . %s", name, port.MAC, port.IP), fmt.Sprintf("%q . %s . 0.0.0.0", name, port.MAC))
			tenantOf = append(tenantOf, fmt.Sprintf("%q : goto %s", name, chainOf(port.Tenant)))
		}
	}
	set(&b, "set", "ports_mac", "ifname . ether_addr", macs)
	set(&b, "set", "ports_ip", "ifname . ipv4_addr", ips)
	set(&b, "set", "ports_arp", "ifname . ether_addr . ipv4_addr", arps)
	set(&b, "map", "ports_tenant", "ifname : verdict", tenantOf)
	for _, c := range []string{CounterForged, CounterRate, CounterBroadcast} {
		fmt.Fprintf(&b, "\tcounter %s {\n\t}\n", c)
	}
	for _, t := range p.Tenants {
		if t.Bandwidth > 0 {
			rate := int64(t.Bandwidth) * 125000 // Mbit/s in bytes/s
			// no burst: the kernel's byte bucket holds one second of the rate already
			// (nft_limit_init: tokens_max = unit * (rate + burst) / rate)
			fmt.Fprintf(&b, "\tlimit %s_rate {\n\t\trate over %d bytes/second\n\t}\n", ident(t.Name), rate)
		}
		if t.Broadcast > 0 {
			fmt.Fprintf(&b, "\tlimit %s_broadcast {\n\t\trate over %d/second burst %d packets\n\t}\n", ident(t.Name), t.Broadcast, t.Broadcast)
		}
	}
	for _, t := range p.Tenants {
		fmt.Fprintf(&b, "\tchain %s {\n", chainOf(t.Name))
		if t.Broadcast > 0 {
			// the group bit of the destination, not meta pkttype: a frame entering from a VM's
			// port to another VM or the gateway is PACKET_OTHERHOST there, not unicast
			fmt.Fprintf(&b, "\t\tether daddr & 01:00:00:00:00:00 == 01:00:00:00:00:00 limit name %q counter name %q drop\n", ident(t.Name)+"_broadcast", CounterBroadcast)
		}
		if t.Bandwidth > 0 {
			fmt.Fprintf(&b, "\t\tlimit name %q counter name %q drop\n", ident(t.Name)+"_rate", CounterRate)
		}
		b.WriteString("\t\taccept\n\t}\n")
	}
	b.WriteString("\tchain prerouting {\n\t\t" + preroutingHook + "\n")
	for _, r := range preroutingRules() {
		b.WriteString("\t\t" + r + "\n")
	}
	b.WriteString("\t}\n}\n")
	return b.String()
}

const preroutingHook = "type filter hook prerouting priority -300; policy accept;"

// preroutingRules are the table's fixed rules: everything per port or tenant is in its sets, map,
// limits and tenant chains.
func preroutingRules() []string {
	return []string{
		`iifname != "tap*" iifname != "fwpr*" accept`,
		fmt.Sprintf("meta ibrname != %q accept", VNetPrefix+"*"),
		fmt.Sprintf("iifname . ether saddr != @ports_mac counter name %q drop", CounterForged),
		"ether type ip iifname . ip saddr @ports_ip iifname vmap @ports_tenant",
		"ether type arp arp htype 1 arp ptype ip arp hlen 6 arp plen 4 iifname . arp saddr ether . arp saddr ip @ports_arp iifname vmap @ports_tenant",
		fmt.Sprintf("counter name %q drop", CounterForged),
	}
}

// Skeleton is the table with no port admitted, written so that loading it over a table the guard
// loaded changes nothing but the fixed rules (every add of an existing set, map, counter or chain
// is a no-op, and the prerouting chain is flushed and refilled in the same transaction): the node
// network's post-up loads it at every boot and ifreload, so that from the first frame of the
// first VM every tenant port is dropped until the guard admits it, and a reload drops nobody.
func Skeleton() string {
	var b strings.Builder
	b.WriteString("# deevnet.tenant: the envelope guard's wire table with no port admitted (docs/adr/0016-tenant-wire.md),\n")
	b.WriteString("# loaded by the node network's post-up; it keeps what the guard admitted. Generated from internal/wire.\n")
	fmt.Fprintf(&b, "add table bridge %s\n", Table)
	for _, s := range []struct{ kind, name, typ string }{
		{"set", "ports_mac", "ifname . ether_addr"}, {"set", "ports_ip", "ifname . ipv4_addr"},
		{"set", "ports_arp", "ifname . ether_addr . ipv4_addr"}, {"map", "ports_tenant", "ifname : verdict"},
	} {
		fmt.Fprintf(&b, "add %s bridge %s %s { type %s; }\n", s.kind, Table, s.name, s.typ)
	}
	for _, c := range []string{CounterForged, CounterRate, CounterBroadcast} {
		fmt.Fprintf(&b, "add counter bridge %s %s\n", Table, c)
	}
	fmt.Fprintf(&b, "add chain bridge %s prerouting { %s }\n", Table, preroutingHook)
	fmt.Fprintf(&b, "flush chain bridge %s prerouting\n", Table)
	for _, r := range preroutingRules() {
		fmt.Fprintf(&b, "add rule bridge %s prerouting %s\n", Table, r)
	}
	return b.String()
}

// set writes a named set or map, with its elements where it has any (nft refuses an empty
// elements list).
func set(b *strings.Builder, kind, name, typ string, elements []string) {
	fmt.Fprintf(b, "\t%s %s {\n\t\ttype %s\n", kind, name, typ)
	if len(elements) > 0 {
		fmt.Fprintf(b, "\t\telements = {\n\t\t\t%s\n\t\t}\n", strings.Join(elements, ",\n\t\t\t"))
	}
	b.WriteString("\t}\n")
}

// ident is a tenant name as an nft identifier: a name has no '_' (ADR-0002), so '-' -> '_' keeps
// two names apart.
func ident(tenant string) string { return strings.ReplaceAll(tenant, "-", "_") }

func chainOf(tenant string) string { return "tenant_" + ident(tenant) }
