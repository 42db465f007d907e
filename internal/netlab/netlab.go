// Package netlab builds the tenant-egress data plane of ADR-0003 out of network namespaces, so
// tests can prove isolation with real packets on a kernel without VRF or 802.1Q:
//
//	tenant-1 10.20.129.11 ─ t1 ┐                      ┌ tr0 100.64.0.1  perimeter  wan 198.51.100.2 ─ outside 198.51.100.1
//	tenant-2 10.20.130.11 ─ t2 ┤ hypervisor  tr0 100.64.0.2 (transit)      nft NAT    mgmt 172.31.0.1 ┐   (+203.0.113.10)
//	                           └ mg0 172.31.0.2 ─────────── management bridge ─────────────────────────┘ mgmt host 172.31.0.10
//
// Up builds everything except what transit_route converges on the hypervisor: its default route
// still points at the management segment, the tenant tables have no default route, the main
// table has no return route to the tenants, and forwarding is off. With Config.VRF each tenant
// interface is enslaved to a real VRF device vrf_tn<nn> (table 1000+n), as PVE does; without it
// (kernels without CONFIG_NET_VRF) the VRFs are emulated with policy routing (table 1000+n,
// `ip rule iif t<n> lookup <table>`) plus an nft input rule, because the local table is shared.
// The perimeter masquerades to "outside" and drops tenant→management and tenant→tenant.
// CheckEgress then proves the ADR-0003 properties with real packets.
//
// Every namespace is named <prefix>-<role> with a per-lab prefix "dvt-xxxx", nothing is linked to
// the caller's namespace, and Down deletes all of them. Needs root, iproute2 and nft.
package netlab

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/testenv"
	"github.com/vishvananda/netns"
)

// Require skips (outside CI) or fails (in CI) a test that cannot build a lab: Up and CheckEgress
// need root and run ip, nft and ping.
func Require(t testing.TB) {
	t.Helper()
	testenv.Root(t)
	for _, b := range []string{"ip", "nft", "ping"} {
		testenv.Binary(t, b)
	}
}

// Tenant is one tenant's side of the lab.
type Tenant struct {
	NS      string       // the tenant VM's namespace
	Subnet  netip.Prefix // 10.20.(128+n).0/24
	Gateway netip.Addr   // .1 on the hypervisor
	Host    netip.Addr   // .11, the VM
	Iface   string       // the hypervisor's interface toward it (t<n>), member of its "VRF"
	Table   int          // the VRF's table on the hypervisor (1000+n)
	VRF     string       // the VRF device (vrf_tn<nn>) with Config.VRF, else ""
}

// Lab is a running topology. Fields are names and addresses for assertions.
type Lab struct {
	Prefix    string
	HV        string // hypervisor namespace
	Perimeter string
	Mgmt      string // management segment: a bridge whose address is the management host
	Outside   string
	Tenants   []Tenant
	VRF       bool

	Transit     string     // hypervisor's transit interface (stands for vmbr0.50)
	TransitAddr netip.Addr // 100.64.0.2, hypervisor
	TransitGW   netip.Addr // 100.64.0.1, perimeter
	MgmtIface   string     // hypervisor's management interface
	MgmtAddr    netip.Addr // 172.31.0.2, hypervisor
	MgmtGW      netip.Addr // 172.31.0.1, perimeter (the hypervisor's default route before convergence)
	MgmtHost    netip.Addr // 172.31.0.10
	PerimWAN    netip.Addr // 198.51.100.2: the source the outside host must see
	OutsideHost netip.Addr // 203.0.113.10
}

// Config sizes the lab.
type Config struct {
	Tenants int  // 1..63, default 2
	VRF     bool // real VRF devices on the hypervisor (needs CONFIG_NET_VRF)
}

