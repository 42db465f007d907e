// Package route converges the hypervisor side of tenant egress (ADR-0003) over netlink: the
// hypervisor's default route on transit, a default route inside each tenant VRF toward the
// transit next hop, the return routes from the main table into the VRFs, and IPv4 forwarding on
// named interfaces. Every netlink call goes through a caller-supplied *netlink.Handle, so the same
// code runs in the process's own namespace (the module) or in a test namespace.
package route

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
)

// Protocol marks the routes this package owns (RTPROT 0xdd = 221, unused by iproute2's
// rt_protos list). exclusive mode deletes only routes carrying it, so routes installed by
// ifupdown2, FRR (proto bgp/zebra) or an admin are never touched.
const Protocol netlink.RouteProtocol = 0xdd

// MainTable is the name accepted for the main routing table (254).
const MainTable = "main"

// State is what the declared routes should be.
type State string

const (
	Present State = "present"
	Absent  State = "absent"
)

// Route is one declared route. Its identity in the kernel (the key) is table, destination and
// metric; gateway and device are what the route points at.
type Route struct {
	Dest    netip.Prefix
	Gateway netip.Addr // zero: a device route (scope link)
	Device  string     // "" only when Gateway is set: the kernel picks the device
	Metric  int
	Table   string // "main", a table number, or the name of a VRF device (vrf_<zone>)
}

// Config is everything one module invocation declares.
type Config struct {
	Routes     []Route
	State      State
	Exclusive  bool     // delete owned routes (Protocol) that are not declared
	Forwarding []string // interfaces whose net.ipv4.conf.<if>.forwarding must be 1 (present only)
}

// ParseDest parses "default" (0.0.0.0/0), "default6" (::/0) or a CIDR whose host bits are zero.
func ParseDest(s string) (netip.Prefix, error) {
	switch strings.TrimSpace(s) {
	case "default", "0.0.0.0/0":
		return netip.MustParsePrefix("0.0.0.0/0"), nil
	case "default6", "::/0":
		return netip.MustParsePrefix("::/0"), nil
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		// a bare address means a host route
		a, aerr := netip.ParseAddr(strings.TrimSpace(s))
		if aerr != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not \"default\", a CIDR or an address", s)
		}
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q: zoned addresses are not routes", s)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q: zoned addresses are not routes", s)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%q: IPv4-mapped IPv6 is not allowed, write the IPv4 form", s)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%q has host bits set (did you mean %s?)", s, p.Masked())
	}
	return p, nil
}

// ParseGateway parses an optional next-hop address ("" means none).
func ParseGateway(s string) (netip.Addr, error) {
	if strings.TrimSpace(s) == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	if a.Zone() != "" || a.Is4In6() || a.IsUnspecified() || a.IsMulticast() {
		return netip.Addr{}, fmt.Errorf("%q cannot be a next hop", s)
	}
	return a, nil
}

// TableNumber returns the number for "main"/"" or a decimal table id, and ok=false for a
// name that must be a VRF device.
func TableNumber(s string) (int, bool, error) {
	if s == "" || s == MainTable {
		return 254, true, nil
	}
	if s[0] >= '0' && s[0] <= '9' {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil || n == 0 || n == 253 || n == 255 {
			// 0 is "unspec", 253 "default" and 255 "local": never a place for these routes
			return 0, true, fmt.Errorf("%q is not a usable table number (1..2^32-1, not 253 or 255)", s)
		}
		return int(n), true, nil
	}
	if err := ValidIfName(s); err != nil {
		return 0, false, fmt.Errorf("%q is neither main, a table number nor a VRF name: %w", s, err)
	}
	return 0, false, nil
}

// ValidIfName accepts Linux interface names made of the characters PVE and ifupdown2 use.
// The set is deliberately narrower than the kernel's so a name is always safe in a /proc path
// and in the persisted shell hook.
func ValidIfName(s string) error {
	if s == "" || len(s) > 15 {
		return fmt.Errorf("interface name %q must be 1 to 15 characters", s)
	}
	if s == "." || s == ".." {
		return fmt.Errorf("interface name %q is reserved", s)
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '@'
		if !ok {
			return fmt.Errorf("interface name %q may only contain letters, digits and _ . - @", s)
		}
	}
	return nil
}

// Validate checks the declaration without touching the kernel: field rules and duplicate keys.
// Errors name the field (routes[i].dest) and the rule.
func (c Config) Validate() error {
	if c.State != Present && c.State != Absent {
		return fmt.Errorf("state: must be present or absent, got %q", c.State)
	}
	if c.Exclusive && c.State != Present {
		return fmt.Errorf("exclusive: only meaningful with state=present")
	}
	seen := map[string]int{}
	for i, r := range c.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		if !r.Dest.IsValid() {
			return fmt.Errorf("%s.dest: required", f)
		}
		if r.Gateway.IsValid() && r.Gateway.Is4() != r.Dest.Addr().Is4() {
			return fmt.Errorf("%s.gateway: %s is not of the same address family as dest %s", f, r.Gateway, r.Dest)
		}
		if c.State == Present && !r.Gateway.IsValid() && r.Device == "" {
			return fmt.Errorf("%s: give a gateway, a device or both", f)
		}
		if r.Device != "" {
			if err := ValidIfName(r.Device); err != nil {
				return fmt.Errorf("%s.device: %w", f, err)
			}
		}
		if r.Metric < 0 {
			return fmt.Errorf("%s.metric: must be 0 or more, got %d", f, r.Metric)
		}
		if _, _, err := TableNumber(r.Table); err != nil {
			return fmt.Errorf("%s.table: %w", f, err)
		}
		k := fmt.Sprintf("%s|%s|%d", tableKey(r.Table), r.Dest, r.Metric)
		if j, dup := seen[k]; dup {
			return fmt.Errorf("%s: same table, dest and metric as routes[%d] (a route's identity); merge them", f, j)
		}
		seen[k] = i
	}
	for i, ifn := range c.Forwarding {
		if err := ValidIfName(ifn); err != nil {
			return fmt.Errorf("forwarding[%d]: %w", i, err)
		}
	}
	return nil
}

// tableKey makes "", "main" and "254" one key.
func tableKey(t string) string {
	if n, isNum, err := TableNumber(t); isNum && err == nil {
		return strconv.Itoa(n)
	}
	return t
}
