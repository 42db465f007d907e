package sdn

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

type env struct {
	t   testing.TB
	srv *pvesim.Server
}

func newEnv(t testing.TB, nodes ...string) *env {
	t.Helper()
	cfg := pvesim.DefaultConfig()
	for _, n := range nodes {
		cfg.Nodes = append(cfg.Nodes, pvesim.NodeConfig{Name: n, MaxCPU: 16, MaxMem: 1 << 36})
	}
	if len(cfg.Nodes)%2 == 0 {
		// an even number of members has a QDevice, or one away takes quorum with it (ADR-0015)
		cfg.Quorum.QDevice = &pvesim.QDeviceConfig{Host: "qdevice.test"}
	}
	srv, _ := pvesimtest.Start(t, cfg)
	return &env{t: t, srv: srv}
}

type run struct {
	res  map[string]any
	code int
}

func (r run) changed() bool { return r.res["changed"] == true }
func (r run) failed() bool  { return r.code != 0 }
func (r run) msg() string   { s, _ := r.res["msg"].(string); return s }
func (r run) strs(key string) []string {
	var out []string
	l, _ := r.res[key].([]any)
	for _, e := range l {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

// exec runs a handler through module.Execute, as Ansible would, with the simulator's root token.
func (e *env) exec(mod module.Entry, args map[string]any, check, diff bool) run {
	e.t.Helper()
	id, secret := e.srv.RootToken()
	a := map[string]any{"api_host": e.srv.Host(), "api_port": e.srv.Port(), "api_user": "root@pam",
		"api_token_id": strings.SplitN(id, "!", 2)[1], "api_token_secret": secret, "ca_path": e.srv.CAFile(),
		"_ansible_check_mode": check, "_ansible_diff": diff}
	for k, v := range args {
		a[k] = v
	}
	res, code := moduletest.Execute(e.t, mod, a)
	out, _ := json.Marshal(res)
	if strings.Contains(string(out), secret) {
		e.t.Fatalf("token secret in the result: %s", out)
	}
	return run{res, code}
}

func (e *env) fabric(args map[string]any, check bool) run {
	return e.exec(FabricModule(), args, check, true)
}
func (e *env) vrf(args map[string]any, check bool) run {
	return e.exec(VRFModule(), args, check, true)
}
func (e *env) apply(args map[string]any, check bool) run {
	return e.exec(ApplyModule(), args, check, true)
}

// writes returns writes attempted and accepted since the last call, and resets the counters.
// takeStats returns the simulator's counts since the last take and starts them again, so each
// step of a test counts only its own requests.
func (e *env) takeStats() pvesim.Stats {
	s := e.srv.Stats()
	e.srv.ResetStats()
	return s
}

func (e *env) writes() (attempted, accepted int) {
	s := e.takeStats()
	return s.Writes, s.WritesAccepted
}

func (e *env) requests() int {
	n := 0
	for _, c := range e.srv.Stats().Requests {
		n += c
	}
	return n
}

func (e *env) client() *pve.Client {
	id, secret := e.srv.RootToken()
	c, err := pve.New(pve.Config{Host: e.srv.Host(), Port: e.srv.Port(), TokenID: id, TokenSecret: secret, ValidateCerts: true, CAPath: e.srv.CAFile()})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

var member1 = map[string]any{"name": "dv02hyp002p02", "interfaces": []any{"vmbr0.51"}}
var tdemoArgs = map[string]any{"name": "tdemo", "index": 1}

func must(t testing.TB, r run, changed bool) {
	t.Helper()
	if r.failed() {
		t.Fatalf("failed: %s", r.msg())
	}
	if r.changed() != changed {
		t.Fatalf("changed = %v, want %v (msg %q)", r.changed(), changed, r.msg())
	}
}

func noWrites(t testing.TB, e *env, what string) {
	t.Helper()
	if w, _ := e.writes(); w != 0 {
		t.Fatalf("%s: %d writes, want 0", what, w)
	}
}

func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	fab := map[string]any{"nodes": []any{member1}}

	// Check mode: no write, a diff per object.
	r := e.fabric(fab, true)
	must(t, r, true)
	noWrites(t, e, "fabric check mode")
	if d, _ := r.res["diff"].([]any); len(d) != 3 {
		t.Fatalf("fabric diff: %v", r.res["diff"])
	}
	r = e.fabric(fab, false)
	must(t, r, true)
	if w, ok := e.writes(); w != 3 || ok != 3 {
		t.Fatalf("fabric staging: %d writes (%d ok), want 3", w, ok)
	}
	wantPending := []string{"controller/evpnctl", "fabric/ufab", "fabric_node/ufab/dv02hyp002p02"}
	if got := r.strs("pending_objects"); strings.Join(got, " ") != strings.Join(wantPending, " ") {
		t.Fatalf("pending_objects = %v", got)
	}
	fabricPending := r.strs("pending_objects")
	must(t, e.fabric(fab, false), false)
	noWrites(t, e, "fabric second run (unapplied)")

	r = e.vrf(tdemoArgs, true)
	must(t, r, true)
	noWrites(t, e, "vrf check mode")
	d, _ := r.res["diff"].([]any)
	if len(d) != 3 || !strings.Contains(fmt.Sprint(d[0]), "vrf-vxlan:10001") {
		t.Fatalf("vrf diff: %v", r.res["diff"])
	}
	r = e.vrf(tdemoArgs, false)
	must(t, r, true)
	if w, _ := e.writes(); w != 3 {
		t.Fatalf("vrf staging: %d writes, want 3", w)
	}
	vrfPending := r.strs("pending_objects")
	if strings.Join(vrfPending, " ") != "subnet/tn01-10.20.129.0-24 vnet/tn01v0 zone/tn01" {
		t.Fatalf("vrf pending_objects = %v", vrfPending)
	}
	must(t, e.vrf(tdemoArgs, false), false)
	noWrites(t, e, "vrf second run (unapplied)")

	// Apply once: check mode first, then for real.
	expect := append(append([]any{}, toAny(fabricPending)...), toAny(vrfPending)...)
	r = e.apply(map[string]any{"expect": expect}, true)
	must(t, r, true)
	noWrites(t, e, "apply check mode")
	r = e.apply(map[string]any{"expect": expect}, false)
	must(t, r, true)
	if task, _ := r.res["apply_task"].(string); !strings.Contains(task, ":reloadnetworkall:") {
		t.Fatalf("apply_task = %v", r.res["apply_task"])
	}
	if w, ok := e.writes(); w != 2 || ok != 2 {
		t.Fatalf("apply: %d writes (%d ok), want 2 (lock, apply)", w, ok)
	}
	must(t, e.apply(map[string]any{"expect": expect}, false), false)
	must(t, e.fabric(fab, false), false)
	r = e.vrf(tdemoArgs, false)
	must(t, r, false)
	noWrites(t, e, "runs after apply")
	if len(r.strs("pending_objects")) != 0 {
		t.Fatalf("pending after apply: %v", r.strs("pending_objects"))
	}

	// Destroy: subnets, vnets, zone; a second absent run succeeds with nothing to do.
	absent := map[string]any{"name": "tdemo", "index": 1, "state": "absent"}
	r = e.vrf(absent, false)
	must(t, r, true)
	if w, _ := e.writes(); w != 3 {
		t.Fatalf("vrf absent: %d writes, want 3", w)
	}
	if !strings.Contains(r.msg(), "delete subnet/tn01-10.20.129.0-24, vnet/tn01v0, zone/tn01") {
		t.Fatalf("absent msg: %q", r.msg())
	}
	must(t, e.vrf(absent, false), false)
	noWrites(t, e, "vrf absent again")
	r = e.vrf(map[string]any{"name": "tdemo", "index": 1, "state": "absent", "apply": true}, false)
	must(t, r, true)
	if w, _ := e.writes(); w != 2 {
		t.Fatalf("absent apply: %d writes, want 2 (lock, apply)", w)
	}
	must(t, e.vrf(absent, false), false)
	noWrites(t, e, "vrf absent after apply")
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ADR-0001 Phase 2: a second member is one new fabric node; nothing existing is rewritten.
func TestSecondMember(t *testing.T) {
	e := newEnv(t, "dv02hyp003p02")
	must(t, e.fabric(map[string]any{"nodes": []any{member1}, "apply": true}, false), true)
	e.writes()
	two := map[string]any{"nodes": []any{member1, map[string]any{"name": "dv02hyp003p02", "interfaces": []any{"vmbr0.51"}}}}
	r := e.fabric(two, false)
	must(t, r, true)
	st := e.takeStats()
	if st.Writes != 1 || st.Requests["POST /cluster/sdn/fabrics/node/{fabric_id}"] != 1 {
		t.Fatalf("second member: writes=%d requests=%v, want exactly one node POST", st.Writes, st.Requests)
	}
	if got := r.strs("pending_objects"); len(got) != 1 || got[0] != "fabric_node/ufab/dv02hyp003p02" {
		t.Fatalf("pending_objects = %v", got)
	}
	for _, o := range r.res["objects"].([]any) {
		m := o.(map[string]any)
		if m["key"] != "fabric_node/ufab/dv02hyp003p02" && m["action"] != "none" {
			t.Fatalf("existing object touched: %v", m)
		}
		if m["key"] == "fabric_node/ufab/dv02hyp003p02" && m["properties"].(map[string]any)["ip"] != "10.20.255.2" {
			t.Fatalf("second loopback: %v", m)
		}
	}
	must(t, e.apply(map[string]any{"expect": toAny(r.strs("pending_objects"))}, false), true)
	e.writes()
	must(t, e.fabric(two, false), false)
	noWrites(t, e, "after phase 2 apply")
}

func setup(t testing.TB, e *env) {
	t.Helper()
	must(t, e.fabric(map[string]any{"nodes": []any{member1}, "apply": true}, false), true)
	e.writes()
}

func wantErr(t testing.TB, e *env, r run, substr string) {
	t.Helper()
	if !r.failed() {
		t.Fatalf("want failure containing %q, got success: %v", substr, r.res)
	}
	if !strings.Contains(r.msg(), substr) {
		t.Fatalf("msg %q lacks %q", r.msg(), substr)
	}
	if _, ok := e.writes(); ok != 0 {
		t.Fatalf("%d writes accepted on a failure (%q)", ok, r.msg())
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	wantErr(t, e, e.vrf(tdemoArgs, false), `EVPN controller "evpnctl" does not exist`)
	setup(t, e)

	wantErr(t, e, e.vrf(map[string]any{"name": "tdemo", "index": 1, "zone": "tenantdemo"}, false), "at most 8")
	wantErr(t, e, e.vrf(map[string]any{"name": "tdemo", "index": 1, "zone": "tn_1"}, false), "letters and digits")
	wantErr(t, e, e.vrf(map[string]any{"name": "tdemo", "index": 0}, false), "reserved")
	wantErr(t, e, e.fabric(map[string]any{"fabric": "underlay01", "nodes": []any{member1}}, false), "fabric id")
	if e.requests() != 0 {
		t.Fatalf("invalid ids must fail before any request: %v", e.srv.Stats().Requests)
	}

	// Another tenant's zone: tdemo owns tn01; tother given index 1 by mistake is refused.
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false), true)
	e.writes()
	wantErr(t, e, e.vrf(map[string]any{"name": "tother", "index": 1}, false), `zone tn01 is not tenant tother's: its vnet tn01v0 is marked "tenant-tdemo"`)
	wantErr(t, e, e.vrf(map[string]any{"name": "tother", "index": 1, "state": "absent"}, false), "not tenant tother's")

	// A VNI used by another zone.
	wantErr(t, e, e.vrf(map[string]any{"name": "tother", "index": 2, "vnets": []any{map[string]any{"id": "tn02v0", "tag": 20016, "subnet": "10.20.130.0/24"}}}, false),
		"VNI 20016 of vnet tn02v0 is already used by vnet tn01v0 in zone tn01")
	wantErr(t, e, e.vrf(map[string]any{"name": "tother", "index": 2, "vrf_vxlan": 10001}, false), "vrf_vxlan: VNI 10001 is already used by zone tn01")

	// The lock held by someone else: staging and applying fail, nothing is written.
	e.srv.HoldSDNLock(90 * time.Second)
	wantErr(t, e, e.vrf(map[string]any{"name": "tother", "index": 2}, false), "SDN lock is held by another client")
	wantErr(t, e, e.vrf(map[string]any{"name": "tother", "index": 2, "apply": true}, false), "SDN lock is held by another client")
	if err := (e.client()).Delete(ctx, "/cluster/sdn/lock", map[string][]string{"force": {"1"}}, nil); err != nil {
		t.Fatal(err)
	}
	e.writes()

	// Foreign pending changes: pve_sdn_apply refuses to apply what the run did not stage.
	must(t, e.vrf(map[string]any{"name": "tother", "index": 2}, false), true)
	e.writes()
	wantErr(t, e, e.apply(map[string]any{"expect": []any{"zone/tn02"}}, false), "vnet/tn02v0 (new)")
	wantErr(t, e, e.apply(map[string]any{}, false), "refusing to apply pending SDN changes this run did not stage")
	wantErr(t, e, e.vrf(map[string]any{"name": "tdemo", "index": 1, "mtu": 1400, "apply": true}, false), "pending changes this module did not make: subnet/tn02-10.20.130.0-24 (new), vnet/tn02v0 (new), zone/tn02 (new)")

	// A failed apply task: PVE's exit status in the message.
	e.srv.FailTask(pvesim.TaskFault{Type: "reloadnetworkall", Nth: 1, ExitStatus: "reload failed: frr-reload exited 1"})
	r := e.apply(map[string]any{"allow_foreign_pending": true}, false)
	if !r.failed() || !strings.Contains(r.msg(), "reload failed: frr-reload exited 1") {
		t.Fatalf("failed task: %v", r.res)
	}
	e.writes()
}

// A staging failure under apply=true rolls back what the task staged and releases the lock.
func TestApplyRollsBackOnStagingFailure(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	e.srv.InjectFault(pvesim.Fault{Method: "POST", Path: "/cluster/sdn/vnets", Nth: 1, Status: 500, Message: "create sdn vnet object failed: injected"})
	r := e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false)
	if !r.failed() || !strings.Contains(r.msg(), "injected") || !strings.Contains(r.msg(), "rolled back") {
		t.Fatalf("want a rolled back failure, got %v", r.res)
	}
	st := e.takeStats()
	if st.Requests["POST /cluster/sdn/rollback"] != 1 {
		t.Fatalf("no rollback: %v", st.Requests)
	}
	// Nothing pending, lock free: the next run converges from scratch.
	r = e.apply(map[string]any{}, false)
	must(t, r, false)
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false), true)
}

