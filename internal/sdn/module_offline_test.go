package sdn

import (
	"strings"
	"testing"
)

const node2 = "dv02hyp002p03"

// twoNodeTenant is tdemo's tenant_vrf arguments on a site of both nodes.
func twoNodeTenant(extra map[string]any) map[string]any {
	a := map[string]any{"name": "tdemo", "index": 1, "site": map[string]any{"nodes": []any{node1, node2}}}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

func warnings(r run) string {
	var out []string
	for _, w := range r.res["warnings"].([]any) {
		out = append(out, w.(string))
	}
	return strings.Join(out, "\n")
}

// TestOfflineNodeRefused (#25): with a node offline and not in maintenance, tenant_vrf,
// pve_sdn_fabric and pve_sdn_apply fail before any write, naming the node; check mode too.
func TestOfflineNodeRefused(t *testing.T) {
	e := newEnv(t, node2)
	setup(t, e)
	if err := e.srv.SetNodeOffline(node2, "", 0); err != nil {
		t.Fatal(err)
	}
	want := "node " + node2 + " is offline (GET /nodes): an SDN apply cannot reach it"
	for name, r := range map[string]func() run{
		"tenant_vrf":       func() run { return e.vrf(twoNodeTenant(map[string]any{"apply": true}), false) },
		"tenant_vrf stage": func() run { return e.vrf(twoNodeTenant(nil), false) },
		"tenant_vrf check": func() run { return e.vrf(twoNodeTenant(map[string]any{"apply": true}), true) },
		"pve_sdn_fabric":   func() run { return e.fabric(map[string]any{"nodes": []any{member1}, "apply": true}, false) },
		"pve_sdn_apply":    func() run { return e.apply(map[string]any{"allow_foreign_pending": true}, false) },
	} {
		t.Run(name, func(t *testing.T) {
			e.writes()
			got := r()
			wantErr(t, e, got, want)
			if !strings.Contains(got.msg(), "maintenance: ["+node2+"]") {
				t.Errorf("the message does not say how to go on: %q", got.msg())
			}
			noWrites(t, e, name)
		})
	}
	// a maintenance entry that names no node is refused, naming the entry
	r := e.vrf(twoNodeTenant(map[string]any{"apply": true, "maintenance": []any{node2, "dv02hyp002p04"}}), false)
	wantErr(t, e, r, `maintenance[1]: "dv02hyp002p04" is not a cluster node (nodes: `+node1+", "+node2+")")
}

// TestMaintenanceNode (#25): with the offline node in maintenance, the tenant converges on the
// other nodes and reports the node pending (warning and pending_nodes), on every run while it
// is away; the first run after it returns applies again and reaches it; then nothing is left.
func TestMaintenanceNode(t *testing.T) {
	e := newEnv(t, node2)
	setup(t, e)
	must(t, e.vrf(twoNodeTenant(map[string]any{"apply": true}), false), true)
	if err := e.srv.SetNodeOffline(node2, "", 0); err != nil {
		t.Fatal(err)
	}
	away := map[string]any{"maintenance": []any{node2}}
	// a change while p03 is away: a second VNet
	change := twoNodeTenant(map[string]any{"apply": true, "vnet_count": 2, "maintenance": []any{node2}})
	r := e.vrf(change, false)
	must(t, r, true)
	if got := r.strs("pending_nodes"); len(got) != 1 || got[0] != node2 {
		t.Fatalf("pending_nodes %v", got)
	}
	if w := warnings(r); !strings.Contains(w, "node(s) "+node2+" offline in maintenance: the SDN configuration applied now has not reached them") {
		t.Fatalf("warnings %q", w)
	}
	if st := zoneStatusOn(t, e, node1, "tn01"); st != "available" {
		t.Fatalf("%s: %s", node1, st)
	}
	// again while it is away: nothing to do, and still said
	e.writes()
	for _, r := range []run{e.vrf(change, false), e.apply(away, false)} {
		must(t, r, false)
		if got := r.strs("pending_nodes"); len(got) != 1 || !strings.Contains(warnings(r), node2) {
			t.Fatalf("second run while away: pending_nodes %v, warnings %q", got, warnings(r))
		}
	}
	noWrites(t, e, "runs while the node is away")
	// back (rebooted: nothing pending, so its files are the old ones): the first run finishes it
	if _, err := e.srv.SetNodeOnline(node2, true); err != nil {
		t.Fatal(err)
	}
	if st := zoneStatusOn(t, e, node2, "tn01"); st != "pending" {
		t.Fatalf("%s back: %s, want pending", node2, st)
	}
	r = e.apply(away, false)
	must(t, r, true)
	if got := r.strs("reapplied_for"); len(got) == 0 || !strings.HasPrefix(got[0], node2+"/tn01 (pending)") {
		t.Fatalf("reapplied_for %v", got)
	}
	if got := r.strs("pending_nodes"); len(got) != 0 {
		t.Fatalf("pending_nodes after the return: %v", got)
	}
	if st := zoneStatusOn(t, e, node2, "tn01"); st != "available" {
		t.Fatalf("%s after the run: %s", node2, st)
	}
	e.writes()
	must(t, e.vrf(change, false), false)
	noWrites(t, e, "converged")
}
