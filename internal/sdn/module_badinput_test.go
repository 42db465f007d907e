package sdn

import (
	"context"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// refuseAll runs each case over base and wants: failed, field in msg, 0 writes attempted.
func refuseAll(t *testing.T, e *env, mod module.Entry, base map[string]any, cases []pvesimtest.BadInput) {
	t.Helper()
	if len(cases) < 15 {
		t.Fatalf("%d cases, want at least 15", len(cases))
	}
	pvesimtest.RefuseAll(t, e.srv, base, cases, func(_ testing.TB, args map[string]any) (map[string]any, int) {
		r := e.exec(mod, args, false, true)
		return r.res, r.code
	})
}

func TestFabricBadInput(t *testing.T) {
	e := newEnv(t)
	node := func(name string, extra map[string]any) map[string]any {
		n := map[string]any{"name": name, "interfaces": []any{"vmbr0.51"}}
		for k, v := range extra {
			n[k] = v
		}
		return n
	}
	cases := append(pvesimtest.BadConnections(t),
		pvesimtest.Bad("node not in the cluster", map[string]any{"nodes": []any{node("nosuchnode", nil)}}, "nodes[0].name"),
		pvesimtest.Bad("area with openfabric", map[string]any{"area": "5"}, "area"),
		pvesimtest.Bad("unknown protocol", map[string]any{"protocol": "bgp"}, "protocol"),
		pvesimtest.Bad("ip_prefix not a prefix", map[string]any{"ip_prefix": "not-a-prefix"}, "ip_prefix"),
		pvesimtest.Bad("ip_prefix IPv6", map[string]any{"ip_prefix": "fd00::/64"}, "ip_prefix"),
		pvesimtest.Bad("node ip outside the prefix", map[string]any{"nodes": []any{node("dv02hyp002p02", map[string]any{"ip": "192.0.2.1"})}}, "nodes[0].ip"),
		pvesimtest.Bad("node ip not an address", map[string]any{"nodes": []any{node("dv02hyp002p02", map[string]any{"ip": "x"})}}, "nodes[0].ip"),
		pvesimtest.Bad("node listed twice", map[string]any{"nodes": []any{node("dv02hyp002p02", nil), node("dv02hyp002p02", nil)}}, "nodes[1].name"),
		pvesimtest.Bad("no underlay interface", map[string]any{"nodes": []any{map[string]any{"name": "dv02hyp002p02", "interfaces": []any{}}}}, "nodes[0].interfaces"),
		pvesimtest.Bad("interface name", map[string]any{"nodes": []any{map[string]any{"name": "dv02hyp002p02", "interfaces": []any{"bad if!"}}}}, "nodes[0].interfaces"),
		pvesimtest.Bad("node name format", map[string]any{"nodes": []any{node("-bad", nil)}}, "nodes[0].name"),
		pvesimtest.Bad("fabric id too long", map[string]any{"fabric": "underlay01"}, "fabric"),
		pvesimtest.Bad("asn 0", map[string]any{"asn": 0}, "asn"),
		pvesimtest.Bad("controller id", map[string]any{"controller": "bad ctl"}, "controller"),
		pvesimtest.Bad("nodes missing", map[string]any{"nodes": nil}, "nodes"),
		pvesimtest.Bad("lock_wait negative", map[string]any{"lock_wait": -1}, "lock_wait"),
		pvesimtest.Bad("apply_timeout 0", map[string]any{"apply_timeout": 0}, "apply_timeout"),
		pvesimtest.Bad("state unknown", map[string]any{"state": "gone"}, "state"),
		pvesimtest.Bad("ospf area format", map[string]any{"protocol": "ospf", "area": "x.y"}, "area"),
	)
	refuseAll(t, e, FabricModule(), map[string]any{"nodes": []any{member1}}, cases)
}

func TestVRFBadInput(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false), true)
	vnet := func(id string, tag any, subnet string) []any {
		return []any{map[string]any{"id": id, "tag": tag, "subnet": subnet}}
	}
	cases := append(pvesimtest.BadConnections(t),
		pvesimtest.Bad("vnet_count 3", map[string]any{"vnet_count": 3}, "vnet_count"),
		pvesimtest.Bad("vnet_count 0", map[string]any{"vnet_count": 0}, "vnet_count"),
		pvesimtest.Bad("index 0", map[string]any{"index": 0}, "index"),
		pvesimtest.Bad("index 64", map[string]any{"index": 64}, "index"),
		pvesimtest.Bad("index not a number", map[string]any{"index": "one"}, "index"),
		pvesimtest.Bad("name format", map[string]any{"name": "T_demo"}, "name"),
		pvesimtest.Bad("another tenant's index", map[string]any{"name": "tother", "index": 1}, "zone tn01 is not tenant tother's"),
		pvesimtest.Bad("zone id too long", map[string]any{"zone": "tenantdemo"}, "zone"),
		pvesimtest.Bad("zone id format", map[string]any{"zone": "tn_1"}, "zone"),
		pvesimtest.Bad("vnet subnet", map[string]any{"index": 2, "name": "tother", "vnets": vnet("tn02v0", 20032, "10.20.130.0/33")}, "vnets[0].subnet"),
		pvesimtest.Bad("vnet tag used by another zone", map[string]any{"index": 2, "name": "tother", "vnets": vnet("tn02v0", 20016, "10.20.130.0/24")}, "vnets[0].tag"),
		pvesimtest.Bad("vrf_vxlan used by another zone", map[string]any{"index": 2, "name": "tother", "vrf_vxlan": 10001}, "vrf_vxlan"),
		pvesimtest.Bad("mtu out of range", map[string]any{"mtu": 100000}, "mtu"),
		pvesimtest.Bad("lock_wait negative", map[string]any{"lock_wait": -1}, "lock_wait"),
		pvesimtest.Bad("lock_wait beyond apply_timeout", map[string]any{"lock_wait": 30, "apply_timeout": 10}, "lock_wait"),
		pvesimtest.Bad("unknown option", map[string]any{"vnet_cnt": 2}, "vnet_cnt"),
	)
	refuseAll(t, e, VRFModule(), tdemoArgs, cases)
}