// A read that fails after planning, under apply=true (the pending set the apply checks), reports
// PVE's error, not a crash of the handler.
func TestApplyReadFailureIsReported(t *testing.T) {
	for _, tc := range []struct {
		module, path string // the path planning does not read, so its first read is the apply's
	}{
		{"tenant_vrf", "/cluster/sdn/fabrics/all"},
		{"pve_sdn_fabric", "/cluster/sdn/zones"},
	} {
		t.Run(tc.module, func(t *testing.T) {
			e := newEnv(t)
			if tc.module == "tenant_vrf" {
				// A converged fabric's run reads no pending set: it has nothing to apply.
				setup(t, e)
			}
			e.srv.InjectFault(pvesim.Fault{Method: "GET", Path: tc.path, Nth: 1, Status: 500, Message: "read failed: injected"})
			var r run
			if tc.module == "tenant_vrf" {
				r = e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false)
			} else {
				r = e.fabric(map[string]any{"nodes": []any{member1}, "apply": true}, false)
			}
			if !r.failed() || !strings.Contains(r.msg(), "read failed: injected") || strings.Contains(r.msg(), "unexpectedly") {
				t.Fatalf("want PVE's error, got %v", r.res)
			}
		})
	}
}

// Figures for the report: API requests per converge and per no-op, for 1 and 10 tenants.
func TestRequestCounts(t *testing.T) {
	for _, n := range []int{1, 10} {
		e := newEnv(t)
		setup(t, e)
		e.srv.ResetStats()
		var expect []any
		for i := 1; i <= n; i++ {
			r := e.vrf(map[string]any{"name": fmt.Sprintf("t%02d", i), "index": i}, false)
			must(t, r, true)
			expect = append(expect, toAny(r.strs("pending_objects"))...)
		}
		must(t, e.apply(map[string]any{"expect": expect}, false), true)
		converge := e.takeStats()
		for i := 1; i <= n; i++ {
			must(t, e.vrf(map[string]any{"name": fmt.Sprintf("t%02d", i), "index": i}, false), false)
		}
		must(t, e.apply(map[string]any{"expect": expect}, false), false)
		noop := e.srv.Stats()
		total := func(s pvesim.Stats) int {
			c := 0
			for _, v := range s.Requests {
				c += v
			}
			return c
		}
		t.Logf("tenants=%d converge: requests=%d writes=%d; no-op: requests=%d writes=%d", n, total(converge), converge.Writes, total(noop), noop.Writes)
		if testing.Verbose() {
			keys := make([]string, 0, len(converge.Requests))
			for k := range converge.Requests {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				t.Logf("  converge %-45s %d", k, converge.Requests[k])
			}
		}
		if noop.Writes != 0 || converge.Writes != 3*n+2 {
			t.Fatalf("writes: converge %d (want %d), no-op %d (want 0)", converge.Writes, 3*n+2, noop.Writes)
		}
	}
}

