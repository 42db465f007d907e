package route

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/reconcile"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Manager plans and applies a Config through one netlink handle.
type Manager struct {
	Handle *netlink.Handle // bound to the namespace to converge
	Sysctl Sysctl          // of the same namespace
}

// Op is what a Change does.
type Op string

const (
	OpAdd     Op = "add"
	OpReplace Op = "replace"
	OpDelete  Op = "delete"
)

// Change is one route write.
type Change struct {
	Op     Op
	Route  netlink.Route
	Text   string // the route as `ip route` would show it
	Reason string // why, when it is not obvious
}

// ForwardingChange is one sysctl write.
type ForwardingChange struct {
	Iface string
	On    bool
}

// Plan is the difference between the kernel and a Config; Apply executes it.
type Plan struct {
	Changes    []Change
	Forwarding []ForwardingChange
	// Before and After list the routes the module owns plus any route sitting at a declared
	// key, rendered like `ip route`, sorted: the diff shown to the user.
	Before, After []string
	// ForwardingBefore/After map each declared interface to its forwarding state.
	ForwardingBefore, ForwardingAfter map[string]bool
	Warnings                          []string
}

// Changed reports whether applying the plan writes anything.
func (p *Plan) Changed() bool { return len(p.Changes) > 0 || len(p.Forwarding) > 0 }

const dumpRetries = 5

