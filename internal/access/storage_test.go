package access

import (
	"context"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/pvesim"
)

const node = "dv02hyp002p02"

// withStorage is onboarding's arguments for a tenant with its own storage and no grant on shared
// storage (playbooks/tasks/onboard.yml).
func withStorage(name string, index int) map[string]any {
	return map[string]any{"name": name, "index": index, "storages": []any{},
		"tenant_storage": map[string]any{"nodes": []any{node}}}
}

func thinPool(t *testing.T, srv *pvesim.Server, pool string, size, used int64) {
	t.Helper()
	if err := srv.SetDisks(node, pvesim.DiskRequest{VG: "pve", ThinPool: pool, Size: &size, Used: &used}); err != nil {
		t.Fatal(err)
	}
}

// tokenOf is the tenant's token client from a module result.
func tokenOf(t *testing.T, srv *pvesim.Server, res map[string]any) *pve.Client {
	t.Helper()
	user, _, _ := strings.Cut(res["token_id"].(string), "!")
	return tenantClient(t, srv, user, res["token_secret"].(string))
}

// task runs a call that answers a UPID and returns the task's error.
func task(ctx context.Context, c *pve.Client, method, path string, body map[string]any) error {
	var upid string
	var err error
	switch method {
	case "PUT":
		err = c.Put(ctx, path, body, &upid)
	case "DELETE":
		err = c.Delete(ctx, path, nil, &upid)
	default:
		err = c.Post(ctx, path, body, &upid)
	}
	if err != nil {
		return err
	}
	return c.WaitTask(ctx, upid)
}

// A storage that cannot be created is refused before any write, naming the node and the pool.
func TestTenantStorageRefusedBeforeAnyWrite(t *testing.T) {
	srv := startSim(t)
	refused(t, srv, withStorage("tdemo", 1), "node dv02hyp002p02 has no thin pool pve/tenant-tdemo")
	refused(t, srv, map[string]any{"name": "tdemo", "index": 1, "tenant_storage": map[string]any{"nodes": []any{"nosuchnode"}}},
		"reading node nosuchnode's thin pools")
	// an id taken by a storage of another kind: PVE cannot change vgname or thinpool
	thinPool(t, srv, "tenant-tdemo", 10<<30, 0)
	root := rootClient(t, srv)
	if err := root.Post(context.Background(), "/storage", map[string]any{"storage": "tenant-tdemo", "type": "dir", "path": "/srv"}, nil); err != nil {
		t.Fatal(err)
	}
	refused(t, srv, withStorage("tdemo", 1), "storage tenant-tdemo exists as type dir")
}

// A thin pool larger than the envelope's disk would let the tenant allocate past it: refused
// before any write, naming the node, the pool, its size and envelope.disk; one of that size passes.
func TestTenantStorageLargerThanEnvelopeRefused(t *testing.T) {
	srv := startSim(t)
	args := withStorage("tdemo", 1)
	args["envelope"] = map[string]any{"vms": 8, "cores": 16, "memory": 32768, "disk": 10}
	thinPool(t, srv, "tenant-tdemo", 11<<30, 0)
	refused(t, srv, args, "node dv02hyp002p02's thin pool pve/tenant-tdemo holds 11811160064 bytes (11.0 GiB), more than the envelope's disk of 10 GiB (envelope.disk)")
	thinPool(t, srv, "tenant-tdemo", 10<<30, 0)
	if res := run(t, srv, args); res["failed"] == true {
		t.Fatalf("a pool of the envelope's disk: %v", res["msg"])
	}
}