// Drift: only the differing keys are written, a key set by hand on an owned field is removed
// with delete=, and the pending state is "changed" until applied.
func TestDriftIsRepaired(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false), true)
	ctx := context.Background()
	c := e.client()
	if err := c.Put(ctx, "/cluster/sdn/zones/tn01", map[string]any{"exitnodes": "dv02hyp002p02", "mtu": 1500}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "/cluster/sdn/vnets/tn01v0/subnets/tn01-10.20.129.0-24", map[string]any{"snat": 1}, nil); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetStats()
	r := e.vrf(tdemoArgs, false)
	must(t, r, true)
	st := e.takeStats()
	if st.Writes != 2 || st.Requests["PUT /cluster/sdn/zones/{zone}"] != 1 || st.Requests["PUT /cluster/sdn/vnets/{vnet}/subnets/{subnet}"] != 1 {
		t.Fatalf("drift repair: %v", st.Requests)
	}
	var zone map[string]any
	if err := c.Get(ctx, "/cluster/sdn/zones/tn01", nil, &zone); err != nil {
		t.Fatal(err)
	}
	if _, ok := zone["exitnodes"]; ok || fmt.Sprint(zone["mtu"]) != "1450" {
		t.Fatalf("zone after repair: %v", zone)
	}
	var sub map[string]any
	if err := c.Get(ctx, "/cluster/sdn/vnets/tn01v0/subnets/tn01-10.20.129.0-24", nil, &sub); err != nil {
		t.Fatal(err)
	}
	if s, ok := sub["snat"]; ok && fmt.Sprint(s) != "0" {
		t.Fatalf("snat after repair: %v", sub)
	}
	// The hand edits were only staged: the repair brings the current config back to the
	// running one, so nothing is pending any more.
	if got := r.strs("pending_objects"); len(got) != 0 {
		t.Fatalf("pending_objects = %v", got)
	}
	must(t, e.vrf(tdemoArgs, false), false)
	noWrites(t, e, "after repair")
}

