package pvesim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Sources: pve-storage 0c56bad8 src/PVE/API2/Storage/Config.pm (create, update, delete),
// src/PVE/Storage.pm (storage_config, storage_check_node, vdisk_alloc), src/PVE/Storage/
// LvmThinPlugin.pm, LVMPlugin.pm, Plugin.pm (decode_value); pve-common SectionConfig.pm
// (check_config, check_value), PVE/Tools.pm run_command (errmsg: the last stderr line); lvm2
// lib/metadata/thin_manip.c (thin_pool_check_overprovisioning only warns;
// thin_pool_below_threshold refuses a new thin volume in a pool out of data space).

const gib = int64(1) << 30

func i64(v int64) *int64 { return &v }

// thinPool gives node a thin pool pve/<pool> of size bytes with used written.
func thinPool(t *testing.T, s *Server, node, pool string, size, used int64) {
	t.Helper()
	if err := s.SetDisks(node, DiskRequest{VG: "pve", ThinPool: pool, Size: i64(size), Used: i64(used)}); err != nil {
		t.Fatal(err)
	}
}

// Config.pm create/update/delete with SectionConfig's checks, as root (Datastore.Allocate on /storage).
func TestConformanceStorageConfig(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	create := func(kv ...string) []string {
		return append([]string{"storage", "tdemo-disk", "type", "lvmthin"}, kv...)
	}
	expect(t, c, []refusal{
		{name: "lvmthin without its vgname", source: "SectionConfig.pm check_config", method: "POST", path: "/storage",
			params: create("thinpool", "tdemo"), status: 500, msg: "missing value for required option 'vgname'\n"},
		{name: "an option of another type", source: "SectionConfig.pm check_value", method: "POST", path: "/storage",
			params: create("thinpool", "tdemo", "vgname", "pve", "path", "/srv"), status: 500, msg: "unexpected property 'path'\n"},
		{name: "content no lvmthin holds", source: "Plugin.pm decode_value", method: "POST", path: "/storage",
			params: create("thinpool", "tdemo", "vgname", "pve", "content", "iso"), status: 500, msg: "storage does not support content type 'none'\n"},
		{name: "a thin pool missing on the local node", source: "Config.pm create: activate_storage; LvmThinPlugin.pm $activate_lv", method: "POST", path: "/storage",
			params: create("thinpool", "tdemo", "vgname", "pve"), status: 500, msg: "create storage failed: no such logical volume pve/tdemo\n"},
	})
	if _, ok := s.st.Storages["tdemo-disk"]; ok {
		t.Fatal("a refused create left the storage registered")
	}
	thinPool(t, s, node, "tdemo", 10*gib, 0)
	c.ok("POST", "/storage", vals(create("thinpool", "tdemo", "vgname", "pve", "content", "images,iso", "nodes", node)...), nil)
	var got map[string]any
	c.ok("GET", "/storage/tdemo-disk", nil, &got)
	if got["content"] != "images" || got["vgname"] != "pve" || got["thinpool"] != "tdemo" || got["nodes"] != node {
		t.Fatalf("GET /storage/tdemo-disk = %v (iso dropped as decode_value does)", got)
	}
	expect(t, c, []refusal{
		{name: "an id already defined", source: "Config.pm create", method: "POST", path: "/storage",
			params: create("thinpool", "tdemo", "vgname", "pve"), status: 500, msg: "create storage failed: storage ID 'tdemo-disk' already defined\n"},
		{name: "a fixed option (not in updateSchema)", source: "SectionConfig.pm updateSchema", method: "PUT", path: "/storage/tdemo-disk",
			params: []string{"vgname", "other"}, status: 400, errors: map[string]string{"vgname": "property is not defined in schema and the schema does not allow additional properties"}},
		{name: "deleting a required option", source: "Config.pm update", method: "PUT", path: "/storage/tdemo-disk",
			params: []string{"delete", "thinpool"}, status: 500, msg: "update storage failed: unable to delete required option 'thinpool'\n"},
		{name: "updating a storage that does not exist", source: "Storage.pm storage_config", method: "PUT", path: "/storage/nope",
			params: []string{"disable", "1"}, status: 500, msg: "update storage failed: storage 'nope' does not exist\n"},
		{name: "status on a node that does not exist", source: "Status.pm read_status", method: "GET", path: "/nodes/dv02hyp002p03/storage/tdemo-disk/status",
			status: 500, msg: "no such cluster node 'dv02hyp002p03'\n"},
	})
	c.ok("PUT", "/storage/tdemo-disk", vals("delete", "nodes"), nil)
	c.ok("GET", "/storage/tdemo-disk", nil, &got)
	if _, ok := got["nodes"]; ok {
		t.Fatalf("nodes not deleted: %v", got)
	}
	// delete takes the section and its ACLs (remove_storage_access)
	c.ok("PUT", "/access/acl", vals("path", "/storage/tdemo-disk", "roles", "PVEDatastoreUser", "users", "root@pam"), nil)
	c.ok("DELETE", "/storage/tdemo-disk", nil, nil)
	var acl []map[string]any
	c.ok("GET", "/access/acl", nil, &acl)
	for _, e := range acl {
		if e["path"] == "/storage/tdemo-disk" {
			t.Fatalf("ACL on a deleted storage kept: %v", e)
		}
	}
	expect(t, c, []refusal{{name: "deleting it again", source: "Config.pm delete", method: "DELETE", path: "/storage/tdemo-disk",
		status: 500, msg: "delete storage failed: storage 'tdemo-disk' does not exist\n"}})
}

