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
	type badCase struct {
		name  string
		args  map[string]any
		field string
	}
	cases := []badCase{
		{"cores 0", map[string]any{"cores": 0}, "cores"},
		{"cores too many", map[string]any{"cores": 513}, "cores"},
		{"memory 0", map[string]any{"memory": 0}, "memory"},
		{"memory too small", map[string]any{"memory": 8}, "memory"},
		{"disk without unit", map[string]any{"disk": "20"}, "disk"},
		{"disk not a size", map[string]any{"disk": "big"}, "disk"},
		{"count negative", map[string]any{"count": -1}, "count"},
		{"vms and count", map[string]any{"vms": []any{map[string]any{"index": 1}}}, "count"},
		{"vms index 0", map[string]any{"count": nil, "vms": []any{map[string]any{"index": 0}}}, "vms[0].index"},
		{"tenant index 0", map[string]any{"index": 0}, "index"},
		{"tenant index 64", map[string]any{"index": 64}, "index"},
		{"name format", map[string]any{"name": "Bad_Name"}, "name"},
		{"template missing", map[string]any{"template": "99999"}, "template"},
		{"template by unknown name", map[string]any{"template": "no-such-template"}, "template"},
		{"storage without full", map[string]any{"storage": "local-lvm"}, "storage"},
		{"another tenant's tag", map[string]any{"tags": []any{"tenant-tother"}}, "tags"},
		{"parallel 0", map[string]any{"parallel": 0}, "parallel"},
		{"timeout 0", map[string]any{"timeout": 0}, "timeout"},
		{"state unknown", map[string]any{"state": "exploded"}, "state"},
		{"description too long", map[string]any{"description": strings.Repeat("x", 8193)}, "description"},
		{"cores not a number", map[string]any{"cores": "many"}, "cores"},
	}
	for _, c := range pvesimtest.BadConnections(t) {
		cases = append(cases, badCase{c.Name, c.Args, c.Field})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"count": 1, "api_token_id": "sim", "api_user": "root@pam"}
			for k, v := range c.args {
				args[k] = v
			}
			if args["count"] == nil {
				delete(args, "count")
			}
			e.srv.ResetStats()
			res, code := e.run(args, false, true)
			msg, _ := res["msg"].(string)
			if code == 0 || res["failed"] != true {
				t.Fatalf("%v accepted: %v", c.args, res)
			}
			if !strings.Contains(msg, c.field) {
				t.Fatalf("msg %q does not name %q", msg, c.field)
			}
			if w := e.srv.Stats().Writes; w != 0 {
				t.Fatalf("%d write(s) before the refusal %q", w, msg)
			}
		})
	}
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
