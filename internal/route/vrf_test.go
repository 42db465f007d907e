package route

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// These tests need kernel VRFs (CONFIG_NET_VRF). The host kernel here has none, so they skip on
// the host and run in the QEMU guest (test/guest/run.sh, make test-route), where DEEVNET_GUEST=1
// turns a missing VRF into a failure.

func vrfName(i int) string { return "vrf_tn" + string(rune('0'+i/10)) + string(rune('0'+i%10)) }

// setupVRFs builds a hypervisor namespace as PVE leaves it after an EVPN apply: transit tr0,
// one VRF per tenant (table 1000+i) with a tenant interface t<i> enslaved, address 10.20.x.1.
func setupVRFs(t testing.TB, n int) *testNS {
	ns := newTestNS(t)
	ns.veth(t, "tr0", "tr0p", "100.64.0.2/24")
	for i := 1; i <= n; i++ {
		v := ns.vrf(t, vrfName(i), uint32(1000+i))
		name := "t" + itoa(i)
		// enslave before up: the VRF driver otherwise cycles the device (down, up)
		must(t, ns.H.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name, MasterIndex: v.Index}, PeerName: name + "p"}))
		l, err := ns.H.LinkByName(name)
		must(t, err)
		p, err := ns.H.LinkByName(name + "p")
		must(t, err)
		a, err := netlink.ParseAddr("10.20." + itoa(128+i) + ".1/24")
		must(t, err)
		must(t, ns.H.AddrAdd(l, a))
		must(t, ns.H.LinkSetUp(l))
		must(t, ns.H.LinkSetUp(p))
	}
	return ns
}

func vrfTables(i int) string { return vrfName(i) }

