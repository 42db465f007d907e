package vm_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// terraformFixture is what the Terraform tenant module sent to build tdemo (bpg/proxmox).
const terraformFixture = "../../tests/takeover/terraform-tdemo.json"

// terraformSim is a simulator holding tdemo as Terraform left it (the provider's calls
// replayed), plus the pool onboarding makes; VM 10101 runs outside that pool.
func terraformSim(t *testing.T) *simEnv {
	t.Helper()
	srv, root := pvesimtest.Start(t, pvesim.DefaultConfig())
	e := &simEnv{t: t, srv: srv, root: root}
	e.must(root.Post(context.Background(), "/pools", map[string]any{"poolid": "tenant-tdemo"}, nil))
	pvesimtest.Replay(t, root, terraformFixture)
	srv.ResetStats()
	return e
}

// adoptArgs is tdemo as the tenant repository declares it, the size Terraform gave the disk.
func adoptArgs(extra map[string]any) map[string]any {
	a := map[string]any{"count": 1, "cores": 2, "memory": 1024, "disk": "8G", "ciuser": "debian",
		"sshkeys": []any{sshKey}, "adopt": true}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

// powerRequests counts the requests that stop, start or restart a VM, and those that destroy or
// clone one.
func powerRequests(st pvesim.Stats) int {
	n := 0
	for k, v := range st.Requests {
		if strings.Contains(k, "/status/") && strings.HasPrefix(k, "POST") || strings.HasPrefix(k, "DELETE /nodes/{node}/qemu") || strings.HasSuffix(k, "/clone") {
			n += v
		}
	}
	return n
}

func TestAdoptTerraformVM(t *testing.T) {
	e := terraformSim(t)
	before := e.config(10101)

	// Without adopt the VM is nobody's: refused, untouched.
	res, code := e.run(adoptArgs(map[string]any{"adopt": false}), false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "refusing to touch a VM this tenant does not own") || e.srv.Stats().Writes != 0 {
		t.Fatalf("without adopt: code %d, writes %d, %v", code, e.srv.Stats().Writes, res["msg"])
	}

	// Check mode shows exactly the writes: the pool, the owner tag and description; nothing sent.
	res, code = e.run(adoptArgs(nil), true, true)
	v := vmsOf(t, res)
	if code != 0 || res["changed"] != true || len(v) != 1 || fmt.Sprint(v[0]["actions"]) != "[pool config]" {
		t.Fatalf("check mode: code %d, %v", code, res)
	}
	var keys []string
	for _, c := range v[0]["changes"].([]any) {
		keys = append(keys, fmt.Sprint(c.(map[string]any)["key"]))
	}
	if !slices.Equal(keys, []string{"pool", "tags", "description"}) {
		t.Errorf("check mode changes %v, want pool, tags, description", keys)
	}
	if w := e.srv.Stats().Writes; w != 0 {
		t.Fatalf("check mode wrote %d times", w)
	}

	// The takeover: the same writes, no destroy, no clone, no restart.
	res, code = e.run(adoptArgs(nil), false, false)
	v = vmsOf(t, res)
	if code != 0 || fmt.Sprint(v[0]["actions"]) != "[pool config]" {
		t.Fatalf("adopt: code %d, %v", code, res)
	}
	st := e.srv.Stats()
	if n := powerRequests(st); n != 0 || st.Requests["PUT /pools"] != 1 || st.Requests["PUT /nodes/{node}/qemu/{vmid}/config"] != 1 || st.Writes != 2 {
		t.Errorf("adopt sent %d power/destroy/clone requests, %d writes: %v", n, st.Writes, st.Requests)
	}
	after := e.config(10101)
	for _, k := range []string{"net0", "scsi0", "ide2", "cpu", "agent", "vga", "serial0", "ipconfig0"} {
		if after[k] != before[k] {
			t.Errorf("%s changed: %v -> %v", k, before[k], after[k])
		}
	}
	if after["tags"] != "tenant-tdemo" || e.status(10101) != "running" {
		t.Errorf("after adopt: tags %v, status %s", after["tags"], e.status(10101))
	}
	var pool map[string]any
	e.must(e.root.Get(context.Background(), "/pools/tenant-tdemo", nil, &pool))
	if !strings.Contains(fmt.Sprint(pool["members"]), "10101") {
		t.Errorf("pool members %v", pool["members"])
	}

	// A second run, with or without adopt, writes nothing.
	for _, adopt := range []bool{true, false} {
		e.srv.ResetStats()
		res, code = e.run(adoptArgs(map[string]any{"adopt": adopt}), false, false)
		if code != 0 || res["changed"] != false || e.srv.Stats().Writes != 0 {
			t.Fatalf("second run (adopt %v): code %d, writes %d, %v", adopt, code, e.srv.Stats().Writes, res)
		}
	}
}

// Anything that is not the plan's VM is refused before any write, naming the field.
func TestAdoptRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(*simEnv)
		args  map[string]any
		want  string
	}{
		{"VM name differs", func(e *simEnv) {
			e.must(e.root.Put(ctx, "/nodes/"+node+"/qemu/10101/config", map[string]any{"name": "web-1"}, nil))
		}, nil, `name: "web-1" (plan "tdemo-1")`},
		{"VM in another tenant's pool", func(e *simEnv) {
			e.must(e.root.Post(ctx, "/pools", map[string]any{"poolid": "tenant-tother"}, nil))
			e.must(e.root.Put(ctx, "/pools", map[string]any{"poolid": "tenant-tother", "vms": "10101"}, nil))
		}, nil, "pool: tenant-tother (plan tenant-tdemo)"},
		{"another tenant's vmid", func(e *simEnv) {
			e.must(e.root.Put(ctx, "/nodes/"+node+"/qemu/10101/config", map[string]any{"tags": "tenant-tother"}, nil))
		}, nil, "tags: owner tag tenant-tother (plan tenant-tdemo)"},
		{"every identity field listed", func(e *simEnv) {
			e.must(e.root.Put(ctx, "/nodes/"+node+"/qemu/10101/config", map[string]any{"name": "web-1", "tags": "tenant-tother"}, nil))
		}, nil, `tags: owner tag tenant-tother (plan tenant-tdemo); name: "web-1" (plan "tdemo-1")`},
		{"the plan would grow the disk", nil, map[string]any{"disk": "10G"}, "adopt: disk: scsi0 would grow to 10G; a takeover never changes a disk"},
		{"rebuilt", nil, map[string]any{"state": "rebuilt"}, "state: rebuilt cannot be combined with adopt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := terraformSim(t)
			if c.setup != nil {
				c.setup(e)
			}
			e.srv.ResetStats()
			res, code := e.run(adoptArgs(c.args), false, false)
			if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), c.want) {
				t.Fatalf("code %d, msg %v; want %q", code, res["msg"], c.want)
			}
			if w := e.srv.Stats().Writes; w != 0 {
				t.Fatalf("%d writes before the refusal: %v", w, e.srv.Stats().Requests)
			}
		})
	}
}
