package route

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
)

func TestParseDest(t *testing.T) {
	for in, want := range map[string]string{
		"default": "0.0.0.0/0", "default6": "::/0", "10.20.129.0/24": "10.20.129.0/24",
		"10.20.129.5": "10.20.129.5/32", " 2001:db8::/32 ": "2001:db8::/32",
	} {
		got, err := ParseDest(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseDest(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "10.20.129.5/24", "300.1.1.1/8", "::ffff:10.0.0.0/104", "fe80::1%eth0/128"} {
		if _, err := ParseDest(in); err == nil {
			t.Errorf("ParseDest(%q) accepted", in)
		}
	}
	if _, err := ParseDest("10.20.129.5/24"); err == nil || !strings.Contains(err.Error(), "10.20.129.0/24") {
		t.Errorf("host bits error should suggest the network: %v", err)
	}
}

func TestTableNumber(t *testing.T) {
	cases := []struct {
		in    string
		n     int
		isNum bool
		ok    bool
	}{
		{"", 254, true, true}, {"main", 254, true, true}, {"1001", 1001, true, true},
		{"vrf_tn01", 0, false, true}, {"0", 0, true, false}, {"255", 0, true, false},
		{"253", 0, true, false}, {"4294967296", 0, true, false}, {"vrf/../x", 0, false, false},
	}
	for _, c := range cases {
		n, isNum, err := TableNumber(c.in)
		if (err == nil) != c.ok || (c.ok && (n != c.n || isNum != c.isNum)) {
			t.Errorf("TableNumber(%q) = %d, %v, %v", c.in, n, isNum, err)
		}
	}
}

func TestValidate(t *testing.T) {
	def := netip.MustParsePrefix("0.0.0.0/0")
	gw := netip.MustParseAddr("100.64.0.1")
	cases := map[string]struct {
		cfg  Config
		want string
	}{
		"no target":  {Config{State: Present, Routes: []Route{{Dest: def}}}, "routes[0]: give a gateway, a device or both"},
		"family":     {Config{State: Present, Routes: []Route{{Dest: netip.MustParsePrefix("::/0"), Gateway: gw}}}, "routes[0].gateway"},
		"dup key":    {Config{State: Present, Routes: []Route{{Dest: def, Gateway: gw}, {Dest: def, Device: "x", Table: "254"}}}, "routes[1]: same table, dest and metric as routes[0]"},
		"bad dev":    {Config{State: Present, Routes: []Route{{Dest: def, Device: "a b"}}}, "routes[0].device"},
		"long dev":   {Config{State: Present, Routes: []Route{{Dest: def, Device: "abcdefghijklmnop"}}}, "routes[0].device"},
		"bad fwd":    {Config{State: Present, Forwarding: []string{"../all"}}, "forwarding[0]"},
		"excl abs":   {Config{State: Absent, Exclusive: true}, "exclusive"},
		"bad state":  {Config{State: "gone"}, "state"},
		"bad metric": {Config{State: Present, Routes: []Route{{Dest: def, Gateway: gw, Metric: -1}}}, "routes[0].metric"},
	}
	for name, c := range cases {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, c.want)
		}
	}
	ok := Config{State: Absent, Routes: []Route{{Dest: def}}} // absent needs only the key
	if err := ok.Validate(); err != nil {
		t.Errorf("absent by key only: %v", err)
	}
}

func TestRetryDumpInterrupted(t *testing.T) {
	calls := 0
	got, err := retry("list", func() (int, error) {
		calls++
		if calls < 3 {
			return -1, netlink.ErrDumpInterrupted
		}
		return 42, nil
	})
	if err != nil || got != 42 || calls != 3 {
		t.Fatalf("retry = %d, %v after %d calls", got, err, calls)
	}
	calls = 0
	_, err = retry("list", func() (int, error) { calls++; return 0, netlink.ErrDumpInterrupted })
	if !errors.Is(err, netlink.ErrDumpInterrupted) || calls != dumpRetries {
		t.Fatalf("persistent interruption: %v after %d calls", err, calls)
	}
}

func TestScriptsDisabled(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]bool{
		"addon_scripts_support=1\n":       false,
		"# x\n addon_scripts_support = 0": true,
		"template_enable=0\n":             true,
	} {
		p := filepath.Join(dir, "c")
		must(t, os.WriteFile(p, []byte(content), 0o644))
		if got, err := ScriptsDisabled(p); err != nil || got != want {
			t.Errorf("ScriptsDisabled(%q) = %v, %v", content, got, err)
		}
	}
	if got, err := ScriptsDisabled(filepath.Join(dir, "missing")); got || err != nil {
		t.Errorf("missing file: %v, %v", got, err)
	}
}