// lock_wait: a lock released in time is waited for; one that is not gives a lower bound of its age.
func TestLockWait(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	e.srv.HoldSDNLock(time.Minute)
	c := e.client()
	go func() {
		time.Sleep(1200 * time.Millisecond)
		_ = c.Delete(context.Background(), "/cluster/sdn/lock", map[string][]string{"force": {"1"}}, nil)
	}()
	start := time.Now()
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true, "lock_wait": 10}, false), true)
	if d := time.Since(start); d < time.Second {
		t.Fatalf("did not wait for the lock: %v", d)
	}
	e.writes()
	e.srv.HoldSDNLock(time.Hour)
	r := e.vrf(map[string]any{"name": "tother", "index": 2, "lock_wait": 2}, false)
	wantErr(t, e, r, "held for at least 2s")
}

// Before the first apply ever PVE has nothing to roll back to: the lock is still given back,
// and the next run finishes the job.
func TestStagingFailureBeforeFirstApply(t *testing.T) {
	e := newEnv(t)
	e.srv.InjectFault(pvesim.Fault{Method: "POST", Path: "/cluster/sdn/fabrics/node/{fabric_id}", Nth: 1, Status: 500, Message: "adding node failed: injected"})
	r := e.fabric(map[string]any{"nodes": []any{member1}, "apply": true}, false)
	if !r.failed() || !strings.Contains(r.msg(), "injected") || !strings.Contains(r.msg(), "no running configuration") {
		t.Fatalf("want the staging error and the failed rollback, got %v", r.res)
	}
	st := e.takeStats()
	if st.Requests["DELETE /cluster/sdn/lock"] != 1 {
		t.Fatalf("lock not released: %v", st.Requests)
	}
	r = e.fabric(map[string]any{"nodes": []any{member1}, "apply": true}, false)
	must(t, r, true)
	if r.res["applied"] != true {
		t.Fatalf("second run did not apply: %v", r.res)
	}
}

