package sdn

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// terraformEnv is a simulator holding tdemo's zone, VNet and subnet as the Terraform module
// built them (the bpg/proxmox provider's calls replayed, applied): no ownership mark.
func terraformEnv(t *testing.T) *env {
	t.Helper()
	srv, root := pvesimtest.Start(t, pvesim.DefaultConfig())
	pvesimtest.Replay(t, root, "../../tests/takeover/terraform-tdemo.json")
	srv.ResetStats()
	return &env{t: t, srv: srv}
}

// objectActions are the result's objects that change, as "action kind id".
func objectActions(r run) []string {
	var out []string
	l, _ := r.res["objects"].([]any)
	for _, x := range l {
		o, _ := x.(map[string]any)
		if a := fmt.Sprint(o["action"]); a != "none" && a != "unchanged" {
			out = append(out, fmt.Sprintf("%s %s %s", a, o["kind"], o["id"]))
		}
	}
	return out
}

func TestAdoptTerraformVRF(t *testing.T) {
	e := terraformEnv(t)
	tdemo := map[string]any{"name": "tdemo", "index": 1}

	// Without adopt the unmarked zone is someone else's: refused, untouched.
	if r := e.vrf(tdemo, false); !r.failed() || !strings.Contains(r.msg(), `its vnet tn01v0 is marked "(no mark)"`) {
		t.Fatalf("without adopt: %v", r.res)
	}
	if w, _ := e.writes(); w != 0 {
		t.Fatalf("refusal wrote %d times", w)
	}

	adopt := map[string]any{"name": "tdemo", "index": 1, "adopt": true, "apply": true}
	check := e.vrf(adopt, true)
	if check.failed() || !check.changed() || fmt.Sprint(objectActions(check)) != "[update vnet tn01v0]" {
		t.Fatalf("check mode: %v / %v", objectActions(check), check.res)
	}
	if w, _ := e.writes(); w != 0 {
		t.Fatalf("check mode wrote %d times", w)
	}

	r := e.vrf(adopt, false)
	if r.failed() || fmt.Sprint(objectActions(r)) != "[update vnet tn01v0]" || r.res["applied"] != true {
		t.Fatalf("adopt: %v / %v", objectActions(r), r.res)
	}
	for k := range e.srv.Stats().Requests {
		if (strings.HasPrefix(k, "DELETE /cluster/sdn/") || strings.HasPrefix(k, "POST /cluster/sdn/")) && !strings.HasSuffix(k, "/lock") {
			t.Errorf("adopt destroyed or created an SDN object: %s", k)
		}
	}
	var vnet map[string]any
	if err := e.client().Get(context.Background(), "/cluster/sdn/vnets/tn01v0", nil, &vnet); err != nil || vnet["alias"] != "tenant-tdemo" || fmt.Sprint(vnet["tag"]) != "20016" {
		t.Fatalf("vnet after adopt: %v %v", vnet, err)
	}

	e.writes()
	for _, a := range []map[string]any{adopt, {"name": "tdemo", "index": 1, "apply": true}} {
		if r := e.vrf(a, false); r.failed() || r.changed() {
			t.Fatalf("second run %v: %v", a, r.res)
		}
		if w, _ := e.writes(); w != 0 {
			t.Fatalf("second run %v wrote %d times", a, w)
		}
	}
}

// What does not match the plan is refused before any write, naming each field.
func TestAdoptVRFRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(e *env)
		args  map[string]any
		want  string
	}{
		{"zone VNI differs", func(e *env) {
			e.must(e.client().Put(ctx, "/cluster/sdn/zones/tn01", map[string]any{"vrf-vxlan": 10099}, nil))
		}, nil, "vrf_vxlan: zone tn01 has VNI 10099 (plan 10001)"},
		{"vnet VNI differs", func(e *env) {
			e.must(e.client().Put(ctx, "/cluster/sdn/vnets/tn01v0", map[string]any{"tag": 20099}, nil))
		}, nil, "vnets.tag: vnet tn01v0 has VNI 20099 (plan 20016)"},
		{"subnet not the plan's", func(e *env) {
			e.must(e.client().Post(ctx, "/cluster/sdn/vnets/tn01v0/subnets", map[string]any{"subnet": "10.20.200.0/24", "type": "subnet"}, nil))
		}, nil, "vnets.subnet: vnet tn01v0 holds subnet tn01-10.20.200.0-24, which the plan does not"},
		{"vnet not the plan's", func(e *env) {
			e.must(e.client().Post(ctx, "/cluster/sdn/vnets", map[string]any{"vnet": "tn01v9", "zone": "tn01", "tag": 20099}, nil))
		}, nil, "vnets: zone tn01 holds vnet tn01v9, which the plan does not"},
		{"another tenant's mark", func(e *env) {
			e.must(e.client().Put(ctx, "/cluster/sdn/vnets/tn01v0", map[string]any{"alias": "tenant-tother"}, nil))
		}, nil, `its vnet tn01v0 is marked "tenant-tother", not "tenant-tdemo"`},
		{"state absent", nil, map[string]any{"state": "absent"}, "adopt: takes over a zone, so it needs state=present, not absent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := terraformEnv(t)
			if c.setup != nil {
				c.setup(e)
			}
			e.writes()
			args := map[string]any{"name": "tdemo", "index": 1, "adopt": true, "apply": true}
			for k, v := range c.args {
				args[k] = v
			}
			r := e.vrf(args, false)
			if !r.failed() || !strings.Contains(r.msg(), c.want) {
				t.Fatalf("msg %q; want %q", r.msg(), c.want)
			}
			if w, _ := e.writes(); w != 0 {
				t.Fatalf("%d writes before the refusal", w)
			}
		})
	}
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}