// retry repeats a netlink dump that the kernel interrupted (the table changed while it was
// being read); netlink v1.3.1 returns partial results with ErrDumpInterrupted.
func retry[T any](what string, f func() (T, error)) (T, error) {
	var v T
	var err error
	for range dumpRetries {
		v, err = f()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

type routeKey struct {
	table  int
	dst    netip.Prefix
	metric int
}

func keyOf(r netlink.Route) (routeKey, bool) {
	if r.Dst == nil {
		return routeKey{}, false
	}
	a, ok := netip.AddrFromSlice(r.Dst.IP)
	if !ok {
		return routeKey{}, false
	}
	ones, _ := r.Dst.Mask.Size()
	if a.Is4In6() || r.Family == unix.AF_INET {
		a = a.Unmap()
	}
	return routeKey{table: r.Table, dst: netip.PrefixFrom(a, ones), metric: r.Priority}, true
}

// snapshot is what Plan reads from the kernel once.
type snapshot struct {
	links     map[string]netlink.Link
	names     map[int]string // ifindex -> name
	vrfTables map[int]string // table -> VRF name
	routes    map[routeKey]netlink.Route
	owned     []routeKey
}

func (m *Manager) read() (*snapshot, error) {
	links, err := retry("list links", m.Handle.LinkList)
	if err != nil {
		return nil, err
	}
	s := &snapshot{links: map[string]netlink.Link{}, names: map[int]string{}, vrfTables: map[int]string{}, routes: map[routeKey]netlink.Route{}}
	for _, l := range links {
		s.links[l.Attrs().Name] = l
		s.names[l.Attrs().Index] = l.Attrs().Name
		if v, ok := l.(*netlink.Vrf); ok {
			s.vrfTables[int(v.Table)] = v.Name
		}
	}
	// RT_FILTER_TABLE with table 0 lists every table; without it netlink drops all but main.
	all, err := retry("list routes", func() ([]netlink.Route, error) {
		return m.Handle.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		return nil, err
	}
	for _, r := range all {
		if r.Type != unix.RTN_UNICAST || r.Tos != 0 {
			continue // local/broadcast/blackhole and TOS routes are never ours to manage
		}
		k, ok := keyOf(r)
		if !ok {
			continue
		}
		if _, dup := s.routes[k]; dup {
			continue // IPv6 appends share a key; the first is what a replace would hit
		}
		s.routes[k] = r
		if r.Protocol == Protocol {
			s.owned = append(s.owned, k)
		}
	}
	return s, nil
}

func (s *snapshot) tableName(t int) string {
	if t == unix.RT_TABLE_MAIN {
		return MainTable
	}
	if n, ok := s.vrfTables[t]; ok {
		return n
	}
	return strconv.Itoa(t)
}

// text renders a route like `ip route`, with the table by VRF name when there is one.
func (s *snapshot) text(r netlink.Route) string {
	var b strings.Builder
	k, _ := keyOf(r)
	if k.dst.Bits() == 0 {
		b.WriteString("default")
		if k.dst.Addr().Is6() {
			b.WriteString("6")
		}
	} else {
		b.WriteString(k.dst.String())
	}
	if r.Gw != nil {
		b.WriteString(" via " + r.Gw.String())
	}
	if r.LinkIndex != 0 {
		name, ok := s.names[r.LinkIndex]
		if !ok {
			name = "if" + strconv.Itoa(r.LinkIndex)
		}
		b.WriteString(" dev " + name)
	}
	b.WriteString(" table " + s.tableName(r.Table))
	b.WriteString(" metric " + strconv.Itoa(r.Priority))
	if r.Protocol != Protocol {
		b.WriteString(" proto " + r.Protocol.String())
	}
	return b.String()
}

// Plan compares cfg with the kernel. It writes nothing. Errors name the field and the rule.
func (m *Manager) Plan(cfg Config) (*Plan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := m.read()
	if err != nil {
		return nil, err
	}
	p := &Plan{ForwardingBefore: map[string]bool{}, ForwardingAfter: map[string]bool{}}
	before := map[routeKey]string{}
	after := map[routeKey]string{}
	for _, k := range s.owned {
		before[k] = s.text(s.routes[k])
		after[k] = before[k]
	}
	declared := map[routeKey]int{}
	usesVRF := false

	for i, d := range cfg.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		want, found, err := m.resolve(s, f, d, cfg.State)
		if err != nil {
			return nil, err
		}
		if !found { // absent, and the VRF holding it is gone: nothing to remove
			continue
		}
		k, _ := keyOf(want)
		if j, dup := declared[k]; dup {
			// Validate catches equal spellings; this catches "1001" and the VRF owning table 1001
			return nil, fmt.Errorf("%s: resolves to the same table, dest and metric as routes[%d]; merge them", f, j)
		}
		declared[k] = i
		if _, inVRF := s.vrfTables[want.Table]; inVRF {
			usesVRF = true
		}
		p.planRoute(s, f, k, want, cfg.State, before, after)
	}

	if cfg.Exclusive {
		for _, k := range s.owned {
			if _, ok := declared[k]; ok {
				continue
			}
			delete(after, k)
			p.Changes = append(p.Changes, Change{Op: OpDelete, Route: s.routes[k], Text: before[k], Reason: "owned and no longer declared (exclusive)"})
		}
	}

	if cfg.State == Present {
		if err := m.planForwarding(s, cfg.Forwarding, p); err != nil {
			return nil, err
		}
	}
	if usesVRF && cfg.State == Present {
		w, err := m.localRuleFirst()
		if err != nil {
			return nil, err
		}
		p.Warnings = append(p.Warnings, w...)
	}
	p.Before = reconcile.SortedValues(before, strings.Compare)
	p.After = reconcile.SortedValues(after, strings.Compare)
	return p, nil
}

// planRoute plans one declared route k (want, at field f) against the kernel: add, replace or
// delete it, or warn about a route of another owner an absent state would remove.
func (p *Plan) planRoute(s *snapshot, f string, k routeKey, want netlink.Route, state State, before, after map[routeKey]string) {
	cur, exists := s.routes[k]
	if exists {
		before[k] = s.text(cur)
	}
	switch state {
	case Present:
		after[k] = s.text(want)
		switch {
		case !exists:
			p.Changes = append(p.Changes, Change{Op: OpAdd, Route: want, Text: after[k]})
		case !sameRoute(cur, want):
			reason := fmt.Sprintf("was %q", before[k])
			if cur.Protocol != Protocol {
				reason = fmt.Sprintf("takes over %q", before[k])
			}
			p.Changes = append(p.Changes, Change{Op: OpReplace, Route: want, Text: after[k], Reason: reason})
		}
	case Absent:
		if !exists {
			return
		}
		if cur.Protocol != Protocol {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %q is not owned by transit_route (proto %s); left alone", f, before[k], cur.Protocol))
			after[k] = before[k]
			return
		}
		delete(after, k)
		p.Changes = append(p.Changes, Change{Op: OpDelete, Route: cur, Text: before[k]})
	}
}

// planForwarding plans IPv4 forwarding on for each interface of ifaces that exists.
func (m *Manager) planForwarding(s *snapshot, ifaces []string, p *Plan) error {
	for i, ifn := range ifaces {
		if _, ok := s.links[ifn]; !ok {
			return fmt.Errorf("forwarding[%d]: interface %q does not exist (rule: forwarding is set on existing interfaces only)", i, ifn)
		}
		on, err := m.Sysctl.Forwarding(ifn)
		if err != nil {
			return fmt.Errorf("forwarding[%d]: %w", i, err)
		}
		p.ForwardingBefore[ifn] = on
		p.ForwardingAfter[ifn] = true
		if !on {
			p.Forwarding = append(p.Forwarding, ForwardingChange{Iface: ifn, On: true})
		}
	}
	return nil
}

// localRuleFirst warns when the shared `local` table is looked up before the VRF (l3mdev) rule.
// With the kernel's default order (0: lookup local, 1000: l3mdev) every tenant VRF gets answers
// from every address of the node's default VRF, its management address included, however right
// the routes are. ifupdown2 moves the rule to 32765 when it creates a VRF; a node where it still
// sits at 0 is not isolated. Rules are not this module's to change, so it only says so.
func (m *Manager) localRuleFirst() ([]string, error) {
	var out []string
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		rules, err := retry("list rules", func() ([]netlink.Rule, error) { return m.Handle.RuleList(fam) })
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			// The kernel omits the priority attribute of preference 0, which netlink reads as -1.
			if r.Priority <= 0 && r.Table == unix.RT_TABLE_LOCAL {
				ip := "ip -4"
				if fam == netlink.FAMILY_V6 {
					ip = "ip -6"
				}
				out = append(out, fmt.Sprintf("tenant isolation: `%s rule` looks up the local table at preference 0, before the VRF rule, so tenants reach every address of this node (management included); move it after l3mdev: `%s rule add pref 32765 lookup local && %s rule del pref 0` (ifupdown2 does this when it creates a VRF)", ip, ip, ip))
			}
		}
	}
	return out, nil
}

