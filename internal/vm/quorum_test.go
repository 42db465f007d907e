package vm_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestNoQuorumFailsNamingIt (#38, drill (b)'s control): two nodes, one away in maintenance; with the
// QDevice's vote the change converges (2 of 3 votes); with the QDevice's host down too the cluster
// has 1 of 3, PVE refuses the clone ("cluster not ready - no quorum?") and tenant_vm fails naming
// quorum, leaving the VMs as they were.
func TestNoQuorumFailsNamingIt(t *testing.T) {
	e := newSim2(t, true)
	args := func(count int) map[string]any {
		return map[string]any{"count": count, "placement": "spread", "site": twoNodes, "maintenance": []any{node2}}
	}
	if res, code := e.run(args(2), false, false); code != 0 {
		t.Fatalf("create: %v", res["msg"])
	}
	e.must(e.srv.SetNodeOffline(node2, "", 0))
	e.must(e.srv.SetQDevice(false))
	res, code := e.run(args(3), false, false)
	if msg := fmt.Sprint(res["msg"]); code == 0 || !strings.Contains(msg, "cluster not ready - no quorum?") {
		t.Fatalf("without quorum: code %d, msg %q", code, msg)
	}
	t.Logf("without quorum: %v", res["msg"])
	if id := e.nodeOf(10103); id != "" {
		t.Fatalf("a VM was created without quorum, on %s", id)
	}
	e.must(e.srv.SetQDevice(true))
	if res, code := e.run(args(3), false, false); code != 0 || e.nodeOf(10103) != node {
		t.Fatalf("with the QDevice's vote: code %d, %v", code, res["msg"])
	}
}