// A write failing halfway: the task fails with PVE's message, reports changed, and names only
// what it staged; the next run stages the rest.
func TestPartialStaging(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	e.srv.InjectFault(pvesim.Fault{Method: "POST", Path: "/cluster/sdn/vnets/{vnet}/subnets", Nth: 1, Status: 500, Message: "create sdn subnet object failed: injected"})
	r := e.vrf(tdemoArgs, false)
	if !r.failed() || !r.changed() || !strings.Contains(r.msg(), "create subnet/tn01-10.20.129.0-24: POST /cluster/sdn/vnets/tn01v0/subnets: PVE API 500: create sdn subnet object failed: injected") {
		t.Fatalf("partial staging: %v", r.res)
	}
	if got := strings.Join(r.strs("pending_objects"), " "); got != "vnet/tn01v0 zone/tn01" {
		t.Fatalf("pending_objects = %q", got)
	}
	e.writes()
	r = e.vrf(tdemoArgs, false)
	must(t, r, true)
	if w, _ := e.writes(); w != 1 {
		t.Fatalf("the rest: %d writes, want 1", w)
	}
}

// Staged earlier, applied now: apply=true on an unchanged spec applies its own pending objects.
func TestApplyWhatWasStagedEarlier(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	must(t, e.vrf(tdemoArgs, false), true)
	r := e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, true)
	must(t, r, true)
	if !strings.HasPrefix(r.msg(), "would apply subnet/tn01-10.20.129.0-24, vnet/tn01v0, zone/tn01") {
		t.Fatalf("check mode msg: %q", r.msg())
	}
	e.writes()
	r = e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false)
	must(t, r, true)
	if !strings.HasPrefix(r.msg(), "applied the changes staged earlier") {
		t.Fatalf("msg: %q", r.msg())
	}
	if w, _ := e.writes(); w != 2 {
		t.Fatalf("writes %d, want 2 (lock, apply)", w)
	}
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false), false)
	noWrites(t, e, "after")
}

// A tenant's own token (PVESDNUser on its zone) cannot stage SDN objects or apply: the refusal
// says which privilege is missing and whose credential to use.
func TestTenantTokenIsRefused(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false), true)
	ctx := context.Background()
	c := e.client()
	user := "tenant-tdemo@pve"
	if err := c.Post(ctx, "/access/users", map[string]any{"userid": user}, nil); err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Value string `json:"value"`
	}
	if err := c.Post(ctx, "/access/users/"+user+"/token/iac", map[string]any{"privsep": 0}, &tok); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "/access/acl", map[string]any{"path": "/sdn/zones/tn01", "roles": "PVESDNUser", "users": user}, nil); err != nil {
		t.Fatal(err)
	}
	e.writes()
	as := map[string]any{"api_user": user, "api_token_id": "iac", "api_token_secret": tok.Value}
	args := map[string]any{"name": "tdemo", "index": 1, "mtu": 1400}
	for k, v := range as {
		args[k] = v
	}
	r := e.vrf(args, false)
	wantErr(t, e, r, "need SDN.Allocate on /sdn, which a tenant's token does not hold")
	if strings.Contains(fmt.Sprint(r.res), tok.Value) {
		t.Fatal("tenant secret in the result")
	}
}
