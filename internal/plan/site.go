// Package plan is ADR-0002 as code: a site plan and a tenant (name, index) give every
// identifier the tenant uses: subnet, gateway, SDN zone and VNets, VNIs, VM ids, names and
// addresses, DNS zones, PVE pool, user and token, TSIG key. It is pure: no I/O.
package plan

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// Site holds the substrate-wide values a tenant's identifiers are derived from. Every field is a
// key of the substrate inventory's substrate_site (docs/adr/0012-substrate-inventory.md).
type Site struct {
	Network      netip.Prefix // the site /16
	Overlay      netip.Prefix // tenant overlays: one /24 per index
	Loopbacks    netip.Prefix // fabric VTEP loopbacks: one address per hypervisor
	Zone         string       // the site's DNS zone
	Resolver     netip.Addr   // the substrate resolver tenants' VMs use
	TransitVLAN  int
	UnderlayVLAN int
	ASN          int    // the EVPN controller's ASN
	Controller   string // the one EVPN controller's id
	Fabric       string // the PVE 9 fabric's id
	MTU          int    // tenant zone MTU: VXLAN's 50 bytes under a 1500 underlay
	Nodes        []string
}

// DefaultSite is the seed's site (SEED.md): mobile.deevnet.net on 10.20.0.0/16, one node
// dv02hyp002p02. This is the one place the seed's values live (ADR-0012): a module called without
// `site` (a one-off tenant_plan) uses them. The playbooks never do: they pass the complete site
// derived from substrate_site, which has no defaults, so a substrate inventory that leaves a key
// out is refused instead of silently getting this homelab's value.
func DefaultSite() Site {
	return Site{
		Network:      netip.MustParsePrefix("10.20.0.0/16"),
		Overlay:      netip.MustParsePrefix("10.20.128.0/18"),
		Loopbacks:    netip.MustParsePrefix("10.20.255.0/24"),
		Zone:         "mobile.deevnet.net",
		Resolver:     netip.MustParseAddr("10.20.99.1"),
		TransitVLAN:  50,
		UnderlayVLAN: 51,
		ASN:          65020,
		Controller:   "evpnctl",
		Fabric:       "ufab",
		MTU:          1450,
		Nodes:        []string{"dv02hyp002p02"},
	}
}

// siteSetters has one setter per key SiteFromMap accepts, each parsing the value into s.
func siteSetters(s *Site) map[string]func(v any) error {
	intoPrefix := func(dst *netip.Prefix) func(any) error {
		return func(v any) (err error) { *dst, err = prefix(v); return err }
	}
	intoInt := func(dst *int) func(any) error {
		return func(v any) (err error) { *dst, err = integer(v); return err }
	}
	intoStr := func(dst *string) func(any) error {
		return func(v any) (err error) { *dst, err = str(v); return err }
	}
	return map[string]func(any) error{
		"network":   intoPrefix(&s.Network),
		"overlay":   intoPrefix(&s.Overlay),
		"loopbacks": intoPrefix(&s.Loopbacks),
		"zone": func(v any) error {
			z, err := str(v)
			s.Zone = strings.TrimSuffix(strings.ToLower(z), ".")
			return err
		},
		"resolver": func(v any) error {
			a, err := str(v)
			if err == nil {
				s.Resolver, err = netip.ParseAddr(a)
			}
			return err
		},
		"transit_vlan":  intoInt(&s.TransitVLAN),
		"underlay_vlan": intoInt(&s.UnderlayVLAN),
		"asn":           intoInt(&s.ASN),
		"controller":    intoStr(&s.Controller),
		"fabric":        intoStr(&s.Fabric),
		"mtu":           intoInt(&s.MTU),
		"nodes":         func(v any) (err error) { s.Nodes, err = strs(v); return err },
	}
}

// SiteFromMap applies inventory overrides to the default site and validates the result. Errors
// name the key as `site.<key>`.
func SiteFromMap(overrides map[string]any) (Site, error) {
	s := DefaultSite()
	set := siteSetters(&s)
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		v := overrides[k]
		if v == nil {
			continue
		}
		setter, ok := set[k]
		if !ok {
			return Site{}, fmt.Errorf("site.%s: unknown key; valid keys are %s", k, strings.Join(slices.Sorted(maps.Keys(set)), ", "))
		}
		if err := setter(v); err != nil {
			return Site{}, fmt.Errorf("site.%s: %w", k, err)
		}
	}
	return s, s.Validate()
}

