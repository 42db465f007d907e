package vm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

const node2 = "dv02hyp002p03"

// newSim2 is newSim with a second node and the template on shared storage, as a cluster that
// clones across nodes needs (PVE refuses a clone to another node from local storage).
func newSim2(t *testing.T, shared bool) *simEnv {
	t.Helper()
	cfg := pvesim.DefaultConfig()
	cfg.Nodes = append(cfg.Nodes, pvesim.NodeConfig{Name: node2, MaxCPU: 16, MaxMem: 68719476736})
	// two members need a QDevice to stay writable with one away (ADR-0015)
	cfg.Quorum.QDevice = &pvesim.QDeviceConfig{Host: "qdevice.test"}
	cfg.Storages = append(cfg.Storages, pvesim.StorageConfig{ID: "shared", Type: "rbd", Content: []string{"images"}, Shared: true, Clone: true})
	if shared {
		tp := &cfg.Templates[0]
		tp.Config["scsi0"] = "shared:base-9000-disk-0,size=3G"
		tp.Config["ide2"] = "shared:vm-9000-cloudinit,media=cdrom"
	}
	srv, root := pvesimtest.Start(t, cfg)
	e := &simEnv{t: t, srv: srv, root: root}
	e.tenantInfra("tenant-tdemo", "tn01", "tn01v0", 20016)
	srv.ResetStats()
	return e
}

// nodeOf returns the node /cluster/resources shows for vmid.
func (e *simEnv) nodeOf(vmid int) string {
	e.t.Helper()
	var res []map[string]any
	e.must(e.root.Get(context.Background(), "/cluster/resources", nil, &res))
	for _, r := range res {
		if fmt.Sprint(r["vmid"]) == fmt.Sprint(vmid) && r["type"] == "qemu" {
			return fmt.Sprint(r["node"])
		}
	}
	return ""
}

var twoNodes = map[string]any{"nodes": []any{node, node2}}

// TestPlacementSpread: placement spread puts VM k on the site's node (k-1) mod n, cloning from
// the template's node with a target; a second run changes nothing; growing count keeps every
// VM where it is; the default (first) keeps every VM on the first node.
func TestPlacementSpread(t *testing.T) {
	e := newSim2(t, true)
	res, code := e.run(map[string]any{"count": 3, "placement": "spread", "site": twoNodes}, false, false)
	if code != 0 {
		t.Fatalf("code %d, %v", code, res["msg"])
	}
	want := map[int]string{10101: node, 10102: node2, 10103: node}
	for id, n := range want {
		if got := e.nodeOf(id); got != n {
			t.Errorf("VM %d on %q, want %q", id, got, n)
		}
	}
	for i, v := range vmsOf(t, res) {
		if v["node"] != want[10101+i] {
			t.Errorf("result vms[%d].node %v, want %s", i, v["node"], want[10101+i])
		}
	}
	e.srv.ResetStats()
	res, code = e.run(map[string]any{"count": 3, "placement": "spread", "site": twoNodes}, false, false)
	if code != 0 || res["changed"] != false || e.srv.Stats().Writes != 0 {
		t.Fatalf("second run: code %d changed %v writes %d", code, res["changed"], e.srv.Stats().Writes)
	}
	// back to the default: existing VMs stay where they are (no migration), nothing changes
	res, code = e.run(map[string]any{"count": 3, "site": twoNodes}, false, false)
	if code != 0 || res["changed"] != false {
		t.Fatalf("placement first over spread VMs: code %d changed %v %v", code, res["changed"], res["msg"])
	}
	_, code = e.run(map[string]any{"count": 4, "site": twoNodes}, false, false)
	if code != 0 || e.nodeOf(10104) != node || e.nodeOf(10102) != node2 {
		t.Fatalf("count 4, placement first: code %d, 10104 on %q, 10102 on %q", code, e.nodeOf(10104), e.nodeOf(10102))
	}
}

// TestPlacementRefusals: contradictions are refused before any write, and a clone to another
// node from a template on local storage gives PVE's reason.
func TestPlacementRefusals(t *testing.T) {
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"spread with node", map[string]any{"placement": "spread", "node": node, "site": twoNodes}, "cannot be combined with placement spread"},
		{"unknown placement", map[string]any{"placement": "random"}, "placement"},
		{"node not in the cluster", map[string]any{"node": "dv02hyp002p09"}, `node "dv02hyp002p09" does not exist`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newSim2(t, true)
			args := map[string]any{"count": 2}
			for k, v := range c.args {
				args[k] = v
			}
			res, code := e.run(args, false, false)
			if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), c.want) {
				t.Fatalf("code %d, msg %v; want %q", code, res["msg"], c.want)
			}
			if w := e.srv.Stats().Writes; w != 0 {
				t.Fatalf("%d writes before the refusal", w)
			}
		})
	}
	e := newSim2(t, false)
	res, code := e.run(map[string]any{"count": 2, "placement": "spread", "site": twoNodes}, false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "VM uses local storage") {
		t.Fatalf("local template, spread: code %d, msg %v", code, res["msg"])
	}
	if e.nodeOf(10101) != node {
		t.Fatalf("VM 1 (on the template's node) not created: %q", e.nodeOf(10101))
	}
}
