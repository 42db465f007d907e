package route

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/testenv"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// testNS is a named network namespace (so `ip netns exec` can run the hook in it) with a
// netlink handle and a Sysctl bound to it. The test's own threads never enter it: see the
// lesson in RECIPES.md about t.Run and switched threads.
type testNS struct {
	Name string
	NS   netns.NsHandle
	H    *netlink.Handle
	Mgr  *Manager
}

func newTestNS(t testing.TB) *testNS {
	t.Helper()
	testenv.Root(t)
	testenv.Binary(t, "ip")
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	name := "dvt-rt-" + hex.EncodeToString(rnd[:])
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); _ = ns.Close() })
	n := &testNS{Name: name, NS: ns, H: h}
	n.Mgr = &Manager{Handle: h, Sysctl: NetnsSysctl{NS: ns}}
	lo, err := h.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	must(t, h.LinkSetUp(lo))
	return n
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// veth adds a veth pair inside the namespace, addr (CIDR, optional) on the first end, both up.
func (n *testNS) veth(t testing.TB, name, peer, addr string) netlink.Link {
	t.Helper()
	must(t, n.H.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer}))
	l, err := n.H.LinkByName(name)
	must(t, err)
	p, err := n.H.LinkByName(peer)
	must(t, err)
	if addr != "" {
		a, err := netlink.ParseAddr(addr)
		must(t, err)
		must(t, n.H.AddrAdd(l, a))
	}
	must(t, n.H.LinkSetUp(l))
	must(t, n.H.LinkSetUp(p))
	return l
}

// vrf adds a VRF device or skips (fails in CI) when the kernel has none.
func (n *testNS) vrf(t testing.TB, name string, table uint32) *netlink.Vrf {
	t.Helper()
	err := n.H.LinkAdd(&netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: name}, Table: table})
	if err != nil && (errors.Is(err, unix.EOPNOTSUPP) || err.Error() == "operation not supported") {
		requireGuest(t, "kernel VRF support (CONFIG_NET_VRF): "+err.Error())
	}
	must(t, err)
	l, err := n.H.LinkByName(name)
	must(t, err)
	must(t, n.H.LinkSetUp(l))
	return l.(*netlink.Vrf)
}

// requireGuest skips a test that needs a kernel feature the host lacks. The guest run (make
// test-route, env DEEVNET_GUEST=1) must have it, so there it fails instead of skipping.
func requireGuest(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("DEEVNET_GUEST") != "" {
		t.Fatalf("guest kernel lacks %s", what)
	}
	t.Skipf("needs %s: runs in the QEMU guest (make test-route)", what)
}

// routesIn lists the routes of table (all families) with the given protocol (0 = any).
func routesIn(t testing.TB, h *netlink.Handle, table int, proto netlink.RouteProtocol) []netlink.Route {
	t.Helper()
	rs, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: table}, netlink.RT_FILTER_TABLE)
	must(t, err)
	var out []netlink.Route
	for _, r := range rs {
		if r.Type == unix.RTN_UNICAST && (proto == 0 || r.Protocol == proto) {
			out = append(out, r)
		}
	}
	return out
}

func findRoute(rs []netlink.Route, dst string) *netlink.Route {
	_, want, _ := net.ParseCIDR(dst)
	for i := range rs {
		if rs[i].Dst != nil && rs[i].Dst.String() == want.String() {
			return &rs[i]
		}
	}
	return nil
}

// addOwnedAndForeign puts two routes nobody declares into table on link: 10.99.0.0/24 with our
// protocol, which an exclusive run removes, and 10.98.0.0/24 with another's, which it keeps.
func (n *testNS) addOwnedAndForeign(t testing.TB, link netlink.Link, table int) {
	t.Helper()
	must(t, n.H.RouteAdd(&netlink.Route{Dst: mustCIDR("10.99.0.0/24"), LinkIndex: link.Attrs().Index, Table: table, Protocol: Protocol}))
	must(t, n.H.RouteAdd(&netlink.Route{Dst: mustCIDR("10.98.0.0/24"), LinkIndex: link.Attrs().Index, Table: table, Protocol: 4}))
}

// applyExclusive sets cfg.Exclusive and converges: the plan's one change deletes the owned route
// of addOwnedAndForeign (its text starts with want), and afterwards only the foreign one is left.
func (n *testNS) applyExclusive(t testing.TB, cfg *Config, table int, want string) {
	t.Helper()
	cfg.Exclusive = true
	p, err := n.Mgr.Plan(*cfg)
	must(t, err)
	if len(p.Changes) != 1 || p.Changes[0].Op != OpDelete || !strings.HasPrefix(p.Changes[0].Text, want) {
		t.Fatalf("exclusive plan: %+v", p.Changes)
	}
	_, err = n.Mgr.Apply(p)
	must(t, err)
	rs := routesIn(t, n.H, table, 0)
	if findRoute(rs, "10.99.0.0/24") != nil || findRoute(rs, "10.98.0.0/24") == nil {
		t.Errorf("after exclusive: %+v", rs)
	}
}