func TestApplyBadInput(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1}, false), true)
	e.writes()
	cases := append(pvesimtest.BadConnections(t),
		pvesimtest.Bad("expect not a key", map[string]any{"expect": []any{"not a key"}}, "expect[0]"),
		pvesimtest.Bad("expect unknown kind", map[string]any{"expect": []any{"zone/tn01", "router/x"}}, "expect[1]"),
		pvesimtest.Bad("expect kind without id", map[string]any{"expect": []any{"zone/"}}, "expect[0]"),
		pvesimtest.Bad("expect fabric_node without fabric", map[string]any{"expect": []any{"fabric_node/x"}}, "expect[0]"),
		pvesimtest.Bad("expect id with a slash", map[string]any{"expect": []any{"vnet/a/b"}}, "expect[0]"),
		pvesimtest.Bad("lock_wait negative", map[string]any{"lock_wait": -1}, "lock_wait"),
		pvesimtest.Bad("lock_wait too long", map[string]any{"lock_wait": 7200}, "lock_wait"),
		pvesimtest.Bad("apply_timeout negative", map[string]any{"apply_timeout": -5}, "apply_timeout"),
		pvesimtest.Bad("apply_timeout not a number", map[string]any{"apply_timeout": "soon"}, "apply_timeout"),
		pvesimtest.Bad("on_failure unknown", map[string]any{"on_failure": "ignore"}, "on_failure"),
		pvesimtest.Bad("allow_foreign_pending not a bool", map[string]any{"allow_foreign_pending": "perhaps"}, "allow_foreign_pending"),
		pvesimtest.Bad("foreign pending", map[string]any{"expect": []any{"zone/tn01"}}, "vnet/tn01v0"),
		pvesimtest.Bad("nothing expected", map[string]any{}, "did not stage"),
	)
	refuseAll(t, e, ApplyModule(), map[string]any{"expect": []any{}}, cases)
}

// apply_timeout bounds the whole run: an apply task that outlives it fails the run at the
// deadline (before: apply_timeout + lock_wait + 4 x api_timeout).
func TestApplyTimeoutBoundsTheRun(t *testing.T) {
	cfg := pvesim.DefaultConfig()
	cfg.TaskDuration = 20 * time.Second
	srv, _ := pvesimtest.Start(t, cfg)
	e := &env{t: t, srv: srv}
	start := time.Now()
	r := e.fabric(map[string]any{"nodes": []any{member1}, "apply": true, "apply_timeout": 2, "lock_wait": 1}, false)
	took := time.Since(start)
	if !r.failed() {
		t.Fatalf("a 20 s apply task under apply_timeout 2 succeeded: %v", r.res)
	}
	if took > 2*time.Second+time.Second {
		t.Fatalf("the run took %s, apply_timeout is 2 s (%s)", took.Round(time.Millisecond), r.msg())
	}
	t.Logf("failed after %s: %s", took.Round(time.Millisecond), r.msg())
}

// A run refused before it staged anything (the lock held by someone else, foreign pending
// changes) reports no pending object: pending_objects lists only what was staged.
func TestFailedRunReportsOnlyWhatWasStaged(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	check := func(what string, r run) {
		t.Helper()
		if !r.failed() {
			t.Fatalf("%s: want a failure, got %v", what, r.res)
		}
		if p := r.strs("pending_objects"); len(p) != 0 {
			t.Fatalf("%s: pending_objects %v, but nothing was staged (%s)", what, p, r.msg())
		}
		objs, _ := r.res["objects"].([]any)
		for _, o := range objs {
			if m, _ := o.(map[string]any); m["pending"] != "" {
				t.Fatalf("%s: object %v reported pending, nothing was staged", what, m)
			}
		}
		if _, ok := e.writes(); ok != 0 { // the refused lock request is the only write attempted
			t.Fatalf("%s: %d writes accepted", what, ok)
		}
	}
	e.srv.HoldSDNLock(90 * time.Second)
	check("lock held", e.vrf(map[string]any{"name": "tother", "index": 2, "apply": true}, false))
	if err := e.client().Delete(context.Background(), "/cluster/sdn/lock", map[string][]string{"force": {"1"}}, nil); err != nil {
		t.Fatal(err)
	}
	e.writes()
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1}, false), true)
	e.writes()
	check("foreign pending", e.vrf(map[string]any{"name": "tother", "index": 2, "apply": true}, false))
}

// The apply task is waited for as long as apply_timeout allows, not one request's api_timeout:
// a node's reload may take minutes (test/lab: FRR under TCG).
func TestApplyWaitsAsLongAsApplyTimeout(t *testing.T) {
	cfg := pvesim.DefaultConfig()
	cfg.TaskDuration = 3 * time.Second
	srv, _ := pvesimtest.Start(t, cfg)
	e := &env{t: t, srv: srv}
	r := e.fabric(map[string]any{"nodes": []any{member1}, "apply": true, "apply_timeout": 20, "api_timeout": 1}, false)
	if r.failed() {
		t.Fatalf("a 3 s apply task under apply_timeout 20 and api_timeout 1 failed: %s", r.msg())
	}
}