// egress is the declaration of the ADR-0003 routes for a namespace with transit tr0
// (100.64.0.2/24, next hop 100.64.0.1) and tenant interfaces t1..tn in tables 1001..:
// in real life the tables are VRFs, here numbers.
func egress(n int, tables func(i int) string) Config {
	gw := netip.MustParseAddr("100.64.0.1")
	cfg := Config{State: Present, Forwarding: []string{"tr0"},
		Routes: []Route{{Dest: netip.MustParsePrefix("0.0.0.0/0"), Gateway: gw, Device: "tr0"}}}
	for i := 1; i <= n; i++ {
		sub := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 20, byte(128 + i), 0}), 24)
		cfg.Routes = append(cfg.Routes,
			Route{Dest: netip.MustParsePrefix("0.0.0.0/0"), Gateway: gw, Device: "tr0", Table: tables(i)},
			Route{Dest: sub, Device: tenantIf(i, tables), Table: MainTable})
		cfg.Forwarding = append(cfg.Forwarding, tenantIf(i, tables))
	}
	return cfg
}

// tenantIf is where the return route points: the VRF device itself with real VRFs, the
// tenant interface with emulated ones.
func tenantIf(i int, tables func(i int) string) string {
	if tb := tables(i); tb[0] < '0' || tb[0] > '9' {
		return tb
	}
	return "t" + itoa(i)
}

func itoa(i int) string { return strconv.Itoa(i) }

func numTables(i int) string { return itoa(1000 + i) }

func setupTables(t testing.TB, n int) *testNS {
	ns := newTestNS(t)
	ns.veth(t, "tr0", "tr0p", "100.64.0.2/24")
	for i := 1; i <= n; i++ {
		ns.veth(t, "t"+itoa(i), "t"+itoa(i)+"p", "")
	}
	return ns
}

func TestConvergeTables(t *testing.T) {
	ns := setupTables(t, 2)
	// the hypervisor's management default route, installed by ifupdown (proto static)
	mg := ns.veth(t, "mg0", "mg0p", "172.31.0.2/24")
	must(t, ns.H.RouteAdd(&netlink.Route{Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}, Gw: net.ParseIP("172.31.0.1"), LinkIndex: mg.Attrs().Index, Protocol: 4}))
	cfg := egress(2, numTables)

	// check mode is Plan alone: it must find everything to do and write nothing
	p, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if len(p.Changes) != 5 || len(p.Forwarding) != 3 {
		t.Fatalf("plan: %d route changes, %d forwarding; want 5, 3: %+v", len(p.Changes), len(p.Forwarding), p.Changes)
	}
	if p.Changes[0].Op != OpReplace || !strings.Contains(p.Changes[0].Reason, "via 172.31.0.1 dev mg0 table main metric 0 proto static") {
		t.Errorf("the management default route should be taken over: %+v", p.Changes[0])
	}
	if !reflect.DeepEqual(p.Before, []string{"default via 172.31.0.1 dev mg0 table main metric 0 proto static"}) {
		t.Errorf("before = %q", p.Before)
	}
	if r := findRoute(routesIn(t, ns.H, 1001, 0), "0.0.0.0/0"); r != nil {
		t.Fatal("Plan wrote a route")
	}
	writes, err := ns.Mgr.Apply(p)
	must(t, err)
	if writes != 8 {
		t.Errorf("writes = %d, want 8", writes)
	}
	main := routesIn(t, ns.H, 254, Protocol)
	if r := findRoute(main, "0.0.0.0/0"); r == nil || r.Gw.String() != "100.64.0.1" {
		t.Errorf("main default route: %+v", main)
	}
	if r := findRoute(main, "10.20.129.0/24"); r == nil || r.Gw != nil || r.Scope != netlink.SCOPE_LINK {
		t.Errorf("return route: %+v", r)
	}
	for _, tb := range []int{1001, 1002} {
		if r := findRoute(routesIn(t, ns.H, tb, Protocol), "0.0.0.0/0"); r == nil {
			t.Errorf("table %d has no default route", tb)
		}
	}
	for _, ifn := range cfg.Forwarding {
		if on, err := ns.Mgr.Sysctl.Forwarding(ifn); err != nil || !on {
			t.Errorf("forwarding %s = %v, %v", ifn, on, err)
		}
	}
	// idempotence: the second plan is empty
	p2, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if p2.Changed() {
		t.Fatalf("second plan not empty: %+v %+v", p2.Changes, p2.Forwarding)
	}
	if !reflect.DeepEqual(p2.Before, p2.After) || len(p2.After) != 5 {
		t.Errorf("no-op diff: before %q after %q", p2.Before, p2.After)
	}

	// a gateway change is a replace of the same key
	cfg.Routes[1].Gateway = netip.MustParseAddr("100.64.0.9")
	p3, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if len(p3.Changes) != 1 || p3.Changes[0].Op != OpReplace {
		t.Fatalf("gateway change: %+v", p3.Changes)
	}

	// exclusive: an owned route nobody declares goes, a foreign one stays
	ns.addOwnedAndForeign(t, ns.veth(t, "t9", "t9p", ""), 1009)
	cfg.Routes[1].Gateway = netip.MustParseAddr("100.64.0.1")
	p4, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if p4.Changed() {
		t.Fatalf("non-exclusive plan touches undeclared routes: %+v", p4.Changes)
	}
	ns.applyExclusive(t, &cfg, 1009, "10.99.0.0/24 dev t9 table 1009")

	// absent removes owned routes and leaves a foreign one with a warning
	abs := Config{State: Absent, Routes: []Route{
		{Dest: netip.MustParsePrefix("0.0.0.0/0"), Table: "1001"},
		{Dest: netip.MustParsePrefix("10.98.0.0/24"), Table: "1009"},
		{Dest: netip.MustParsePrefix("0.0.0.0/0"), Table: "vrf_gone"},
	}}
	p6, err := ns.Mgr.Plan(abs)
	must(t, err)
	if len(p6.Changes) != 1 || len(p6.Warnings) != 1 || !strings.Contains(p6.Warnings[0], "routes[1]") {
		t.Fatalf("absent plan: %+v warnings %q", p6.Changes, p6.Warnings)
	}
	_, err = ns.Mgr.Apply(p6)
	must(t, err)
	if findRoute(routesIn(t, ns.H, 1001, 0), "0.0.0.0/0") != nil {
		t.Error("absent route still there")
	}
}