// A storage on some nodes only is not available on the others (storage_check_node), in its
// status and in the node's list.
func TestConformanceStorageNodes(t *testing.T) {
	s := startSim(t, func(c *Config) {
		c.Nodes = append(c.Nodes, NodeConfig{Name: "dv02hyp002p03", MaxCPU: 16, MaxMem: 1 << 36})
	})
	c := rootClient(t, s)
	thinPool(t, s, node, "tdemo", 10*gib, 0)
	c.ok("POST", "/storage", vals("storage", "tdemo-disk", "type", "lvmthin", "vgname", "pve", "thinpool", "tdemo", "nodes", node), nil)
	expect(t, c, []refusal{{name: "status on a node it is not on", source: "Storage.pm storage_check_node", method: "GET",
		path: "/nodes/dv02hyp002p03/storage/tdemo-disk/status", status: 500, msg: "storage 'tdemo-disk' is not available on node 'dv02hyp002p03'\n"}})
	var list []map[string]any
	c.ok("GET", "/nodes/dv02hyp002p03/storage", nil, &list)
	for _, e := range list {
		if e["storage"] == "tdemo-disk" {
			t.Fatalf("listed on a node it is not on: %v", e)
		}
	}
	// registered on both nodes while only one has the pool: inactive where it is missing
	c.ok("PUT", "/storage/tdemo-disk", vals("nodes", node+",dv02hyp002p03"), nil)
	var st map[string]any
	c.ok("GET", "/nodes/dv02hyp002p03/storage/tdemo-disk/status", nil, &st)
	if st["active"] != float64(0) {
		t.Fatalf("status without a pool = %v, want inactive", st)
	}
}

// A full clone onto a local storage lands on the clone's own node only, and a migration needs
// every volume's storage on the target (qemu-server API2/Qemu.pm clone_vm's load_and_check;
// QemuMigrate.pm prepare, target_storage_check_available); a VM cloned there, then migrated,
// reaches the other node once the storage is on it.
func TestConformanceStorageAcrossNodes(t *testing.T) {
	const other = "dv02hyp002p03"
	s := startSim(t, func(c *Config) {
		c.Nodes = append(c.Nodes, NodeConfig{Name: other, MaxCPU: 16, MaxMem: 1 << 36})
		c.Storages = append(c.Storages, StorageConfig{ID: "shared", Type: "rbd", Content: []string{"images"}, Shared: true, Clone: true})
		c.Templates[0].Config["scsi0"] = "shared:base-9000-disk-0,size=3G"
		c.Templates[0].Config["ide2"] = "shared:vm-9000-cloudinit,media=cdrom"
	})
	c := rootClient(t, s)
	thinPool(t, s, node, "tdemo", 10*gib, 0)
	thinPool(t, s, other, "tdemo", 10*gib, 0)
	c.ok("POST", "/storage", vals("storage", "tdemo-disk", "type", "lvmthin", "vgname", "pve", "thinpool", "tdemo", "content", "images", "nodes", node), nil)
	clone := "/nodes/" + node + "/qemu/9000/clone"
	expect(t, c, []refusal{
		{name: "a full clone to another node onto a storage not on it", source: "Qemu.pm clone_vm: storage_check_enabled($storage, $target)",
			method: "POST", path: clone, params: []string{"newid", "301", "full", "1", "storage", "tdemo-disk", "target", other},
			status: 500, msg: "storage 'tdemo-disk' is not available on node '" + other + "'\n"},
	})
	c.ok("PUT", "/storage/tdemo-disk", vals("nodes", node+","+other), nil)
	expect(t, c, []refusal{
		{name: "a full clone to another node onto a local storage", source: "Qemu.pm clone_vm: \"clone only works if target storage is shared\"",
			method: "POST", path: clone, params: []string{"newid", "301", "full", "1", "storage", "tdemo-disk", "target", other},
			status: 500, msg: "can't clone to non-shared storage 'tdemo-disk'\n"},
	})
	// clone on the template's node, then migrate: refused while the storage is not on the target
	if _, exit := c.task("POST", clone, vals("newid", "301", "full", "1", "storage", "tdemo-disk")); exit != "OK" {
		t.Fatalf("full clone onto tdemo-disk on the template's node: %s", exit)
	}
	c.ok("PUT", "/storage/tdemo-disk", vals("nodes", node), nil)
	expect(t, c, []refusal{
		{name: "a migration to a node without the disks' storage", source: "Qemu.pm migrate_vm: QemuServer.pm check_storage_availability",
			method: "POST", path: "/nodes/" + node + "/qemu/301/migrate", params: []string{"target", other},
			status: 500, msg: "storage 'tdemo-disk' is not available on node '" + other + "'\n"},
		{name: "a migration mapping the disks to a storage not on the target", source: "Qemu.pm $check_storage_access_migrate",
			method: "POST", path: "/nodes/" + node + "/qemu/301/migrate", params: []string{"target", other, "targetstorage", "tdemo-disk"},
			status: 500, msg: "storage 'tdemo-disk' is not available on node '" + other + "'\n"},
	})
	if s.st.VMs[301].Node != node {
		t.Fatal("a refused migration moved the VM")
	}
	c.ok("PUT", "/storage/tdemo-disk", vals("nodes", node+","+other), nil)
	if _, exit := c.task("POST", "/nodes/"+node+"/qemu/301/migrate", vals("target", other)); exit != "OK" {
		t.Fatalf("migrate with the storage on both nodes: %s", exit)
	}
	if s.st.VMs[301].Node != other {
		t.Fatalf("VM 301 on %s after its migration", s.st.VMs[301].Node)
	}
}

