package sdn

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// badCase is one refused input: the options (over a valid base), and the field the message names.
type badCase struct {
	name  string
	args  map[string]any
	field string
}

// connectionCases are the shared connection failures as table rows.
func connectionCases(t *testing.T) []badCase {
	t.Helper()
	var out []badCase
	for _, c := range pvesimtest.BadConnections(t) {
		out = append(out, badCase{c.Name, c.Args, c.Field})
	}
	return out
}

// refuseAll runs each case over base and wants: failed, field in msg, 0 writes attempted.
func refuseAll(t *testing.T, e *env, mod module.Entry, base map[string]any, cases []badCase) {
	t.Helper()
	if len(cases) < 15 {
		t.Fatalf("%d cases, want at least 15", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{}
			for k, v := range base {
				args[k] = v
			}
			for k, v := range c.args {
				args[k] = v
			}
			e.srv.ResetStats()
			r := e.exec(mod, args, false, true)
			if !r.failed() {
				t.Fatalf("%v accepted: %v", c.args, r.res)
			}
			if !strings.Contains(r.msg(), c.field) {
				t.Fatalf("msg %q does not name %q", r.msg(), c.field)
			}
			if w := e.srv.Stats().Writes; w != 0 {
				t.Fatalf("%d write(s) before the refusal %q", w, r.msg())
			}
		})
	}
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
	cases := append(connectionCases(t),
		badCase{"node not in the cluster", map[string]any{"nodes": []any{node("nosuchnode", nil)}}, "nodes[0].name"},
		badCase{"area with openfabric", map[string]any{"area": "5"}, "area"},
		badCase{"unknown protocol", map[string]any{"protocol": "bgp"}, "protocol"},
		badCase{"ip_prefix not a prefix", map[string]any{"ip_prefix": "not-a-prefix"}, "ip_prefix"},
		badCase{"ip_prefix IPv6", map[string]any{"ip_prefix": "fd00::/64"}, "ip_prefix"},
		badCase{"node ip outside the prefix", map[string]any{"nodes": []any{node("dv02hyp002p02", map[string]any{"ip": "192.0.2.1"})}}, "nodes[0].ip"},
		badCase{"node ip not an address", map[string]any{"nodes": []any{node("dv02hyp002p02", map[string]any{"ip": "x"})}}, "nodes[0].ip"},
		badCase{"node listed twice", map[string]any{"nodes": []any{node("dv02hyp002p02", nil), node("dv02hyp002p02", nil)}}, "nodes[1].name"},
		badCase{"no underlay interface", map[string]any{"nodes": []any{map[string]any{"name": "dv02hyp002p02", "interfaces": []any{}}}}, "nodes[0].interfaces"},
		badCase{"interface name", map[string]any{"nodes": []any{map[string]any{"name": "dv02hyp002p02", "interfaces": []any{"bad if!"}}}}, "nodes[0].interfaces"},
		badCase{"node name format", map[string]any{"nodes": []any{node("-bad", nil)}}, "nodes[0].name"},
		badCase{"fabric id too long", map[string]any{"fabric": "underlay01"}, "fabric"},
		badCase{"asn 0", map[string]any{"asn": 0}, "asn"},
		badCase{"controller id", map[string]any{"controller": "bad ctl"}, "controller"},
		badCase{"nodes missing", map[string]any{"nodes": nil}, "nodes"},
		badCase{"lock_wait negative", map[string]any{"lock_wait": -1}, "lock_wait"},
		badCase{"apply_timeout 0", map[string]any{"apply_timeout": 0}, "apply_timeout"},
		badCase{"state unknown", map[string]any{"state": "gone"}, "state"},
		badCase{"ospf area format", map[string]any{"protocol": "ospf", "area": "x.y"}, "area"},
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
	cases := append(connectionCases(t),
		badCase{"vnet_count 3", map[string]any{"vnet_count": 3}, "vnet_count"},
		badCase{"vnet_count 0", map[string]any{"vnet_count": 0}, "vnet_count"},
		badCase{"index 0", map[string]any{"index": 0}, "index"},
		badCase{"index 64", map[string]any{"index": 64}, "index"},
		badCase{"index not a number", map[string]any{"index": "one"}, "index"},
		badCase{"name format", map[string]any{"name": "T_demo"}, "name"},
		badCase{"another tenant's index", map[string]any{"name": "tother", "index": 1}, "zone tn01 is not tenant tother's"},
		badCase{"zone id too long", map[string]any{"zone": "tenantdemo"}, "zone"},
		badCase{"zone id format", map[string]any{"zone": "tn_1"}, "zone"},
		badCase{"vnet subnet", map[string]any{"index": 2, "name": "tother", "vnets": vnet("tn02v0", 20032, "10.20.130.0/33")}, "vnets[0].subnet"},
		badCase{"vnet tag used by another zone", map[string]any{"index": 2, "name": "tother", "vnets": vnet("tn02v0", 20016, "10.20.130.0/24")}, "vnets[0].tag"},
		badCase{"vrf_vxlan used by another zone", map[string]any{"index": 2, "name": "tother", "vrf_vxlan": 10001}, "vrf_vxlan"},
		badCase{"mtu out of range", map[string]any{"mtu": 100000}, "mtu"},
		badCase{"lock_wait negative", map[string]any{"lock_wait": -1}, "lock_wait"},
		badCase{"lock_wait beyond apply_timeout", map[string]any{"lock_wait": 30, "apply_timeout": 10}, "lock_wait"},
		badCase{"unknown option", map[string]any{"vnet_cnt": 2}, "vnet_cnt"},
	)
	refuseAll(t, e, VRFModule(), tdemoArgs, cases)
}

func TestApplyBadInput(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1}, false), true)
	e.writes()
	cases := append(connectionCases(t),
		badCase{"expect not a key", map[string]any{"expect": []any{"not a key"}}, "expect[0]"},
		badCase{"expect unknown kind", map[string]any{"expect": []any{"zone/tn01", "router/x"}}, "expect[1]"},
		badCase{"expect kind without id", map[string]any{"expect": []any{"zone/"}}, "expect[0]"},
		badCase{"expect fabric_node without fabric", map[string]any{"expect": []any{"fabric_node/x"}}, "expect[0]"},
		badCase{"expect id with a slash", map[string]any{"expect": []any{"vnet/a/b"}}, "expect[0]"},
		badCase{"lock_wait negative", map[string]any{"lock_wait": -1}, "lock_wait"},
		badCase{"lock_wait too long", map[string]any{"lock_wait": 7200}, "lock_wait"},
		badCase{"apply_timeout negative", map[string]any{"apply_timeout": -5}, "apply_timeout"},
		badCase{"apply_timeout not a number", map[string]any{"apply_timeout": "soon"}, "apply_timeout"},
		badCase{"on_failure unknown", map[string]any{"on_failure": "ignore"}, "on_failure"},
		badCase{"allow_foreign_pending not a bool", map[string]any{"allow_foreign_pending": "perhaps"}, "allow_foreign_pending"},
		badCase{"foreign pending", map[string]any{"expect": []any{"zone/tn01"}}, "vnet/tn01v0"},
		badCase{"nothing expected", map[string]any{}, "did not stage"},
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