func TestConvergeVRF(t *testing.T) {
	ns := setupVRFs(t, 2)
	cfg := egress(2, vrfTables)
	cfg.Forwarding = []string{"tr0", "t1", "t2"}
	p, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if len(p.Changes) != 5 {
		t.Fatalf("plan: %+v", p.Changes)
	}
	_, err = ns.Mgr.Apply(p)
	must(t, err)

	def := findRoute(routesIn(t, ns.H, 1001, Protocol), "0.0.0.0/0")
	if def == nil || def.Gw.String() != "100.64.0.1" {
		t.Fatalf("no VRF default route in table 1001: %+v", routesIn(t, ns.H, 1001, 0))
	}
	vrf1, _ := ns.H.LinkByName("vrf_tn01")
	back := findRoute(routesIn(t, ns.H, 254, Protocol), "10.20.129.0/24")
	if back == nil || back.LinkIndex != vrf1.Attrs().Index {
		t.Fatalf("return route into the VRF: %+v", back)
	}
	p2, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if p2.Changed() {
		t.Fatalf("not idempotent: %+v", p2.Changes)
	}
	want := "default via 100.64.0.1 dev tr0 table vrf_tn01 metric 0"
	if !contains(p2.After, want) || !contains(p2.After, "10.20.129.0/24 dev vrf_tn01 table main metric 0") {
		t.Errorf("diff should name VRFs: %q", p2.After)
	}

	// the kernel itself forwards with these routes: a lookup from the tenant side leaves via transit
	got, err := ns.H.RouteGetWithOptions(net.ParseIP("203.0.113.10"), &netlink.RouteGetOptions{VrfName: "vrf_tn01"})
	must(t, err)
	if len(got) == 0 || got[0].Gw.String() != "100.64.0.1" {
		t.Errorf("route get 203.0.113.10 vrf vrf_tn01 = %+v", got)
	}

	// exclusive: owned-but-undeclared goes, foreign stays, in a VRF table
	t2, err := ns.H.LinkByName("t2")
	must(t, err)
	ns.addOwnedAndForeign(t, t2, 1002)
	ns.applyExclusive(t, &cfg, 1002, "10.99.0.0/24 dev t2 table vrf_tn02 metric 0")

	// dropping a tenant from the declaration removes its routes (exclusive)
	cfg2 := egress(1, vrfTables)
	cfg2.Exclusive = true
	p4, err := ns.Mgr.Plan(cfg2)
	must(t, err)
	_, err = ns.Mgr.Apply(p4)
	must(t, err)
	if findRoute(routesIn(t, ns.H, 1002, Protocol), "0.0.0.0/0") != nil || findRoute(routesIn(t, ns.H, 254, Protocol), "10.20.130.0/24") != nil {
		t.Error("tenant 2's routes survived an exclusive run without it")
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestVRFErrors(t *testing.T) {
	ns := setupVRFs(t, 1)
	gw := netip.MustParseAddr("100.64.0.1")
	def := netip.MustParsePrefix("0.0.0.0/0")
	for name, c := range map[string]struct {
		r    Route
		want string
	}{
		"missing VRF":  {Route{Dest: def, Gateway: gw, Device: "tr0", Table: "vrf_tn09"}, `routes[0].table: VRF device "vrf_tn09" does not exist`},
		"slave no VRF": {Route{Dest: def, Gateway: gw, Device: "tr0", Table: "t1"}, `routes[0].table: "t1" is a veth device, not a VRF`},
		// without a device the gateway is looked up as the kernel would: VRF table, then the rules after it
		"gw nowhere": {Route{Dest: def, Gateway: netip.MustParseAddr("203.0.113.1"), Table: "vrf_tn01"}, "routes[0].gateway: 203.0.113.1 is unreachable"},
	} {
		_, err := ns.Mgr.Plan(Config{State: Present, Routes: []Route{c.r}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
	// the same route spelled by VRF name and by its table number
	_, err := ns.Mgr.Plan(Config{State: Present, Routes: []Route{
		{Dest: def, Gateway: gw, Device: "tr0", Table: "vrf_tn01"},
		{Dest: def, Gateway: gw, Device: "tr0", Table: "1001"},
	}})
	if err == nil || !strings.Contains(err.Error(), "routes[1]: resolves to the same table, dest and metric as routes[0]") {
		t.Errorf("duplicate by VRF name and number: %v", err)
	}
	if rs := routesIn(t, ns.H, 0, Protocol); len(rs) != 0 {
		t.Errorf("errors wrote routes: %v", rs)
	}
}

// TestHookVRF proves the persisted hook's `ip route replace ... vrf NAME` lines rebuild exactly
// what the module installs (the module finds nothing to do afterwards).
func TestHookVRF(t *testing.T) {
	ns := setupVRFs(t, 2)
	cfg := egress(2, vrfTables)
	cfg.Forwarding = []string{"tr0", "t1", "t2"}
	p, err := ns.Mgr.Plan(cfg)
	must(t, err)
	_, err = ns.Mgr.Apply(p)
	must(t, err)
	hook := filepath.Join(t.TempDir(), "deevnet-transit-route")
	hc, err := PlanHook(hook, cfg)
	must(t, err)
	must(t, ApplyHook(hc))
	for _, r := range routesIn(t, ns.H, 0, Protocol) {
		must(t, ns.H.RouteDel(&r))
	}
	must(t, ns.Mgr.Sysctl.SetForwarding("tr0", false))
	out, err := exec.Command("ip", "netns", "exec", ns.Name, "env", "IFACE=vrf_tn02", "/bin/sh", hook).CombinedOutput()
	if err != nil {
		t.Fatalf("hook: %v: %s", err, out)
	}
	p2, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if p2.Changed() {
		t.Fatalf("after the hook: %+v %+v", p2.Changes, p2.Forwarding)
	}
	if !reflect.DeepEqual(p2.Before, p.After) {
		t.Errorf("hook result %q differs from module result %q", p2.Before, p.After)
	}
	_ = os.Remove(hook)
}

func benchVRF(b *testing.B, noop bool) {
	cfg := egress(63, vrfTables)
	cfg.Forwarding = []string{"tr0"}
	benchLoop(b, setupVRFs(b, 63), cfg, noop, 127)
}

// 63 tenant VRFs: 127 routes (hypervisor default, 63 VRF defaults, 63 return routes).
func BenchmarkConverge63VRF(b *testing.B) { benchVRF(b, false) }
func BenchmarkNoop63VRF(b *testing.B)     { benchVRF(b, true) }

// A node that still looks up the local table first is not isolated: the plan says so, and stops
// saying so once the rule sits after the VRF rule (as ifupdown2 leaves it).
func TestWarnsWhileLocalRuleIsFirst(t *testing.T) {
	ns := setupVRFs(t, 1)
	cfg := egress(1, vrfTables)
	p, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0], "ip -4 rule") || !strings.Contains(p.Warnings[1], "ip -6 rule") {
		t.Fatalf("want one warning per family about the local rule, got %q", p.Warnings)
	}
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		moved := netlink.NewRule()
		moved.Family, moved.Priority, moved.Table = fam, 32765, unix.RT_TABLE_LOCAL
		must(t, ns.H.RuleAdd(moved))
		first := netlink.NewRule()
		first.Family, first.Priority, first.Table = fam, 0, unix.RT_TABLE_LOCAL
		must(t, ns.H.RuleDel(first))
	}
	p, err = ns.Mgr.Plan(cfg)
	must(t, err)
	if len(p.Warnings) != 0 {
		t.Fatalf("warnings after the local rule moved: %q", p.Warnings)
	}
}
