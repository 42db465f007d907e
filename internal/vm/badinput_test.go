package vm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// Every refused input fails naming its field, with 0 writes sent to PVE.
func TestBadInput(t *testing.T) {
	e := newSim(t)
	cases := append(pvesimtest.BadConnections(t),
		pvesimtest.Bad("cores 0", map[string]any{"cores": 0}, "cores"),
		pvesimtest.Bad("cores too many", map[string]any{"cores": 513}, "cores"),
		pvesimtest.Bad("memory 0", map[string]any{"memory": 0}, "memory"),
		pvesimtest.Bad("memory too small", map[string]any{"memory": 8}, "memory"),
		pvesimtest.Bad("disk without unit", map[string]any{"disk": "20"}, "disk"),
		pvesimtest.Bad("disk not a size", map[string]any{"disk": "big"}, "disk"),
		pvesimtest.Bad("count negative", map[string]any{"count": -1}, "count"),
		pvesimtest.Bad("vms and count", map[string]any{"vms": []any{map[string]any{"index": 1}}}, "count"),
		pvesimtest.Bad("vms index 0", map[string]any{"count": nil, "vms": []any{map[string]any{"index": 0}}}, "vms[0].index"),
		pvesimtest.Bad("tenant index 0", map[string]any{"index": 0}, "index"),
		pvesimtest.Bad("tenant index 64", map[string]any{"index": 64}, "index"),
		pvesimtest.Bad("name format", map[string]any{"name": "Bad_Name"}, "name"),
		pvesimtest.Bad("template missing", map[string]any{"template": "99999"}, "template"),
		pvesimtest.Bad("template by unknown name", map[string]any{"template": "no-such-template"}, "template"),
		pvesimtest.Bad("storage without full", map[string]any{"storage": "local-lvm"}, "storage"),
		pvesimtest.Bad("another tenant's tag", map[string]any{"tags": []any{"tenant-tother"}}, "tags"),
		pvesimtest.Bad("parallel 0", map[string]any{"parallel": 0}, "parallel"),
		pvesimtest.Bad("timeout 0", map[string]any{"timeout": 0}, "timeout"),
		pvesimtest.Bad("state unknown", map[string]any{"state": "exploded"}, "state"),
		pvesimtest.Bad("description too long", map[string]any{"description": strings.Repeat("x", 8193)}, "description"),
		pvesimtest.Bad("cores not a number", map[string]any{"cores": "many"}, "cores"),
	)
	base := map[string]any{"count": 1, "api_token_id": "sim", "api_user": "root@pam"}
	pvesimtest.RefuseAll(t, e.srv, base, cases, func(_ testing.TB, args map[string]any) (map[string]any, int) {
		return e.run(args, false, true)
	})
}

// A VM whose VNet is staged but not applied cannot start (PVE's start task fails): the run
// reports the task's error instead of success.
func TestStartOnUnappliedVNetFails(t *testing.T) {
	e := newSim(t)
	ctx := context.Background()
	e.must(e.root.Post(ctx, "/pools", map[string]any{"poolid": "tenant-tother"}, nil))
	e.must(e.root.Post(ctx, "/cluster/sdn/zones", map[string]any{"zone": "tn02", "type": "simple"}, nil))
	e.must(e.root.Post(ctx, "/cluster/sdn/vnets", map[string]any{"vnet": "tn02v0", "zone": "tn02", "tag": 20032}, nil))
	res, code := e.run(map[string]any{"name": "tother", "index": 2, "count": 1, "state": "started"}, false, false)
	msg, _ := res["msg"].(string)
	if code == 0 || res["failed"] != true || !strings.Contains(msg, "bridge 'tn02v0' does not exist") {
		t.Fatalf("start on an unapplied VNet: %v", res)
	}
	if st := e.status(10201); st != "stopped" {
		t.Fatalf("VM 10201 is %s after a failed start", st)
	}
}
