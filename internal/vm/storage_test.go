package vm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
)

// The tenant's VMs are full clones onto its own storage (ADR-0014: the role passes full and the
// attachment's storage): every disk lands there, grown to the declared size, and a second run is
// a no-op; a full thin pool fails the clone with lvm2's refusal, and nothing is left behind.
func TestFullCloneOntoTenantStorage(t *testing.T) {
	e := newSim(t)
	size, used := int64(20)<<30, int64(0)
	e.must(e.srv.SetDisks(node, pvesim.DiskRequest{VG: "pve", ThinPool: "tenant-tdemo", Size: &size, Used: &used}))
	e.must(e.root.Post(context.Background(), "/storage", map[string]any{"storage": "tenant-tdemo", "type": "lvmthin",
		"vgname": "pve", "thinpool": "tenant-tdemo", "content": "images"}, nil))
	args := map[string]any{"full": true, "storage": "tenant-tdemo"}
	for k, v := range tdemo {
		args[k] = v
	}
	if res, code := e.run(args, false, false); code != 0 || res["changed"] != true {
		t.Fatalf("converge: %d %v", code, res)
	}
	cfg := e.config(10101)
	for _, k := range []string{"scsi0", "ide2"} {
		if v, _ := cfg[k].(string); !strings.HasPrefix(v, "tenant-tdemo:vm-10101-") {
			t.Fatalf("%s = %q, not on tenant-tdemo", k, v)
		}
	}
	if v, _ := cfg["scsi0"].(string); !strings.Contains(v, "size=8G") {
		t.Fatalf("scsi0 = %q, not grown to 8G", v)
	}
	if res, code := e.run(args, false, false); code != 0 || res["changed"] != false {
		t.Fatalf("second run: %d %v", code, res)
	}
	used = size
	e.must(e.srv.SetDisks(node, pvesim.DiskRequest{VG: "pve", ThinPool: "tenant-tdemo", Used: &used}))
	args["count"] = 2
	res, code := e.run(args, false, false)
	if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, "Free space in pool pve/tenant-tdemo is above threshold, new volumes are not allowed.") {
		t.Fatalf("a clone onto the full pool: %d %v", code, res)
	}
	if e.exists(10102) {
		t.Fatal("the refused clone left VM 10102")
	}
}