// Up builds the lab; on error everything built so far is deleted.
func Up(cfg Config) (*Lab, error) {
	if cfg.Tenants == 0 {
		cfg.Tenants = 2
	}
	if cfg.Tenants < 1 || cfg.Tenants > 63 {
		return nil, fmt.Errorf("netlab: tenants must be 1..63, got %d", cfg.Tenants)
	}
	var rnd [2]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("netlab: random prefix: %w", err)
	}
	p := "dvt-" + hex.EncodeToString(rnd[:])
	l := &Lab{
		Prefix: p, HV: p + "-hv", Perimeter: p + "-pe", Mgmt: p + "-mg", Outside: p + "-out",
		Transit: "tr0", TransitAddr: netip.MustParseAddr("100.64.0.2"), TransitGW: netip.MustParseAddr("100.64.0.1"),
		MgmtIface: "mg0", MgmtAddr: netip.MustParseAddr("172.31.0.2"), MgmtGW: netip.MustParseAddr("172.31.0.1"),
		MgmtHost: netip.MustParseAddr("172.31.0.10"), PerimWAN: netip.MustParseAddr("198.51.100.2"),
		OutsideHost: netip.MustParseAddr("203.0.113.10"), VRF: cfg.VRF,
	}
	for n := 1; n <= cfg.Tenants; n++ {
		sub := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 20, byte(128 + n), 0}), 24)
		l.Tenants = append(l.Tenants, Tenant{
			NS: fmt.Sprintf("%s-t%d", p, n), Subnet: sub,
			Gateway: netip.AddrFrom4([4]byte{10, 20, byte(128 + n), 1}),
			Host:    netip.AddrFrom4([4]byte{10, 20, byte(128 + n), 11}),
			Iface:   fmt.Sprintf("t%d", n), Table: 1000 + n,
		})
		if cfg.VRF {
			l.Tenants[n-1].VRF = fmt.Sprintf("vrf_tn%02d", n)
		}
	}
	if err := l.build(); err != nil {
		derr := l.Down()
		return nil, errors.Join(err, derr)
	}
	return l, nil
}

// Namespaces lists every namespace of the lab.
func (l *Lab) Namespaces() []string {
	ns := []string{l.HV, l.Perimeter, l.Mgmt, l.Outside}
	for _, t := range l.Tenants {
		ns = append(ns, t.NS)
	}
	return ns
}

// Down deletes every namespace of the lab (and with them all links and routes).
func (l *Lab) Down() error {
	var errs []error
	for _, n := range l.Namespaces() {
		if out, err := exec.Command("ip", "netns", "del", n).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("No such file")) {
			errs = append(errs, fmt.Errorf("netlab: delete netns %s: %w: %s", n, err, bytes.TrimSpace(out)))
		}
	}
	return errors.Join(errs...)
}