// Validate checks that the site's values fit together.
func (s Site) Validate() error {
	if !s.Network.IsValid() || !s.Network.Addr().Is4() {
		return fmt.Errorf("site.network: must be an IPv4 prefix such as 10.20.0.0/16")
	}
	if !s.Overlay.IsValid() || !s.Overlay.Addr().Is4() || s.Overlay.Bits() > 23 || s.Overlay.Bits() < s.Network.Bits() || !s.Network.Contains(s.Overlay.Addr()) {
		return fmt.Errorf("site.overlay: %s must be an IPv4 prefix of /23 or shorter inside site.network %s (it holds one /24 per tenant)", s.Overlay, s.Network)
	}
	if s.Overlay.Masked() != s.Overlay {
		return fmt.Errorf("site.overlay: %s has host bits set; did you mean %s?", s.Overlay, s.Overlay.Masked())
	}
	if !s.Loopbacks.IsValid() || !s.Loopbacks.Addr().Is4() || !s.Network.Contains(s.Loopbacks.Addr()) || s.Loopbacks.Bits() > 30 {
		return fmt.Errorf("site.loopbacks: %s must be an IPv4 prefix inside site.network %s", s.Loopbacks, s.Network)
	}
	if s.Overlay.Overlaps(s.Loopbacks) {
		return fmt.Errorf("site.loopbacks: %s overlaps site.overlay %s", s.Loopbacks, s.Overlay)
	}
	if !s.Resolver.IsValid() {
		return fmt.Errorf("site.resolver: must be an IP address")
	}
	if s.Overlay.Contains(s.Resolver) {
		return fmt.Errorf("site.resolver: %s lies inside the tenant overlay %s", s.Resolver, s.Overlay)
	}
	if err := checkDNSName(s.Zone); err != nil {
		return fmt.Errorf("site.zone: %w", err)
	}
	for name, vlan := range map[string]int{"transit_vlan": s.TransitVLAN, "underlay_vlan": s.UnderlayVLAN} {
		if vlan < 1 || vlan > 4094 {
			return fmt.Errorf("site.%s: %d is not a VLAN id (1..4094)", name, vlan)
		}
	}
	if s.TransitVLAN == s.UnderlayVLAN {
		return fmt.Errorf("site.underlay_vlan: must differ from site.transit_vlan (%d)", s.TransitVLAN)
	}
	if s.ASN < 1 || s.ASN > 4294967295 {
		return fmt.Errorf("site.asn: %d is not an AS number (1..4294967295)", s.ASN)
	}
	if err := checkFormat(fmtControllerID, s.Controller); err != nil {
		return fmt.Errorf("site.controller: %w", err)
	}
	if err := checkFormat(fmtFabricID, s.Fabric); err != nil {
		return fmt.Errorf("site.fabric: %w", err)
	}
	if s.MTU < 1280 || s.MTU > 65520 {
		return fmt.Errorf("site.mtu: %d is outside 1280..65520", s.MTU)
	}
	if len(s.Nodes) == 0 {
		return fmt.Errorf("site.nodes: at least one hypervisor node is needed")
	}
	for i, n := range s.Nodes {
		if err := checkFormat(fmtNode, n); err != nil {
			return fmt.Errorf("site.nodes[%d]: %w", i, err)
		}
	}
	return nil
}

// MaxIndex is the highest tenant index the overlay holds.
func (s Site) MaxIndex() int { return 1<<(24-s.Overlay.Bits()) - 1 }

// NodeLoopback is the VTEP loopback of hypervisor n (1-based) in the loopback prefix.
func (s Site) NodeLoopback(n int) (netip.Addr, error) {
	size := 1 << (32 - s.Loopbacks.Bits())
	if n < 1 || n > size-2 {
		return netip.Addr{}, fmt.Errorf("node number %d is outside 1..%d, what %s holds", n, size-2, s.Loopbacks)
	}
	return addOffset(s.Loopbacks.Masked().Addr(), n), nil
}

// Map is the site as tenant_plan returns it.
func (s Site) Map() map[string]any {
	return map[string]any{
		"network": s.Network.String(), "overlay": s.Overlay.String(), "loopbacks": s.Loopbacks.String(),
		"zone": s.Zone, "resolver": s.Resolver.String(), "transit_vlan": s.TransitVLAN,
		"underlay_vlan": s.UnderlayVLAN, "asn": s.ASN, "controller": s.Controller, "fabric": s.Fabric,
		"mtu": s.MTU, "nodes": append([]string(nil), s.Nodes...), "max_index": s.MaxIndex(),
	}
}

func addOffset(a netip.Addr, n int) netip.Addr {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func prefix(v any) (netip.Prefix, error) {
	s, err := str(v)
	if err != nil {
		return netip.Prefix{}, err
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a prefix such as 10.20.0.0/16", s)
	}
	return p, nil
}

func str(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("must be a string, got %v", v)
	}
	return s, nil
}

func integer(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case float64:
		if x == float64(int(x)) {
			return int(x), nil
		}
	case string:
		var i int
		if _, err := fmt.Sscanf(x, "%d", &i); err == nil && fmt.Sprint(i) == strings.TrimSpace(x) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("must be a whole number, got %v", v)
}

func strs(v any) ([]string, error) {
	l, ok := v.([]any)
	if !ok {
		if ss, ok := v.([]string); ok {
			return ss, nil
		}
		return nil, fmt.Errorf("must be a list of strings")
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("element %d must be a string, got %v", i, e)
		}
		out[i] = s
	}
	return out, nil
}
