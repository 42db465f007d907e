package vm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func warningsOf(res map[string]any) string {
	var out []string
	l, _ := res["warnings"].([]any)
	for _, w := range l {
		out = append(out, fmt.Sprint(w))
	}
	return strings.Join(out, "\n")
}

// TestOfflineNodeVMs (#25): a VM on an offline node fails the run before any write, naming the
// node, unless the node is in maintenance: then the other VMs converge, new VMs go to the nodes
// not in maintenance, and the VM left behind is reported (warning, pending_node, pending_nodes)
// on every run while its node is away; the first run after the node returns converges it.
func TestOfflineNodeVMs(t *testing.T) {
	e := newSim2(t, true)
	args := func(count int, extra map[string]any) map[string]any {
		a := map[string]any{"count": count, "placement": "spread", "site": twoNodes}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	if res, code := e.run(args(2, nil), false, false); code != 0 {
		t.Fatalf("create: %v", res["msg"])
	}
	// away for six minutes: PVE no longer knows its guests' status ("unknown")
	if err := e.srv.SetNodeOffline(node2, "", 6*time.Minute); err != nil {
		t.Fatal(err)
	}
	away := []any{node2}
	// not in maintenance: refused before any write, naming the node and the VM
	e.srv.ResetStats()
	for _, check := range []bool{false, true} {
		res, code := e.run(args(3, map[string]any{"cores": 2}), check, false)
		if msg := fmt.Sprint(res["msg"]); code == 0 || !strings.Contains(msg, "VM tdemo-2 (vmid 10102) is on node "+node2+", which is offline") ||
			!strings.Contains(msg, "maintenance: ["+node2+"]") {
			t.Fatalf("check=%v: code %d, msg %q", check, code, msg)
		}
	}
	if st := e.srv.Stats(); st.Writes != 0 {
		t.Fatalf("%d writes on a refused run", st.Writes)
	}
	// a maintenance entry that names no node
	if res, code := e.run(args(2, map[string]any{"maintenance": []any{"dv02hyp002p09"}}), false, false); code == 0 ||
		!strings.Contains(fmt.Sprint(res["msg"]), `maintenance[0]: "dv02hyp002p09" is not a cluster node`) {
		t.Fatalf("bad maintenance entry: %d %v", code, res["msg"])
	}
	// in maintenance: a change to every VM and a third VM
	change := args(3, map[string]any{"cores": 2, "maintenance": away})
	res, code := e.run(change, false, false)
	if code != 0 {
		t.Fatalf("with maintenance: %v", res["msg"])
	}
	vms := vmsOf(t, res)
	if vms[1]["pending_node"] != node2 || len(vms[1]["actions"].([]any)) != 0 || vms[0]["pending_node"] != nil {
		t.Fatalf("VM 2 not left as it is: %v / %v", vms[1], vms[0])
	}
	if got := fmt.Sprint(res["pending_nodes"]); got != "["+node2+"]" {
		t.Fatalf("pending_nodes %s", got)
	}
	if w := warningsOf(res); !strings.Contains(w, "VM tdemo-2 is on node "+node2+", offline in maintenance: left as it is") {
		t.Fatalf("warnings %q", w)
	}
	if n := e.nodeOf(10103); n != node {
		t.Fatalf("VM 3 placed on %s, want %s (the only node not in maintenance)", n, node)
	}
	if c := e.config(10101)["cores"]; fmt.Sprint(c) != "2" {
		t.Fatalf("VM 1 not converged: cores %v", c)
	}
	// again while away: nothing to do, and still said
	e.srv.ResetStats()
	res, code = e.run(change, false, false)
	if code != 0 || res["changed"] != false || fmt.Sprint(res["pending_nodes"]) != "["+node2+"]" || !strings.Contains(warningsOf(res), "left as it is") {
		t.Fatalf("second run while away: code %d changed %v pending_nodes %v warnings %q", code, res["changed"], res["pending_nodes"], warningsOf(res))
	}
	if st := e.srv.Stats(); st.Writes != 0 {
		t.Fatalf("second run while away: %d writes", st.Writes)
	}
	// back: the first run converges VM 2; a node still in maintenance gets no new VM
	if _, err := e.srv.SetNodeOnline(node2, true); err != nil {
		t.Fatal(err)
	}
	res, code = e.run(args(4, map[string]any{"cores": 2, "maintenance": away}), false, false)
	if code != 0 || res["changed"] != true || fmt.Sprint(res["pending_nodes"]) != "[]" {
		t.Fatalf("after the return: code %d changed %v pending_nodes %v msg %v", code, res["changed"], res["pending_nodes"], res["msg"])
	}
	var cfg2 map[string]any
	e.must(e.root.Get(t.Context(), "/nodes/"+node2+"/qemu/10102/config", nil, &cfg2))
	if c := cfg2["cores"]; fmt.Sprint(c) != "2" {
		t.Fatalf("VM 2 not converged after its node returned: cores %v", c)
	}
	if n := e.nodeOf(10104); n != node {
		t.Fatalf("VM 4 on %s while %s is in maintenance", n, node2)
	}
	// an explicit node in maintenance takes no new VM
	if res, code := e.run(map[string]any{"count": 5, "node": node2, "site": twoNodes, "cores": 2, "maintenance": away}, false, false); code == 0 ||
		!strings.Contains(fmt.Sprint(res["msg"]), "VM tdemo-5: node "+node2+" is in maintenance: no new VM is placed there") {
		t.Fatalf("new VM on a node in maintenance: %d %v", code, res["msg"])
	}
}
