package netlab

import (
	"net/netip"
	"os"
	"testing"

	"github.com/deevnet/tenant/internal/route"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestEgressVRF is the data-plane test with real VRF devices on the hypervisor, as PVE builds
// them: internal/route converges the hypervisor namespace (in-process, through a handle), then
// CheckEgress proves NAT egress and isolation with packets. The host kernel has no VRF, so this
// runs in the QEMU guest (make test-route); cmd/transit_route's TestEgressDataPlane covers the
// emulated-VRF lab with the module binary on the host.
func TestEgressVRF(t *testing.T) {
	Require(t)
	ok, err := VRFSupported()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if os.Getenv("DEEVNET_GUEST") != "" {
			t.Fatal("guest kernel cannot create VRF devices")
		}
		t.Skip("needs kernel VRF support (CONFIG_NET_VRF): runs in the QEMU guest (make test-route)")
	}
	lab, err := Up(Config{Tenants: 2, VRF: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Down(); err != nil {
			t.Error(err)
		}
	})
	if lab.Ping(lab.Tenants[0].NS, lab.OutsideHost) == nil {
		t.Fatal("a tenant reaches the outside host before convergence")
	}
	ns, err := lab.NS(lab.HV)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ns.Close() }()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	mgr := &route.Manager{Handle: h, Sysctl: route.NetnsSysctl{NS: ns}}
	cfg := route.Config{State: route.Present, Exclusive: true, Forwarding: []string{lab.Transit},
		Routes: []route.Route{{Dest: netip.MustParsePrefix("0.0.0.0/0"), Gateway: lab.TransitGW, Device: lab.Transit}}}
	for _, tn := range lab.Tenants {
		cfg.Routes = append(cfg.Routes,
			route.Route{Dest: netip.MustParsePrefix("0.0.0.0/0"), Gateway: lab.TransitGW, Device: lab.Transit, Table: tn.VRF},
			route.Route{Dest: tn.Subnet, Device: tn.VRF, Table: route.MainTable})
		cfg.Forwarding = append(cfg.Forwarding, tn.Iface)
	}
	p, err := mgr.Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.Apply(p); err != nil {
		t.Fatal(err)
	}
	if p2, err := mgr.Plan(cfg); err != nil || p2.Changed() {
		t.Fatalf("second plan: %v %+v", err, p2)
	}
	// With the kernel's default rule order (local table at preference 0, before l3mdev) a tenant
	// reaches the hypervisor's own management address through the shared local table. ifupdown2
	// reorders the rules when it creates a VRF on the node; pin the hazard, reorder as it does,
	// then check everything.
	if err := lab.Ping(lab.Tenants[0].NS, lab.MgmtAddr); err != nil {
		t.Errorf("expected the local-table leak with the default rule order (why the reorder matters); got: %v", err)
	}
	if err := lab.IsolateLocalTable(); err != nil {
		t.Fatal(err)
	}
	for _, err := range lab.CheckEgress() {
		t.Error(err)
	}
	out, _ := lab.Run(lab.HV, "ip", "route", "show", "vrf", lab.Tenants[0].VRF)
	t.Logf("ip route show vrf %s:\n%s", lab.Tenants[0].VRF, out)
}
