package main

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/netlab"
	"github.com/deevnet/tenant/internal/testenv"
)

// buildModule compiles the module the way the Makefile does.
func buildModule(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "transit_route")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	return bin
}

// runModule runs the binary inside namespace ns with args, as Ansible would run it on the node.
func runModule(t *testing.T, lab *netlab.Lab, ns, bin string, args map[string]any) (map[string]any, int) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "args.json")
	b, _ := json.Marshal(args)
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", ns, bin, f)
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run module: %v", err)
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("module output is not one JSON object: %v: %q", err, out)
	}
	return res, code
}

// egressArgs declares ADR-0003 for the lab: hypervisor default on transit, each tenant table's
// default toward the perimeter, return routes from main into the tenants, forwarding.
func egressArgs(lab *netlab.Lab, hook string) map[string]any {
	routes := []any{map[string]any{"dest": "default", "gateway": lab.TransitGW.String(), "device": lab.Transit}}
	fwd := []any{lab.Transit}
	for _, tn := range lab.Tenants {
		routes = append(routes,
			map[string]any{"dest": "default", "gateway": lab.TransitGW.String(), "device": lab.Transit, "table": itoa(tn.Table)},
			map[string]any{"dest": tn.Subnet.String(), "device": tn.Iface})
		fwd = append(fwd, tn.Iface)
	}
	return map[string]any{"routes": routes, "forwarding": fwd, "exclusive": true,
		"persist": true, "persist_path": hook, "ifupdown2_conf": filepath.Join(filepath.Dir(hook), "missing.conf")}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestEgressDataPlane is the end-to-end test: the built module converges the hypervisor of a
// namespace lab, then real packets prove egress through NAT and isolation.
func TestEgressDataPlane(t *testing.T) {
	netlab.Require(t)
	bin := buildModule(t)
	lab, err := netlab.Up(netlab.Config{Tenants: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Down(); err != nil {
			t.Error(err)
		}
	})
	hook := filepath.Join(t.TempDir(), "deevnet-transit-route")
	args := egressArgs(lab, hook)
	t1 := lab.Tenants[0]

	if lab.Ping(t1.NS, lab.OutsideHost) == nil {
		t.Fatal("before convergence a tenant already reaches the outside host: the lab proves nothing")
	}

	res, code := runModule(t, lab, lab.HV, bin, moduletest.With(args, "_ansible_check_mode", true, "_ansible_diff", true))
	if code != 0 || res["changed"] != true || !strings.HasPrefix(res["msg"].(string), "would apply") {
		t.Fatalf("check mode: %d %v", code, res)
	}
	if _, err := os.Stat(hook); !os.IsNotExist(err) {
		t.Fatal("check mode wrote the hook")
	}
	if out, _ := lab.Run(lab.HV, "ip", "route", "show", "default"); !strings.Contains(out, "via "+lab.MgmtGW.String()) {
		t.Fatalf("check mode changed the default route: %s", out)
	}
	diff, _ := json.Marshal(res["diff"])
	if !strings.Contains(string(diff), "proto static") || !strings.Contains(string(diff), "default via 100.64.0.1 dev tr0 table 1001 metric 0") {
		t.Errorf("diff should show the taken-over management route and the new routes: %s", diff)
	}

	res, code = runModule(t, lab, lab.HV, bin, moduletest.With(args, "_ansible_diff", true))
	if code != 0 || res["changed"] != true {
		t.Fatalf("apply: %d %v", code, res)
	}
	res, code = runModule(t, lab, lab.HV, bin, args)
	if code != 0 || res["changed"] != false {
		t.Fatalf("second run must change nothing: %d %v", code, res)
	}

	for _, err := range lab.CheckEgress() {
		t.Error(err)
	}
	pingOK := func(desc, ns string, dst netip.Addr) {
		t.Helper()
		if err := lab.Ping(ns, dst); err != nil {
			t.Errorf("%s: want reachable: %v", desc, err)
		}
	}
	pingFail := func(desc, ns string, dst netip.Addr) {
		t.Helper()
		if err := lab.Ping(ns, dst); err == nil {
			t.Errorf("%s: want unreachable, got a reply", desc)
		}
	}

	// an ifreload/reboot loses the routes and forwarding; the hook puts them back
	if _, err := lab.Run(lab.HV, "ip", "route", "flush", "proto", "221"); err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Run(lab.HV, "sysctl", "-qw", "net.ipv4.conf.tr0.forwarding=0"); err != nil {
		t.Fatal(err)
	}
	pingFail("tenant 1 -> outside after the routes were lost", t1.NS, lab.OutsideHost)
	if out, err := lab.Run(lab.HV, "env", "IFACE="+lab.Transit, "/bin/sh", hook); err != nil {
		t.Fatalf("hook: %v %s", err, out)
	}
	pingOK("tenant 1 -> outside after the hook", t1.NS, lab.OutsideHost)
	res, code = runModule(t, lab, lab.HV, bin, args)
	if code != 0 || res["changed"] != false {
		t.Fatalf("after the hook the module must find nothing to do: %d %v", code, res)
	}

	// errors: the field and the rule, nothing changed
	bad := moduletest.With(args, "routes", []any{map[string]any{"dest": "default", "gateway": "100.64.0.1", "device": "tr0", "table": "vrf_tn09"}})
	res, code = runModule(t, lab, lab.HV, bin, bad)
	if code != 1 || !strings.Contains(res["msg"].(string), `routes[0].table: VRF device "vrf_tn09" does not exist`) {
		t.Errorf("missing VRF: %d %v", code, res)
	}
	bad = moduletest.With(args, "routes", []any{map[string]any{"dest": "default", "gateway": "192.0.2.1", "device": "tr0", "table": "1001"}})
	res, code = runModule(t, lab, lab.HV, bin, bad)
	if code != 1 || !strings.Contains(res["msg"].(string), "routes[0].gateway: 192.0.2.1 is unreachable via device tr0") {
		t.Errorf("unreachable gateway: %d %v", code, res)
	}
	res, _ = runModule(t, lab, lab.HV, bin, args)
	if res["changed"] != false {
		t.Errorf("a failed run changed something: %v", res)
	}
}

// benchModule times the module binary (process start, netlink, JSON) on the hypervisor of a
// 63-tenant lab: 127 routes and 64 forwarding switches, from nothing and as a no-op.
func benchModule(b *testing.B, noop bool) {
	testenv.Root(b)
	testenv.Binary(b, "ip")
	testenv.Binary(b, "nft")
	bin := filepath.Join(b.TempDir(), "transit_route")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v: %s", err, out)
	}
	lab, err := netlab.Up(netlab.Config{Tenants: 63})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = lab.Down() })
	args := egressArgs(lab, filepath.Join(b.TempDir(), "hook"))
	args["persist"] = false
	f := filepath.Join(b.TempDir(), "args.json")
	raw, _ := json.Marshal(args)
	if err := os.WriteFile(f, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	run := func() map[string]any {
		out, err := exec.Command("ip", "netns", "exec", lab.HV, bin, f).Output()
		var res map[string]any
		if jerr := json.Unmarshal(out, &res); jerr != nil || err != nil {
			b.Fatalf("module: %v %v %s", err, jerr, out)
		}
		return res
	}
	run()
	for b.Loop() {
		if !noop {
			b.StopTimer()
			if _, err := lab.Run(lab.HV, "ip", "route", "flush", "proto", "221"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if res := run(); res["changed"] != !noop {
			b.Fatalf("changed = %v", res["changed"])
		}
	}
}

func BenchmarkModuleConverge63Tables(b *testing.B) { benchModule(b, false) }
func BenchmarkModuleNoop63Tables(b *testing.B)     { benchModule(b, true) }
