package sdn

import (
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
)

const node1 = "dv02hyp002p02"

func zoneStatusOn(t *testing.T, e *env, node, zone string) string {
	t.Helper()
	var l []map[string]any
	if err := e.client().Get(t.Context(), "/nodes/"+node+"/sdn/zones", nil, &l); err != nil {
		t.Fatal(err)
	}
	for _, z := range l {
		if z["zone"] == zone {
			return z["status"].(string)
		}
	}
	return ""
}

// #11: a node whose reload failed keeps an old network although the config
// is committed. The failing run reports it; the next run sees nothing
// pending but applies again, until the node is available.
func TestReapplyAfterFailedReload(t *testing.T) {
	for _, viaApply := range []bool{false, true} {
		name := map[bool]string{false: "tenant_vrf", true: "pve_sdn_apply"}[viaApply]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			setup(t, e)
			e.srv.FailReload(pvesim.ReloadFault{Node: node1, Nth: 1, Message: "ifreload -a: error: tn01v0: bridge port vxlan_tn01v0 missing"})
			run := func(check bool) run {
				if viaApply {
					return e.apply(map[string]any{"allow_foreign_pending": true}, check)
				}
				return e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, check)
			}
			if viaApply {
				must(t, e.vrf(tdemoArgs, false), true)
			}
			r := run(false)
			if !r.failed() || !strings.Contains(r.msg(), "did not reach every node: "+node1+"/tn01 (error)") {
				t.Fatalf("a failed reload must fail the run: failed=%v msg %q", r.failed(), r.msg())
			}
			if st := zoneStatusOn(t, e, node1, "tn01"); st != "error" {
				t.Fatalf("zone status %q, want error", st)
			}
			e.writes()
			r = run(true)
			must(t, r, true)
			if !strings.HasPrefix(r.msg(), "would apply again: the running SDN config has not reached "+node1+"/tn01 (error)") {
				t.Fatalf("check mode msg %q", r.msg())
			}
			noWrites(t, e, "check mode")
			r = run(false)
			must(t, r, true)
			if !strings.HasPrefix(r.msg(), "applied again: the running SDN config had not reached "+node1+"/tn01 (error)") {
				t.Fatalf("msg %q", r.msg())
			}
			if got := r.strs("reapplied_for"); len(got) != 1 || got[0] != node1+"/tn01 (error)" {
				t.Fatalf("reapplied_for %v", got)
			}
			if st := zoneStatusOn(t, e, node1, "tn01"); st != "available" {
				t.Fatalf("after the re-apply: zone status %q, want available", st)
			}
			if w, _ := e.writes(); w != 2 {
				t.Fatalf("re-apply: %d writes, want 2 (lock, apply)", w)
			}
			must(t, run(false), false)
			noWrites(t, e, "idempotent run")
		})
	}
}