// Onboarding registers the tenant's storage and grants its token space there only: its clones'
// disks land there, shared storage refuses it, its full pool fails its allocation and not the
// other tenant's; absent removes the registration.
func TestTenantStorage(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()
	thinPool(t, srv, "tenant-tdemo", 10<<30, 0)
	thinPool(t, srv, "tenant-tother", 10<<30, 0)

	// check mode: the storage and the grant are planned, nothing is written
	w0 := writes(srv)
	args := withStorage("tdemo", 1)
	args["_ansible_check_mode"], args["_ansible_diff"] = true, true
	res := run(t, srv, args)
	if res["failed"] == true || res["changed"] != true || !strings.Contains(strings.Join(toStrings(res["changes"]), "\n"), "create storage tenant-tdemo") {
		t.Fatalf("check mode: %v", res)
	}
	if w := writes(srv) - w0; w != 0 {
		t.Fatalf("check mode wrote %d time(s)", w)
	}
	a := run(t, srv, withStorage("tdemo", 1))
	b := run(t, srv, withStorage("tother", 2))
	for _, r := range []map[string]any{a, b} {
		if r["failed"] == true || r["changed"] != true {
			t.Fatalf("onboard: %v", r)
		}
	}
	if again := run(t, srv, withStorage("tdemo", 1)); again["changed"] != false {
		t.Fatalf("second run changed: %v", again["changes"])
	}
	root := rootClient(t, srv)
	var st map[string]any
	if err := root.Get(ctx, "/storage/tenant-tdemo", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st["type"] != "lvmthin" || st["vgname"] != "pve" || st["thinpool"] != "tenant-tdemo" || st["content"] != "images" || st["nodes"] != node {
		t.Fatalf("storage = %v", st)
	}
	var acl []map[string]any
	if err := root.Get(ctx, "/access/acl", nil, &acl); err != nil {
		t.Fatal(err)
	}
	for _, e := range acl {
		p := e["path"].(string)
		if e["ugid"] == a["token_id"] && strings.HasPrefix(p, "/storage/") && p != "/storage/tenant-tdemo" {
			t.Fatalf("tdemo's token holds %s on %s", e["roleid"], p)
		}
	}

	demo, other := tokenOf(t, srv, a), tokenOf(t, srv, b)
	clone := "/nodes/" + node + "/qemu/9000/clone"
	// a full clone onto its storage needs nothing on the template's storage (Qemu.pm
	// $check_storage_access_clone checks the target storage in place of the source's)
	if err := task(ctx, demo, "POST", clone, map[string]any{"newid": 10101, "pool": "tenant-tdemo", "full": 1, "storage": "tenant-tdemo"}); err != nil {
		t.Fatalf("tdemo's clone onto its storage: %v", err)
	}
	var conf map[string]any
	if err := demo.Get(ctx, "/nodes/"+node+"/qemu/10101/config", nil, &conf); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scsi0", "ide2"} {
		if v, _ := conf[k].(string); !strings.HasPrefix(v, "tenant-tdemo:") {
			t.Fatalf("%s = %q, not on tenant-tdemo", k, v)
		}
	}
	// shared storage refuses it, PVE's 403 (Qemu.pm $check_storage_access_clone, create's $check_storage_access)
	shared := "Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)"
	if err := task(ctx, demo, "POST", clone, map[string]any{"newid": 10102, "pool": "tenant-tdemo", "full": 1, "storage": "local-lvm"}); err == nil || !strings.Contains(err.Error(), shared) {
		t.Fatalf("clone onto local-lvm: %v", err)
	}
	if err := task(ctx, demo, "POST", "/nodes/"+node+"/qemu", map[string]any{"vmid": 10103, "pool": "tenant-tdemo", "scsi0": "local-lvm:1"}); err == nil || !strings.Contains(err.Error(), shared) {
		t.Fatalf("create on local-lvm: %v", err)
	}
	if err := task(ctx, demo, "POST", clone, map[string]any{"newid": 10104, "pool": "tenant-tdemo", "full": 1, "storage": "tenant-tother"}); err == nil || !strings.Contains(err.Error(), "(/storage/tenant-tother, Datastore.AllocateSpace)") {
		t.Fatalf("clone onto tother's storage: %v", err)
	}
	// tdemo fills its pool: its next allocation fails, tother's clone onto its own still succeeds
	thinPool(t, srv, "tenant-tdemo", 10<<30, 10<<30)
	if err := task(ctx, demo, "POST", clone, map[string]any{"newid": 10105, "pool": "tenant-tdemo", "full": 1, "storage": "tenant-tdemo"}); err == nil ||
		!strings.Contains(err.Error(), "clone failed: lvcreate 'pve/vm-10105-cloudinit' error:   Free space in pool pve/tenant-tdemo is above threshold, new volumes are not allowed.") {
		t.Fatalf("tdemo's clone onto its full pool: %v", err)
	}
	if err := task(ctx, other, "POST", clone, map[string]any{"newid": 10201, "pool": "tenant-tother", "full": 1, "storage": "tenant-tother"}); err != nil {
		t.Fatalf("tother's clone beside tdemo's full pool: %v", err)
	}

	// absent after the VMs: the storage registration goes with the access objects
	if err := task(ctx, root, "DELETE", "/nodes/"+node+"/qemu/10101", nil); err != nil {
		t.Fatal(err)
	}
	if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1, "state": "absent"}); res["failed"] == true || !strings.Contains(strings.Join(toStrings(res["changes"]), "\n"), "delete storage tenant-tdemo") {
		t.Fatalf("absent: %v", res)
	}
	if err := root.Get(ctx, "/storage/tenant-tdemo", nil, &st); err == nil {
		t.Fatal("tenant-tdemo still registered after absent")
	}
}