// Capacity, allocation and growth: LVM-thin over-provisions and refuses only a new volume in a
// pool out of data space; LVM thick refuses what the group cannot hold; a delete frees it.
func TestConformanceStorageCapacity(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	hc := httpClientFor(t, s)
	// the admin call, as a node's disks would: a 10 GiB pool
	res, err := hc.Post(s.URL()+"/_sim/disks/"+node, "application/json", strings.NewReader(fmt.Sprintf(`{"vg":"pve","thinpool":"tdemo","size":%d}`, 10*gib)))
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST /_sim/disks: %v %v", res, err)
	}
	_ = res.Body.Close()
	c.ok("POST", "/storage", vals("storage", "tdemo-disk", "type", "lvmthin", "vgname", "pve", "thinpool", "tdemo", "content", "images"), nil)
	status := func(sid string) map[string]any {
		var st map[string]any
		c.ok("GET", "/nodes/"+node+"/storage/"+sid+"/status", nil, &st)
		return st
	}
	if st := status("tdemo-disk"); st["total"] != float64(10*gib) || st["used"] != float64(0) || st["avail"] != float64(10*gib) || st["active"] != float64(1) {
		t.Fatalf("status = %v", st)
	}
	// over-provisioned: 20 GiB of volume on a 10 GiB pool is made (lvm2 only warns)
	create := "/nodes/" + node + "/qemu"
	if _, exit := c.task("POST", create, vals("vmid", "300", "scsi0", "tdemo-disk:20", "sockets", "2", "cores", "3", "memory", "current=4096")); exit != "OK" {
		t.Fatalf("over-provisioned create: %s", exit)
	}
	// the guest writes the pool full
	thinPool(t, s, node, "tdemo", 10*gib, 10*gib)
	full := "  Free space in pool pve/tdemo is above threshold, new volumes are not allowed."
	if _, exit := c.task("POST", create, vals("vmid", "301", "scsi0", "tdemo-disk:1")); exit != "unable to create VM 301 - lvcreate 'pve/vm-301-disk-0' error: "+full {
		t.Fatalf("create on a full pool (Qemu.pm create_vm $emsg; LvmThinPlugin.pm alloc_image): %q", exit)
	}
	if s.st.VMs[301] != nil {
		t.Fatal("a refused create left VM 301")
	}
	clone := "/nodes/" + node + "/qemu/9000/clone"
	if _, exit := c.task("POST", clone, vals("newid", "302", "full", "1", "storage", "tdemo-disk")); exit != "clone failed: lvcreate 'pve/vm-302-cloudinit' error: "+full {
		t.Fatalf("full clone onto a full pool (Qemu.pm clone_vm: sort keys %%$drives, ide2 first): %q", exit)
	}
	if s.st.VMs[302] != nil {
		t.Fatal("a refused clone left VM 302")
	}
	// a thin volume still grows (virtual size), and the other pool takes clones
	if _, exit := c.task("PUT", "/nodes/"+node+"/qemu/300/resize", vals("disk", "scsi0", "size", "+10G")); exit != "OK" {
		t.Fatalf("thin resize: %s", exit)
	}
	if _, exit := c.task("POST", clone, vals("newid", "303", "full", "1", "storage", "local-lvm")); exit != "OK" {
		t.Fatalf("clone onto local-lvm beside a full pool: %s", exit)
	}
	// /cluster/resources: the storage's disk/maxdisk, the VM's sockets x cores, memory, boot disk
	var rs []map[string]any
	c.ok("GET", "/cluster/resources", nil, &rs)
	seen := 0
	for _, e := range rs {
		switch e["id"] {
		case "storage/" + node + "/tdemo-disk":
			seen++
			if e["disk"] != float64(10*gib) || e["maxdisk"] != float64(10*gib) {
				t.Errorf("storage entry = %v", e)
			}
		case "qemu/300":
			seen++
			if e["maxcpu"] != float64(6) || e["maxmem"] != float64(4*gib) || e["maxdisk"] != float64(30*gib) {
				t.Errorf("VM entry = %v, want maxcpu 6 (2x3), maxmem 4 GiB (current=4096), maxdisk 30 GiB", e)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("resources lack the storage or the VM: %v", rs)
	}

	// LVM thick: a 10 GiB group holds 8 GiB, refuses 4 more, at create and at resize
	if err := s.SetDisks(node, DiskRequest{VG: "thick", VGSize: i64(10 * gib)}); err != nil {
		t.Fatal(err)
	}
	c.ok("POST", "/storage", vals("storage", "thick", "type", "lvm", "vgname", "thick"), nil)
	if _, exit := c.task("POST", create, vals("vmid", "310", "scsi0", "thick:8")); exit != "OK" {
		t.Fatalf("thick create: %s", exit)
	}
	if st := status("thick"); st["used"] != float64(8*gib) || st["avail"] != float64(2*gib) {
		t.Fatalf("thick status = %v", st)
	}
	if _, exit := c.task("POST", create, vals("vmid", "311", "scsi0", "thick:4")); exit != `unable to create VM 311 - lvcreate 'thick/vm-311-disk-0' error:   Volume group "thick" has insufficient free space (512 extents): 1024 required.` {
		t.Fatalf("thick create past the group (LVMPlugin.pm alloc_lvm_image, lvcreate): %q", exit)
	}
	if _, exit := c.task("PUT", "/nodes/"+node+"/qemu/310/resize", vals("disk", "scsi0", "size", "+4G")); exit != "error resizing volume '/dev/thick/vm-310-disk-0':   Insufficient free space: 1024 extents needed, but only 512 available" {
		t.Fatalf("thick resize past the group (LVMPlugin.pm volume_resize): %q", exit)
	}
	if !strings.Contains(s.st.VMs[310].Config["scsi0"], "size=8G") {
		t.Fatalf("a refused resize changed the config: %s", s.st.VMs[310].Config["scsi0"])
	}
	if _, exit := c.task("DELETE", "/nodes/"+node+"/qemu/310", nil); exit != "OK" {
		t.Fatalf("delete: %s", exit)
	}
	if st := status("thick"); st["used"] != float64(0) {
		t.Fatalf("a deleted VM's volume still counted: %v", st)
	}
}

// The thin pools a node has, as GET /nodes/{node}/disks/lvmthin lists them (pve-manager
// API2/Disks/LVMThin.pm index): what onboarding reads before it registers a storage.
func TestNodeThinPools(t *testing.T) {
	s := startSim(t, func(c *Config) {
		c.Nodes = append(c.Nodes, NodeConfig{Name: "dv02hyp002p03", MaxCPU: 16, MaxMem: 1 << 36})
		c.Disks = []DiskConfig{{VG: "pve", ThinPool: "tenant-tother", Size: 5 * gib}} // on every node
	})
	c := rootClient(t, s)
	thinPool(t, s, node, "tdemo", 10*gib, gib)
	var pools []map[string]any
	c.ok("GET", "/nodes/"+node+"/disks/lvmthin", nil, &pools)
	want := map[string]bool{"pve/data": false, "pve/tdemo": false}
	for _, p := range pools {
		want[fmt.Sprint(p["vg"], "/", p["lv"])] = true
		if p["lv"] == "tdemo" && (p["lv_size"] != float64(10*gib) || p["used"] != float64(gib)) {
			t.Errorf("tdemo = %v", p)
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("%s not listed: %v", k, pools)
		}
	}
	c.ok("GET", "/nodes/dv02hyp002p03/disks/lvmthin", nil, &pools)
	if len(pools) != 2 || pools[1]["lv"] != "tenant-tother" || pools[1]["lv_size"] != float64(5*gib) {
		t.Fatalf("the config's pool on the second node: %v", pools)
	}
}
