package access

import (
	"context"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

const joined = "dv02hyp002p03" // twoNodeConfig's second node

// runStorages runs pve_tenant_storages with the root token.
func runStorages(t *testing.T, srv *pvesim.Server, args map[string]any) map[string]any {
	t.Helper()
	res, _ := runAsRoot(t, srv, StoragesModule(), args)
	return res
}

// A node that joins the fabric after onboarding gets every tenant's storage: before, the tenant's
// clone onto it is refused by PVE; a node without the thin pool is refused before any write; the
// operator's own storages are left alone; a second run changes nothing.
func TestTenantStoragesFollowTheFabric(t *testing.T) {
	srv, _ := pvesimtest.Start(t, twoNodeConfig())
	ctx := context.Background()
	thinPool(t, srv, "tenant-tdemo", 10<<30, 0)
	a := run(t, srv, withStorage("tdemo", 1)) // on node only, as onboarding in Phase 1
	if a["failed"] == true {
		t.Fatalf("onboard: %v", a)
	}
	demo := tokenOf(t, srv, a)
	// tenant_vm's way onto another node: a full clone on the template's node, then a migration
	clone := "/nodes/" + node + "/qemu/9000/clone"
	if err := task(ctx, demo, "POST", clone, map[string]any{"newid": 10102, "pool": "tenant-tdemo", "full": 1, "storage": "tenant-tdemo"}); err != nil {
		t.Fatalf("clone onto its storage: %v", err)
	}
	migrate := "/nodes/" + node + "/qemu/10102/migrate"
	if err := task(ctx, demo, "POST", migrate, map[string]any{"target": joined}); err == nil || !strings.Contains(err.Error(), "storage 'tenant-tdemo' is not available on node '"+joined+"'") {
		t.Fatalf("migration to the joined node before the extension: %v", err)
	}

	members := map[string]any{"nodes": []any{node, joined}}
	srv.ResetStats()
	res := runStorages(t, srv, members)
	if res["failed"] != true || !strings.Contains(res["msg"].(string), "nodes: storage tenant-tdemo cannot be extended to node "+joined+": it has no thin pool pve/tenant-tdemo") {
		t.Fatalf("node without the pool: %v", res)
	}
	if w := srv.Stats().Writes; w != 0 {
		t.Fatalf("%d write(s) before the refusal", w)
	}
	size, used := int64(10<<30), int64(0)
	if err := srv.SetDisks(joined, pvesim.DiskRequest{VG: "pve", ThinPool: "tenant-tdemo", Size: &size, Used: &used}); err != nil {
		t.Fatal(err)
	}

	check := map[string]any{"nodes": members["nodes"], "_ansible_check_mode": true, "_ansible_diff": true}
	res = runStorages(t, srv, check)
	if res["failed"] == true || res["changed"] != true || srv.Stats().Writes != 0 {
		t.Fatalf("check mode: %v (%d writes)", res, srv.Stats().Writes)
	}
	res = runStorages(t, srv, members)
	if res["failed"] == true || res["changed"] != true || strings.Join(toStrings(res["changes"]), "\n") != "extend storage tenant-tdemo to "+joined+" (nodes "+node+","+joined+")" {
		t.Fatalf("extend: %v", res)
	}
	if again := runStorages(t, srv, members); again["changed"] != false {
		t.Fatalf("second run changed: %v", again)
	}
	// a member leaving the list removes nothing: the node may still hold the tenant's disks
	if fewer := runStorages(t, srv, map[string]any{"nodes": []any{node}}); fewer["changed"] != false {
		t.Fatalf("a shorter member list changed: %v", fewer)
	}
	root := rootClient(t, srv)
	var st map[string]any
	if err := root.Get(ctx, "/storage/local-lvm", nil, &st); err != nil || st["nodes"] != nil {
		t.Fatalf("local-lvm = %v (%v): the operator's storage was changed", st, err)
	}
	if err := task(ctx, demo, "POST", migrate, map[string]any{"target": joined}); err != nil {
		t.Fatalf("migration to the joined node after the extension: %v", err)
	}
}

// A node that joins with a tenant's thin pool larger than the tenant's envelope disk is refused
// before any write, as onboarding refuses one on the nodes of its day; a bad envelope_disk entry is
// refused naming it; a tenant not in envelope_disk is extended as before.
func TestTenantStoragesRefuseAPoolOverTheEnvelope(t *testing.T) {
	srv, _ := pvesimtest.Start(t, twoNodeConfig())
	thinPool(t, srv, "tenant-tdemo", 10<<30, 0)
	if a := run(t, srv, withStorage("tdemo", 1)); a["failed"] == true {
		t.Fatalf("onboard: %v", a)
	}
	size, used := int64(20<<30), int64(0)
	if err := srv.SetDisks(joined, pvesim.DiskRequest{VG: "pve", ThinPool: "tenant-tdemo", Size: &size, Used: &used}); err != nil {
		t.Fatal(err)
	}
	members := []any{node, joined}
	srv.ResetStats()
	for _, c := range []struct {
		name  string
		disks map[string]any
		want  string
	}{
		{"a pool over the envelope", map[string]any{"tdemo": 16},
			"nodes: storage tenant-tdemo cannot be extended to node " + joined + ": its thin pool pve/tenant-tdemo holds 21474836480 bytes (20.0 GiB), more than tenant tdemo's envelope disk of 16 GiB (envelope_disk.tdemo)"},
		{"not a number", map[string]any{"tdemo": "lots"}, `envelope_disk.tdemo: "lots" must be a whole number of GiB of at least 1`},
		{"below one", map[string]any{"tdemo": 0}, `envelope_disk.tdemo: "0" must be a whole number of GiB of at least 1`},
	} {
		res := runStorages(t, srv, map[string]any{"nodes": members, "envelope_disk": c.disks})
		if res["failed"] != true || !strings.Contains(res["msg"].(string), c.want) {
			t.Fatalf("%s: %v, want the refusal %q", c.name, res, c.want)
		}
		if w := srv.Stats().Writes; w != 0 {
			t.Fatalf("%s: %d write(s) before the refusal", c.name, w)
		}
	}
	for _, disks := range []map[string]any{{"tdemo": 20}, {"tother": 1}} {
		res := runStorages(t, srv, map[string]any{"nodes": members, "envelope_disk": disks, "_ansible_check_mode": true})
		if res["failed"] == true || res["changed"] != true {
			t.Fatalf("envelope_disk %v: %v, want the extension", disks, res)
		}
	}
}