// resolve turns a declared route into the kernel route it means. found is false only for an
// absent route whose VRF no longer exists.
func (m *Manager) resolve(s *snapshot, f string, d Route, state State) (netlink.Route, bool, error) {
	family := unix.AF_INET
	if d.Dest.Addr().Is6() {
		family = unix.AF_INET6
	}
	want := netlink.Route{
		Family:   family,
		Dst:      &net.IPNet{IP: d.Dest.Addr().AsSlice(), Mask: net.CIDRMask(d.Dest.Bits(), d.Dest.Addr().BitLen())},
		Priority: d.Metric,
		Protocol: Protocol,
		Type:     unix.RTN_UNICAST,
		Scope:    netlink.SCOPE_UNIVERSE,
	}
	table, isNum, _ := TableNumber(d.Table) // validated already
	vrfName := ""
	if !isNum {
		l, ok := s.links[d.Table]
		if !ok {
			if state == Absent {
				return want, false, nil
			}
			return want, false, fmt.Errorf("%s.table: VRF device %q does not exist (rule: a table name must be an existing VRF device; PVE creates vrf_<zone> when the EVPN zone is applied)", f, d.Table)
		}
		v, ok := l.(*netlink.Vrf)
		if !ok {
			return want, false, fmt.Errorf("%s.table: %q is a %s device, not a VRF (rule: a table name must be a VRF device)", f, d.Table, l.Type())
		}
		table, vrfName = int(v.Table), v.Name
	}
	want.Table = table
	if state == Absent {
		return want, true, nil // identity is table+dest+metric; what it points at does not matter
	}
	if d.Device != "" {
		l, ok := s.links[d.Device]
		if !ok {
			return want, false, fmt.Errorf("%s.device: interface %q does not exist", f, d.Device)
		}
		want.LinkIndex = l.Attrs().Index
	}
	if !d.Gateway.IsValid() {
		want.Scope = netlink.SCOPE_LINK
		return want, true, nil
	}
	want.Gw = d.Gateway.AsSlice()
	// The kernel accepts a gateway only when it is on-link: covered by a connected route (through
	// the given device when there is one). Check the same before writing, so a bad gateway fails
	// the whole run before anything changed.
	if d.Device != "" {
		if !s.connected(d.Gateway, want.LinkIndex, table) {
			return want, false, fmt.Errorf("%s.gateway: %s is unreachable via device %s (rule: the gateway must be in a network connected to the device; no connected route on %s covers it)", f, d.Gateway, d.Device, d.Device)
		}
		return want, true, nil
	}
	opts := &netlink.RouteGetOptions{VrfName: vrfName}
	got, err := m.Handle.RouteGetWithOptions(want.Gw, opts)
	if err != nil {
		return want, false, fmt.Errorf("%s.gateway: %s is unreachable (rule: the gateway needs a connected route; no route to it): %w", f, d.Gateway, err)
	}
	if len(got) == 0 {
		return want, false, fmt.Errorf("%s.gateway: %s is unreachable (rule: the gateway needs a connected route; no route to it)", f, d.Gateway)
	}
	if got[0].Gw != nil {
		return want, false, fmt.Errorf("%s.gateway: %s is not on-link, it is reached only via %s (rule: the gateway must be in a directly connected network)", f, d.Gateway, got[0].Gw)
	}
	want.LinkIndex = got[0].LinkIndex
	return want, true, nil
}