// Run runs a command inside namespace ns (`ip netns exec`) and returns its combined output.
func (l *Lab) Run(ns string, args ...string) (string, error) {
	if !strings.HasPrefix(ns, l.Prefix+"-") {
		return "", fmt.Errorf("netlab: %q is not a namespace of this lab", ns) // never the caller's own
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("netlab: in %s: %s: %w: %s", ns, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// Ping sends one echo request from ns to dst and waits one second for the reply.
func (l *Lab) Ping(ns string, dst netip.Addr) error {
	_, err := l.Run(ns, "ping", "-n", "-q", "-c1", "-W1", dst.String())
	return err
}

// NS opens a handle on a lab namespace; the caller closes it.
func (l *Lab) NS(name string) (netns.NsHandle, error) {
	h, err := netns.GetFromName(name)
	if err != nil {
		return netns.None(), fmt.Errorf("netlab: open netns %s: %w", name, err)
	}
	return h, nil
}

// inNS runs f on a thread switched into ns and switches it back before anything else can run
// there (a socket keeps the namespace it was created in).
func inNS(ns netns.NsHandle, f func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer func() { _ = orig.Close() }()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	ferr := f()
	if err := netns.Set(orig); err != nil {
		return err // thread stays locked and dies with the goroutine
	}
	runtime.UnlockOSThread()
	return ferr
}

// SourceSeen opens a TCP listener on the outside host, connects to it from namespace from, and
// returns the source address the outside host saw (the perimeter's, when NAT works).
func (l *Lab) SourceSeen(from string, timeout time.Duration) (netip.Addr, error) {
	out, err := l.NS(l.Outside)
	if err != nil {
		return netip.Addr{}, err
	}
	defer func() { _ = out.Close() }()
	src, err := l.NS(from)
	if err != nil {
		return netip.Addr{}, err
	}
	defer func() { _ = src.Close() }()
	var ln net.Listener
	if err := inNS(out, func() (e error) {
		ln, e = net.Listen("tcp4", netip.AddrPortFrom(l.OutsideHost, 0).String())
		return e
	}); err != nil {
		return netip.Addr{}, fmt.Errorf("netlab: listen on outside host: %w", err)
	}
	defer func() { _ = ln.Close() }()
	seen := make(chan netip.Addr, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(seen)
			return
		}
		ap, _ := netip.ParseAddrPort(c.RemoteAddr().String())
		_ = c.Close()
		seen <- ap.Addr()
	}()
	var conn net.Conn
	if err := inNS(src, func() (e error) {
		conn, e = net.DialTimeout("tcp4", ln.Addr().String(), timeout)
		return e
	}); err != nil {
		return netip.Addr{}, fmt.Errorf("netlab: connect from %s to %s: %w", from, ln.Addr(), err)
	}
	defer func() { _ = conn.Close() }()
	select {
	case a, ok := <-seen:
		if !ok {
			return netip.Addr{}, errors.New("netlab: accept failed")
		}
		return a, nil
	case <-time.After(timeout):
		return netip.Addr{}, errors.New("netlab: outside host saw no connection")
	}
}

// CheckEgress sends the packets that prove ADR-0003 once the hypervisor is converged, and
// returns one error per expectation that does not hold (none: all good):
//   - every tenant reaches the outside host, which sees the perimeter's address (NAT);
//   - no tenant reaches the management host, the hypervisor's management address, another
//     tenant or another tenant's gateway;
//   - the management host reaches every tenant; the outside host reaches none;
//   - the hypervisor's own default route points at the transit next hop.
//
// Each negative check waits one second, so it takes about 2+3n seconds for n tenants.
func (l *Lab) CheckEgress() []error {
	var errs []error
	expect := func(ok bool, desc, ns string, dst netip.Addr) {
		err := l.Ping(ns, dst)
		switch {
		case ok && err != nil:
			errs = append(errs, fmt.Errorf("%s (%s -> %s): want a reply: %w", desc, ns, dst, err))
		case !ok && err == nil:
			errs = append(errs, fmt.Errorf("%s (%s -> %s): want no reply, got one", desc, ns, dst))
		}
	}
	for i, t := range l.Tenants {
		expect(true, "tenant -> outside", t.NS, l.OutsideHost)
		expect(true, "management host -> tenant", l.Mgmt, t.Host)
		expect(false, "tenant -> management host", t.NS, l.MgmtHost)
		expect(false, "tenant -> hypervisor management address", t.NS, l.MgmtAddr)
		expect(false, "outside -> tenant", l.Outside, t.Host)
		o := l.Tenants[(i+1)%len(l.Tenants)]
		if o.NS != t.NS {
			expect(false, "tenant -> other tenant", t.NS, o.Host)
			expect(false, "tenant -> other tenant's gateway", t.NS, o.Gateway)
		}
		src, err := l.SourceSeen(t.NS, 3*time.Second)
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant %s -> outside TCP: %w", t.NS, err))
		} else if src != l.PerimWAN {
			errs = append(errs, fmt.Errorf("outside host saw %s connect from %s, want the perimeter's %s (NAT)", t.NS, src, l.PerimWAN))
		}
	}
	out, err := l.Run(l.HV, "ip", "-4", "route", "show", "default")
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("hypervisor default route: %w", err))
	case !strings.Contains(out, "via "+l.TransitGW.String()+" dev "+l.Transit):
		errs = append(errs, fmt.Errorf("hypervisor default route is %q, want via %s dev %s", strings.TrimSpace(out), l.TransitGW, l.Transit))
	}
	return errs
}

