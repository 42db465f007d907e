package sdn

import (
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
)

// checkReads fails when one module run read a PVE list more often than once per state it could
// have changed in: once, plus once after each lock taken (the pending set is read again under
// the lock) and each apply. Per-vnet subnet lists count once per live vnet. stats is one run's.
func checkReads(t *testing.T, what string, s pvesim.Stats, vnets int) {
	t.Helper()
	epochs := 1 + s.Requests["POST /cluster/sdn/lock"] + s.Requests["PUT /cluster/sdn"]
	for key, n := range s.Requests {
		if !strings.HasPrefix(key, "GET /cluster/sdn/") {
			continue
		}
		limit := epochs
		if strings.Contains(key, "{vnet}/subnets") {
			limit = epochs * vnets
		} else if strings.Contains(key, "{") {
			continue // one object's read, not a list
		}
		if n > limit {
			t.Errorf("%s: %s read %d times in one run, want at most %d", what, key, n, limit)
		}
	}
}

// Each module run reads each SDN list at most once per state (see checkReads), on a first
// converge, a no-op, an apply, and a removal.
func TestEachListReadOncePerRun(t *testing.T) {
	e := newEnv(t)
	e.srv.ResetStats()
	step := func(what string, vnets int, r run, changed bool) {
		t.Helper()
		s := e.takeStats()
		must(t, r, changed)
		checkReads(t, what, s, vnets)
	}
	fab := map[string]any{"nodes": []any{member1}}
	step("fabric, staged", 0, e.fabric(fab, false), true)
	step("fabric, no-op", 0, e.fabric(fab, false), false)
	vrf := map[string]any{"name": "tdemo", "index": 1}
	step("vrf, staged", 0, e.vrf(vrf, false), true)
	step("vrf, no-op", 1, e.vrf(vrf, false), false)
	step("apply", 1, e.apply(map[string]any{"allow_foreign_pending": true}, false), true)
	step("apply, no-op", 1, e.apply(map[string]any{}, false), false)
	two := map[string]any{"name": "tdemo", "index": 2, "apply": true}
	step("vrf with apply", 2, e.vrf(two, false), true)
	step("vrf with apply, no-op", 2, e.vrf(two, false), false)
	// A converged tenant with apply=true proves it from its own objects: the other kinds'
	// pending views matter only before an apply, and none is due.
	must(t, e.vrf(two, false), false)
	if s := e.srv.Stats(); s.Requests["GET /cluster/sdn/fabrics/all"]+s.Requests["GET /cluster/sdn/controllers"] != 0 {
		t.Errorf("no-op with apply read the fabrics (%d) and controllers (%d)", s.Requests["GET /cluster/sdn/fabrics/all"], s.Requests["GET /cluster/sdn/controllers"])
	}
	e.srv.ResetStats()
	step("vrf with apply, check mode", 2, e.vrf(map[string]any{"name": "tdemo", "index": 3, "apply": true}, true), true)
	two["state"] = "absent"
	step("vrf removal with apply", 2, e.vrf(two, false), true)
	step("fabric with apply", 1, e.fabric(map[string]any{"nodes": []any{member1}, "apply": true}, false), false)
}

// Skipping the pending-set read is only for runs with no apply due: a run that only applies its
// own objects staged earlier still reads it, and refuses another tenant's pending change.
func TestApplyOfEarlierStagingStillChecksForeignPending(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	must(t, e.vrf(tdemoArgs, false), true)
	must(t, e.vrf(map[string]any{"name": "tother", "index": 2}, false), true)
	e.writes()
	r := e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false)
	wantErr(t, e, r, "pending changes this module did not make: subnet/tn02-10.20.130.0-24 (new), vnet/tn02v0 (new), zone/tn02 (new)")
}

// The reapply of a node whose reload failed is an apply too: with another tenant's change
// pending it is refused, although nothing of this run's is pending.
func TestReapplyStillChecksForeignPending(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	e.srv.FailReload(pvesim.ReloadFault{Node: node1, Nth: 1, Message: "ifreload -a: error: injected"})
	r := e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false)
	if !r.failed() {
		t.Fatalf("a failed reload must fail the run: %v", r.res)
	}
	must(t, e.vrf(map[string]any{"name": "tother", "index": 2}, false), true)
	e.writes()
	r = e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false)
	wantErr(t, e, r, "pending changes this module did not make: subnet/tn02-10.20.130.0-24 (new), vnet/tn02v0 (new), zone/tn02 (new)")
}