// connected reports whether a connected route on link covers gw, in the route's own table or in
// the table of the link's routing domain (its VRF, else main): where the kernel looks.
func (s *snapshot) connected(gw netip.Addr, link, table int) bool {
	domain := unix.RT_TABLE_MAIN
	if l, ok := s.links[s.names[link]]; ok && l.Attrs().MasterIndex != 0 {
		if v, ok := s.links[s.names[l.Attrs().MasterIndex]].(*netlink.Vrf); ok {
			domain = int(v.Table)
		}
	}
	for k, r := range s.routes {
		if (k.table == table || k.table == domain) && r.LinkIndex == link && r.Gw == nil && len(r.MultiPath) == 0 && k.dst.Contains(gw) {
			return true
		}
	}
	return false
}

// sameRoute compares what the module controls; metrics such as MTU are left to others.
func sameRoute(cur, want netlink.Route) bool {
	return cur.Protocol == want.Protocol &&
		cur.LinkIndex == want.LinkIndex &&
		cur.Gw.Equal(want.Gw) &&
		cur.Scope == want.Scope &&
		len(cur.MultiPath) == 0
}

// Apply executes p: forwarding first (so a new default route never blackholes forwarded
// traffic), then adds/replaces, then deletes. It stops at the first error, saying how far it got.
func (m *Manager) Apply(p *Plan) (writes int, err error) {
	for _, fc := range p.Forwarding {
		if err := m.Sysctl.SetForwarding(fc.Iface, fc.On); err != nil {
			return writes, fmt.Errorf("after %d writes: %w", writes, err)
		}
		writes++
	}
	for _, c := range p.Changes {
		if c.Op == OpDelete {
			continue
		}
		r := c.Route
		if err := m.Handle.RouteReplace(&r); err != nil {
			return writes, fmt.Errorf("after %d writes: %s route %s: %w", writes, c.Op, c.Text, err)
		}
		writes++
	}
	for _, c := range p.Changes {
		if c.Op != OpDelete {
			continue
		}
		r := c.Route
		if err := m.Handle.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) {
			return writes, fmt.Errorf("after %d writes: delete route %s: %w", writes, c.Text, err)
		}
		writes++
	}
	return writes, nil
}