func (l *Lab) build() error {
	b := &builder{l: l}
	for _, n := range l.Namespaces() {
		b.ip("netns", "add", n)
		b.in(n, "ip", "link", "set", "lo", "up")
	}
	// management segment: a bridge in Mgmt; its own address is the management host
	b.in(l.Mgmt, "ip", "link", "add", "br0", "type", "bridge")
	b.in(l.Mgmt, "ip", "addr", "add", l.MgmtHost.String()+"/24", "dev", "br0")
	b.in(l.Mgmt, "ip", "link", "set", "br0", "up")
	b.veth(l.HV, l.MgmtIface, l.MgmtAddr.String()+"/24", l.Mgmt, "hv", "")
	b.veth(l.Perimeter, "mgmt", l.MgmtGW.String()+"/24", l.Mgmt, "pe", "")
	b.in(l.Mgmt, "ip", "link", "set", "hv", "master", "br0")
	b.in(l.Mgmt, "ip", "link", "set", "pe", "master", "br0")
	b.in(l.Mgmt, "ip", "route", "add", "10.20.0.0/16", "via", l.MgmtGW.String())
	// transit (VLAN 50 on a real node)
	b.veth(l.HV, l.Transit, l.TransitAddr.String()+"/24", l.Perimeter, "tr0", l.TransitGW.String()+"/24")
	// outside world
	b.veth(l.Perimeter, "wan", l.PerimWAN.String()+"/24", l.Outside, "eth0", "198.51.100.1/24")
	b.in(l.Outside, "ip", "addr", "add", l.OutsideHost.String()+"/32", "dev", "lo")
	// the hypervisor as ifupdown left it: default route over management
	b.in(l.HV, "ip", "route", "add", "default", "via", l.MgmtGW.String(), "dev", l.MgmtIface, "proto", "static")
	var input []string
	for _, t := range l.Tenants {
		tbl := fmt.Sprint(t.Table)
		b.veth(t.NS, "eth0", t.Host.String()+"/24", l.HV, t.Iface, "")
		b.in(t.NS, "ip", "route", "add", "default", "via", t.Gateway.String())
		b.in(l.Perimeter, "ip", "route", "add", t.Subnet.String(), "via", l.TransitAddr.String())
		if l.VRF {
			// as PVE's EVPN zone: the VNet side enslaved to the zone's VRF; the connected route
			// lands in the VRF's table by itself
			b.in(l.HV, "ip", "link", "add", t.VRF, "type", "vrf", "table", tbl)
			b.in(l.HV, "ip", "link", "set", t.VRF, "up")
			b.in(l.HV, "ip", "link", "set", t.Iface, "master", t.VRF)
			b.in(l.HV, "ip", "addr", "add", t.Gateway.String()+"/24", "dev", t.Iface)
			continue
		}
		// VRF emulation: the connected route lives only in the tenant's table
		b.in(l.HV, "ip", "addr", "add", t.Gateway.String()+"/24", "dev", t.Iface, "noprefixroute")
		b.in(l.HV, "ip", "route", "add", t.Subnet.String(), "dev", t.Iface, "table", tbl, "src", t.Gateway.String())
		b.in(l.HV, "ip", "rule", "add", "iif", t.Iface, "lookup", tbl, "pref", fmt.Sprint(t.Table))
		input = append(input, fmt.Sprintf("    iifname %q ip daddr != %s drop", t.Iface, t.Gateway))
	}
	if !l.VRF {
		// the local table is shared by the emulated VRFs: a tenant must not reach the hypervisor's
		// other addresses (a real VRF keeps them apart)
		b.nft(l.HV, "table inet hv {\n  chain input {\n    type filter hook input priority filter; policy accept;\n"+strings.Join(input, "\n")+"\n  }\n}\n")
	}
	b.in(l.Perimeter, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward") // busybox has no sysctl -q
	b.in(l.Perimeter, "ip", "route", "add", "default", "via", "198.51.100.1")
	b.nft(l.Perimeter, `table ip nat {
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "wan" masquerade
  }
}
table inet perim {
  chain forward {
    type filter hook forward priority filter; policy drop;
    ct state established,related accept
    iifname "tr0" oifname "wan" accept
    iifname "mgmt" accept
    iifname "tr0" oifname "mgmt" counter drop
    counter drop
  }
}
`)
	return b.err
}

// builder runs setup commands until the first error.
type builder struct {
	l   *Lab
	err error
}

func (b *builder) run(stdin string, name string, args ...string) {
	if b.err != nil {
		return
	}
	cmd := exec.Command(name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.err = fmt.Errorf("netlab: %s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

func (b *builder) ip(args ...string) { b.run("", "ip", args...) }

func (b *builder) in(ns string, args ...string) {
	b.run("", "ip", append([]string{"netns", "exec", ns}, args...)...)
}

func (b *builder) nft(ns, ruleset string) {
	b.run(ruleset, "ip", "netns", "exec", ns, "nft", "-f", "-")
}

// veth links ns1/if1 to ns2/if2, created directly inside the two namespaces (never in the
// caller's), addresses optional.
func (b *builder) veth(ns1, if1, addr1, ns2, if2, addr2 string) {
	b.ip("link", "add", if1, "netns", ns1, "type", "veth", "peer", "name", if2, "netns", ns2)
	for _, e := range [][3]string{{ns1, if1, addr1}, {ns2, if2, addr2}} {
		if e[2] != "" {
			b.in(e[0], "ip", "addr", "add", e[2], "dev", e[1])
		}
		b.in(e[0], "ip", "link", "set", e[1], "up")
	}
}

// IsolateLocalTable moves the hypervisor's `lookup local` rule from preference 0 to 32765, after
// the l3mdev rule (1000), for IPv4 and IPv6: what ifupdown2's vrf addon does when it creates the
// first VRF on a PVE node (its _add_vrf_rules), and what the kernel's VRF documentation
// recommends. With the kernel's default order the shared local table answers first for every
// packet, so a tenant reaches every address of the hypervisor's default VRF, its management
// address included (TestEgressVRF shows it). Up leaves the default order, as a bare kernel has it.
func (l *Lab) IsolateLocalTable() error {
	for _, fam := range []string{"-4", "-6"} {
		if _, err := l.Run(l.HV, "ip", fam, "rule", "add", "pref", "32765", "lookup", "local"); err != nil {
			return err
		}
		if _, err := l.Run(l.HV, "ip", fam, "rule", "del", "pref", "0"); err != nil {
			return err
		}
	}
	return nil
}

// VRFSupported probes, in a throw-away namespace, whether the kernel can create VRF devices
// (the CI host cannot: no CONFIG_NET_VRF and no modules).
func VRFSupported() (bool, error) {
	var rnd [2]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return false, err
	}
	ns := "dvt-" + hex.EncodeToString(rnd[:]) + "-probe"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return false, fmt.Errorf("netlab: probe netns: %w: %s", err, bytes.TrimSpace(out))
	}
	defer exec.Command("ip", "netns", "del", ns).Run() //nolint:errcheck // best effort: the probe namespace holds nothing
	err := exec.Command("ip", "netns", "exec", ns, "ip", "link", "add", "vrf_probe", "type", "vrf", "table", "10").Run()
	return err == nil, nil
}