func v4(rs []netlink.Route) []string {
	var out []string
	for _, r := range rs {
		if r.Family == netlink.FAMILY_V4 {
			out = append(out, r.String())
		}
	}
	return out
}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestErrorsChangeNothing(t *testing.T) {
	ns := setupTables(t, 1)
	other := ns.veth(t, "ot0", "ot0p", "192.0.2.2/24")
	_ = other
	must(t, ns.H.RouteAdd(&netlink.Route{Dst: mustCIDR("198.18.0.0/24"), Gw: net.ParseIP("192.0.2.1")}))
	gw := netip.MustParseAddr("100.64.0.1")
	def := netip.MustParsePrefix("0.0.0.0/0")
	ok := Route{Dest: def, Gateway: gw, Device: "tr0"}
	cases := map[string]struct {
		bad  Route
		want string
	}{
		"missing VRF":      {Route{Dest: def, Gateway: gw, Device: "tr0", Table: "vrf_tn07"}, `routes[1].table: VRF device "vrf_tn07" does not exist`},
		"not a VRF":        {Route{Dest: def, Gateway: gw, Device: "tr0", Table: "t1"}, `routes[1].table: "t1" is a veth device, not a VRF`},
		"missing device":   {Route{Dest: def, Gateway: gw, Device: "vmbr0.50", Table: "1001"}, `routes[1].device: interface "vmbr0.50" does not exist`},
		"no route to gw":   {Route{Dest: def, Gateway: netip.MustParseAddr("203.0.113.1"), Table: "1001"}, "routes[1].gateway: 203.0.113.1 is unreachable"},
		"gw on other dev":  {Route{Dest: def, Gateway: netip.MustParseAddr("192.0.2.1"), Device: "tr0", Table: "1001"}, "routes[1].gateway: 192.0.2.1 is unreachable via device tr0"},
		"gw not on-link":   {Route{Dest: def, Gateway: netip.MustParseAddr("198.18.0.1"), Table: "1001"}, "routes[1].gateway: 198.18.0.1 is not on-link, it is reached only via 192.0.2.1"},
		"forwarding iface": {Route{}, `forwarding[0]: interface "nope0" does not exist`},
	}
	for name, c := range cases {
		cfg := Config{State: Present, Routes: []Route{ok}}
		if c.bad.Dest.IsValid() {
			cfg.Routes = append(cfg.Routes, c.bad)
		} else {
			cfg.Forwarding = []string{"nope0"}
		}
		before := v4(routesIn(t, ns.H, 0, 0)) // IPv6 link-local routes come and go on their own
		_, err := ns.Mgr.Plan(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
		if after := v4(routesIn(t, ns.H, 0, 0)); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: routes changed on error", name)
		}
	}
}

func TestHookRestoresRoutes(t *testing.T) {
	ns := setupTables(t, 2)
	cfg := egress(2, numTables)
	p, err := ns.Mgr.Plan(cfg)
	must(t, err)
	_, err = ns.Mgr.Apply(p)
	must(t, err)
	hook := filepath.Join(t.TempDir(), "if-up.d", "deevnet-transit-route")
	must(t, os.MkdirAll(filepath.Dir(hook), 0o755))
	hc, err := PlanHook(hook, cfg)
	must(t, err)
	if hc.Before != "" || !hc.Changed() {
		t.Fatalf("first hook plan: %+v", hc)
	}
	must(t, ApplyHook(hc))
	if st, err := os.Stat(hook); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("hook file: %v %v", st, err)
	}
	hc2, err := PlanHook(hook, cfg)
	must(t, err)
	if hc2.Changed() {
		t.Fatal("hook not idempotent")
	}

	// what an ifreload does to these routes: they are gone (and forwarding reset)
	flush := func() {
		for _, r := range routesIn(t, ns.H, 0, Protocol) {
			must(t, ns.H.RouteDel(&r))
		}
		for _, ifn := range cfg.Forwarding {
			must(t, ns.Mgr.Sysctl.SetForwarding(ifn, false))
		}
	}
	runHook := func(iface string) {
		out, err := exec.Command("ip", "netns", "exec", ns.Name, "env", "IFACE="+iface, "/bin/sh", hook).CombinedOutput()
		if err != nil {
			t.Fatalf("hook IFACE=%s: %v: %s", iface, err, out)
		}
	}
	flush()
	runHook("eth7") // an unrelated interface: the hook does nothing
	if rs := routesIn(t, ns.H, 0, Protocol); len(rs) != 0 {
		t.Fatalf("hook acted for an unrelated interface: %v", rs)
	}
	runHook("tr0")
	p2, err := ns.Mgr.Plan(cfg)
	must(t, err)
	if p2.Changed() {
		t.Fatalf("after the hook the module still has work: %+v %+v", p2.Changes, p2.Forwarding)
	}
	flush()
	runHook("--all")
	if p3, _ := ns.Mgr.Plan(cfg); p3.Changed() {
		t.Fatal("IFACE=--all did not restore")
	}

	// state=absent removes the hook
	hc3, err := PlanHook(hook, Config{State: Absent})
	must(t, err)
	must(t, ApplyHook(hc3))
	if _, err := os.Stat(hook); !os.IsNotExist(err) {
		t.Fatalf("hook still there: %v", err)
	}
}

func TestRenderHookVRFByName(t *testing.T) {
	cfg := egress(1, func(int) string { return "vrf_tn01" })
	s, err := RenderHook(cfg)
	must(t, err)
	for _, want := range []string{
		"$IP -4 route replace 0.0.0.0/0 via 100.64.0.1 dev tr0 metric 0 vrf vrf_tn01 proto 221",
		"$IP -4 route replace 10.20.129.0/24 dev vrf_tn01 metric 0 table 254 proto 221",
		"echo 1 > /proc/sys/net/ipv4/conf/tr0/forwarding",
		"--all|tr0|vrf_tn01) ;;",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("hook lacks %q:\n%s", want, s)
		}
	}
}

func benchConverge(b *testing.B, n int, noop bool) {
	benchLoop(b, setupTables(b, n), egress(n, numTables), noop, 2*n+1)
}

// benchLoop converges cfg once, then measures one converge per iteration: a no-op (noop), or one
// that restores the routes deleted from the main table, with the timer stopped, before it.
func benchLoop(b *testing.B, ns *testNS, cfg Config, noop bool, writes int) {
	p, err := ns.Mgr.Plan(cfg)
	must(b, err)
	_, err = ns.Mgr.Apply(p)
	must(b, err)
	if noop {
		writes = 0
	}
	for b.Loop() {
		if !noop {
			b.StopTimer()
			for _, r := range routesIn(b, ns.H, 0, Protocol) {
				must(b, ns.H.RouteDel(&r))
			}
			b.StartTimer()
		}
		p, err := ns.Mgr.Plan(cfg)
		must(b, err)
		w, err := ns.Mgr.Apply(p)
		must(b, err)
		if w != writes {
			b.Fatalf("writes = %d, want %d", w, writes)
		}
	}
}

func BenchmarkConverge63Tables(b *testing.B) { benchConverge(b, 63, false) }
func BenchmarkNoop63Tables(b *testing.B)     { benchConverge(b, 63, true) }
