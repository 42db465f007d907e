package pvesim

import (
	"testing"
)

// vmConformanceSetup onboards tdemo and tother as the project does, clones tdemo's VM 10101 and
// tother's 10201 (as root), and adds a storage holding images that no tenant was granted.
func vmConformanceSetup(t *testing.T) (s *Server, a, b onboarded) {
	t.Helper()
	s = startSim(t, func(c *Config) {
		c.Storages = append(c.Storages, StorageConfig{ID: "ceph", Type: "rbd", Content: []string{"images"}, Shared: true})
		// a second template whose volumes exist: a disk on ceph, an ISO on local
		c.Templates = append(c.Templates, TemplateConfig{VMID: 9001, Node: node, Name: "tools", Template: true,
			Config: map[string]string{"scsi0": "ceph:base-9001-disk-0,size=1G", "ide3": "local:iso/tools.iso,media=cdrom", "template": "1"}})
	})
	a = onboard(t, s, "tdemo", 1, "tdemov0", "10001")
	b = onboard(t, s, "tother", 2, "totherv0", "10002")
	if _, exit := a.tenant.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10101", "name", "tdemo-1", "pool", a.pool)); exit != "OK" {
		t.Fatalf("tdemo clone: %s", exit)
	}
	if _, exit := a.root.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10201", "name", "tother-1", "pool", b.pool, "full", "1")); exit != "OK" {
		t.Fatalf("tother clone: %s", exit)
	}
	return s, a, b
}

// withVMAdmin grants o PVEVMAdmin on its pool, as onboarding did before ADR-0013: a check PVE
// makes behind VM.Clone or VM.Config.HWType, which the tenant's own role no longer holds, is only
// reached with them.
func (o onboarded) withVMAdmin(t *testing.T) {
	t.Helper()
	for _, who := range [][2]string{{"users", o.user}, {"tokens", o.token}} {
		o.root.ok("PUT", "/access/acl", vals("path", "/pool/"+o.pool, "roles", "PVEVMAdmin", who[0], who[1]), nil)
	}
}

// taskRefusal is a POST config whose refusal comes from update_vm_api's worker: the call returns
// a task, the task fails with PVE's message.
type taskRefusal struct {
	name, source string
	params       []string
	exit         string
}

func expectTasks(t *testing.T, c *client, path string, cases []taskRefusal) {
	t.Helper()
	for _, tc := range cases {
		if _, exit := c.task("POST", path, vals(tc.params...)); exit != tc.exit {
			t.Errorf("%s (%s): task exit %q, want %q", tc.name, tc.source, exit, tc.exit)
		}
	}
}

// Case 1: a NIC's tag and every VLAN of its trunk are checked on /sdn/zones/<zone>/<bridge>/<vlan>
// (GuestHelpers.pm:397 check_vnet_access), on create, clone (the source's NICs), update (the new
// NIC before the worker, the replaced or removed one in it).
func TestConformanceVnetAccess(t *testing.T) {
	_, a, b := vmConformanceSetup(t)
	cfg := "/nodes/" + node + "/qemu/10101/config"
	vmbr0 := "/sdn/zones/localnetwork/vmbr0"
	other := "/sdn/zones/" + b.zone + "/totherv0"
	deny := func(path string) string { return "Permission check failed (" + path + ", SDN.Use)\n" }
	expect(t, a.tenant, []refusal{
		{name: "trunk of every VLAN on vmbr0 (the bridge grant does not propagate)", source: "GuestHelpers.pm:414",
			method: "POST", path: cfg, params: []string{"net1", "virtio,bridge=vmbr0,trunks=1-4094"}, status: 403, msg: deny(vmbr0 + "/1")},
		{name: "a VLAN tag on vmbr0", source: "GuestHelpers.pm:410",
			method: "POST", path: cfg, params: []string{"net1", "virtio,bridge=vmbr0,tag=10"}, status: 403, msg: deny(vmbr0 + "/10")},
		{name: "a VLAN of another tenant's VNet", source: "GuestHelpers.pm:410",
			method: "PUT", path: cfg, params: []string{"net1", "virtio,bridge=totherv0,tag=5"}, status: 403, msg: deny(other + "/5")},
		{name: "a trunk into another tenant's VNet, checked in Perl's string order", source: "GuestHelpers.pm:414",
			method: "POST", path: cfg, params: []string{"net1", "virtio,bridge=totherv0,trunks=3;20"}, status: 403, msg: deny(other + "/20")},
		{name: "a trunk on vmbr0 at create", source: "Qemu.pm:1364",
			method: "POST", path: "/nodes/" + node + "/qemu", params: []string{"vmid", "10102", "pool", a.pool, "net0", "virtio,bridge=vmbr0,trunks=100"}, status: 403, msg: deny(vmbr0 + "/100")},
	})
	// Its own zone's grant propagates: tags and trunks on its VNet are allowed.
	if _, exit := a.tenant.task("POST", cfg, vals("net1", "virtio,bridge=tdemov0,trunks=5;7-9", "net2", "virtio,bridge=tdemov0,tag=100")); exit != "OK" {
		t.Fatalf("own VNet with tag and trunk: %s", exit)
	}
	// A grant on a bridge that propagates reaches all its VLANs: every VLAN of a full trunk passes.
	for _, who := range [][2]string{{"users", a.user}, {"tokens", a.token}} {
		a.root.ok("PUT", "/access/acl", vals("path", "/sdn/zones/localnetwork/vmbr1", "roles", "PVESDNUser", who[0], who[1], "propagate", "1"), nil)
	}
	if _, exit := a.tenant.task("POST", cfg, vals("net4", "virtio,bridge=vmbr1,trunks=1-4094")); exit != "OK" {
		t.Fatalf("full trunk under a propagating bridge grant: %s", exit)
	}
	// A NIC root put on a VLAN of vmbr0: the clone checks the source's NICs, the update the NIC it
	// replaces or removes.
	a.root.ok("PUT", cfg, vals("net3", "virtio,bridge=vmbr0,tag=20"), nil)
	a.withVMAdmin(t) // cloning its own VM needs VM.Clone
	expect(t, a.tenant, []refusal{
		{name: "clone of a VM with a NIC on a VLAN of vmbr0", source: "Qemu.pm:4494",
			method: "POST", path: "/nodes/" + node + "/qemu/10101/clone", params: []string{"newid", "10103", "pool", a.pool}, status: 403, msg: deny(vmbr0 + "/20")},
		{name: "replacing that NIC (PUT: the worker's check answers the call)", source: "Qemu.pm:2499",
			method: "PUT", path: cfg, params: []string{"net3", "virtio,bridge=tdemov0"}, status: 403, msg: deny(vmbr0 + "/20")},
	})
	expectTasks(t, a.tenant, cfg, []taskRefusal{
		{name: "replacing that NIC", source: "Qemu.pm:2499", params: []string{"net3", "virtio,bridge=tdemov0"}, exit: "Permission check failed (" + vmbr0 + "/20, SDN.Use)"},
		{name: "removing that NIC", source: "Qemu.pm:2381", params: []string{"delete", "net3"}, exit: "Permission check failed (" + vmbr0 + "/20, SDN.Use)"},
	})
	var c map[string]any
	a.root.ok("GET", cfg, nil, &c)
	if c["net3"] == nil || parseNet(c["net3"].(string))["tag"] != "20" {
		t.Fatalf("the refused updates changed net3: %v", c["net3"])
	}
	if got := trunkVLANs("1-3;10;7-5"); len(got) != 5 || got[0] != "1" || got[1] != "10" || got[4] != "7" {
		t.Fatalf("trunkVLANs = %v, want [1 10 2 3 7]", got)
	}
}

// Case 2: $check_vm_modify_config_perm (Qemu.pm:995) and the device checks.
func TestConformanceModifyConfigPerm(t *testing.T) {
	_, a, _ := vmConformanceSetup(t)
	cfg := "/nodes/" + node + "/qemu/10101/config"
	// With the role onboarding grants (ADR-0013) every device is refused at VM.Config.HWType.
	expectTasks(t, a.tenant, cfg, []taskRefusal{{name: "a USB mapping under DeevnetTenantVM", source: "Qemu.pm:995",
		params: []string{"usb0", "mapping=dongle"}, exit: "Permission check failed (/vms/10101, VM.Config.HWType)"}})
	a.withVMAdmin(t) // the device checks sit behind VM.Config.HWType
	root := func(opt string) string { return "only root can set '" + opt + "' config\n" }
	sysModify := "Permission check failed (/, Sys.Modify)\n"
	expect(t, a.tenant, []refusal{
		{name: "hookscript (in no group)", source: "Qemu.pm:1037", method: "POST", path: cfg, params: []string{"hookscript", "local:snippets/hook.sh"}, status: 500, msg: root("hookscript")},
		{name: "args", source: "Qemu.pm:1037", method: "POST", path: cfg, params: []string{"args", "-no-reboot"}, status: 500, msg: root("args")},
		{name: "affinity (not a CPU option)", source: "Qemu.pm:1037", method: "PUT", path: cfg, params: []string{"affinity", "0-1"}, status: 500, msg: root("affinity")},
		{name: "deleting args", source: "Qemu.pm:2196", method: "POST", path: cfg, params: []string{"delete", "args"}, status: 500, msg: root("args")},
		{name: "startup", source: "Qemu.pm:1018", method: "POST", path: cfg, params: []string{"startup", "order=1"}, status: 403, msg: sysModify},
		{name: "deleting startup", source: "Qemu.pm:1018", method: "POST", path: cfg, params: []string{"delete", "startup"}, status: 403, msg: sysModify},
		{name: "skiplock", source: "Qemu.pm:2093", method: "POST", path: cfg, params: []string{"name", "x", "skiplock", "1"}, status: 400,
			errors: map[string]string{"skiplock": "Only root may use this option."}},
		{name: "a real serial port at create", source: "Qemu.pm:875", method: "POST", path: "/nodes/" + node + "/qemu",
			params: []string{"vmid", "10104", "pool", a.pool, "serial0", "/dev/ttyS0"}, status: 500, msg: "only root can set 'serial0' config for real devices\n"},
		{name: "a host USB device at create", source: "Qemu.pm:894", method: "POST", path: "/nodes/" + node + "/qemu",
			params: []string{"vmid", "10104", "pool", a.pool, "usb0", "host=1-2"}, status: 500, msg: "only root can set 'usb0' config for real devices\n"},
		{name: "a hookscript at create", source: "Qemu.pm:1037", method: "POST", path: "/nodes/" + node + "/qemu",
			params: []string{"vmid", "10104", "pool", a.pool, "hookscript", "local:snippets/hook.sh"}, status: 500, msg: root("hookscript")},
		{name: "a host PCI device (PUT: the worker's check answers the call)", source: "Qemu.pm:925", method: "PUT", path: cfg,
			params: []string{"hostpci0", "0000:01:00.0"}, status: 500, msg: "only root can set 'hostpci0' config for non-mapped devices\n"},
	})
	expectTasks(t, a.tenant, cfg, []taskRefusal{
		{name: "a real serial port", source: "Qemu.pm:2460", params: []string{"serial1", "/dev/ttyS0"}, exit: "only root can modify 'serial1' config for real devices"},
		{name: "a host USB device", source: "Qemu.pm:894", params: []string{"usb0", "host=1-2"}, exit: "only root can set 'usb0' config for real devices"},
		{name: "a USB mapping", source: "Qemu.pm:898", params: []string{"usb0", "mapping=dongle"}, exit: "Permission check failed (/mapping/usb/dongle, Mapping.Use)"},
		{name: "a host PCI device", source: "Qemu.pm:925", params: []string{"hostpci0", "0000:01:00.0"}, exit: "only root can set 'hostpci0' config for non-mapped devices"},
		{name: "a PCI mapping", source: "Qemu.pm:927", params: []string{"hostpci0", "mapping=gpu"}, exit: "Permission check failed (/mapping/pci/gpu, Mapping.Use)"},
		{name: "the host's hardware RNG", source: "Qemu.pm:962", params: []string{"rng0", "source=/dev/hwrng"}, exit: "Permission check failed (/mapping/hwrng, Mapping.Use)"},
	})
	// What the grants allow: a serial socket, a SPICE USB port, the groups PVEVMAdmin holds.
	if _, exit := a.tenant.task("POST", cfg, vals("serial1", "socket", "usb0", "spice", "cores", "4", "memory", "4096", "description", "d", "freeze", "1")); exit != "OK" {
		t.Fatalf("allowed options: %s", exit)
	}
	// root may (and the root@pam!sim token, privsep=0, holds Sys.Modify on /)
	a.root.ok("PUT", cfg, vals("startup", "order=1"), nil)
	// the worker's refusal left the config as it was
	var c map[string]any
	a.root.ok("GET", cfg, nil, &c)
	if c["hostpci0"] != nil || c["rng0"] != nil || c["usb0"] != "spice" {
		t.Fatalf("refused devices reached the config: %v", c)
	}
	// A clone checks the source's mapped devices (Qemu.pm:4492, QemuServer.pm check_mapping_access).
	a.root.ok("PUT", cfg, vals("usb1", "mapping=dongle"), nil)
	expect(t, a.tenant, []refusal{{name: "clone of a VM with a mapped USB device", source: "Qemu.pm:4492",
		method: "POST", path: "/nodes/" + node + "/qemu/10101/clone", params: []string{"newid", "10110", "pool", a.pool},
		status: 403, msg: "Permission check failed (/mapping/usb/dongle, Mapping.Use)\n"}})
}

// Case 3: $check_storage_access (Qemu.pm:163) and check_volume_access (Storage.pm:619) on create
// and update; $check_storage_access_clone (Qemu.pm:282) on clone.
func TestConformanceStorageAccess(t *testing.T) {
	_, a, _ := vmConformanceSetup(t)
	cfg := "/nodes/" + node + "/qemu/10101/config"
	create := "/nodes/" + node + "/qemu"
	perm := func(path, privs string) string { return "Permission check failed (" + path + ", " + privs + ")\n" }
	space := "Datastore.AllocateSpace"
	expect(t, a.tenant, []refusal{
		{name: "a new disk on a storage without AllocateSpace", source: "Qemu.pm:189", method: "POST", path: cfg,
			params: []string{"scsi1", "local:1"}, status: 403, msg: perm("/storage/local", space)},
		{name: "another tenant's disk", source: "Storage.pm:646", method: "POST", path: cfg,
			params: []string{"scsi1", "local-lvm:vm-10201-disk-0"}, status: 403, msg: perm("/vms/10201", "VM.Config.Disk")},
		{name: "another tenant's disk as an unused volume", source: "Qemu.pm:272; Storage.pm:646", method: "POST", path: cfg,
			params: []string{"unused0", "local-lvm:vm-10201-disk-0"}, status: 403, msg: perm("/vms/10201", "VM.Config.Disk")},
		{name: "importing another tenant's disk", source: "Qemu.pm:250", method: "POST", path: cfg,
			params: []string{"scsi1", "local-lvm:0,import-from=local-lvm:vm-10201-disk-0"}, status: 403, msg: perm("/vms/10201", "VM.Clone")},
		{name: "a host path", source: "Storage.pm:651", method: "POST", path: cfg,
			params: []string{"scsi1", "/dev/sdb"}, status: 500, msg: "Only root can pass arbitrary filesystem paths." + perlWhere},
		{name: "an ISO on a storage it cannot read", source: "Storage.pm:634", method: "POST", path: cfg,
			params: []string{"ide3", "local:iso/tools.iso,media=cdrom"}, status: 403, msg: perm("/storage/local", "Datastore.AllocateSpace|Datastore.Audit")},
		{name: "an ISO through the cdrom alias", source: "Qemu.pm:86; Storage.pm:634", method: "POST", path: cfg,
			params: []string{"cdrom", "local:iso/tools.iso"}, status: 403, msg: perm("/storage/local", "Datastore.AllocateSpace|Datastore.Audit")},
		{name: "the host's CD-ROM drive", source: "Qemu.pm:186", method: "POST", path: cfg,
			params: []string{"ide3", "cdrom,media=cdrom"}, status: 403, msg: perm("/", "Sys.Console")},
		{name: "vmstatestorage", source: "Qemu.pm:276", method: "POST", path: cfg,
			params: []string{"vmstatestorage", "ceph"}, status: 403, msg: perm("/storage/ceph", space)},
		{name: "a create's new disk", source: "Qemu.pm:189", method: "POST", path: create,
			params: []string{"vmid", "10105", "pool", a.pool, "scsi0", "ceph:4"}, status: 403, msg: perm("/storage/ceph", space)},
		{name: "another tenant's disk at create", source: "Qemu.pm:1351; Storage.pm:646", method: "POST", path: create,
			params: []string{"vmid", "10105", "pool", a.pool, "scsi0", "local-lvm:vm-10201-disk-0"}, status: 403, msg: perm("/vms/10201", "VM.Config.Disk")},
		{name: "a create's default storage", source: "Qemu.pm:1297", method: "POST", path: create,
			params: []string{"vmid", "10105", "pool", a.pool, "storage", "ceph"}, status: 403, msg: perm("/storage/ceph", space)},
		{name: "a create outside its pool", source: "Qemu.pm:1316", method: "POST", path: create,
			params: []string{"vmid", "10105"}, status: 403, msg: "Permission check failed\n"},
		{name: "a restore (not simulated: its checks are not pvesim's)", source: "Qemu.pm:1320",
			method: "POST", path: create, params: []string{"vmid", "10108", "pool", a.pool, "archive", "local:backup/vzdump-qemu-10201-2026_01_01-00_00_00.vma.zst"},
			status: 501, msg: "Method 'POST /nodes/{node}/qemu' with 'archive' (restore) not implemented\n"},
		{name: "a full clone onto a storage without AllocateSpace", source: "Qemu.pm:314", method: "POST", path: "/nodes/" + node + "/qemu/9000/clone",
			params: []string{"newid", "10106", "pool", a.pool, "full", "1", "storage", "ceph"}, status: 403, msg: perm("/storage/ceph", space)},
	})
	// What the grants allow: a create in its pool with a disk on local-lvm and a NIC on its VNet,
	// and its own VM's disk again.
	if _, exit := a.tenant.task("POST", create, vals("vmid", "10107", "pool", a.pool, "scsi0", "local-lvm:2", "net0", "virtio,bridge=tdemov0")); exit != "OK" {
		t.Fatalf("create in its pool: %s", exit)
	}
	var c map[string]any
	a.tenant.ok("GET", cfg, nil, &c)
	if _, exit := a.tenant.task("POST", cfg, vals("scsi0", c["scsi0"].(string))); exit != "OK" {
		t.Fatalf("its own disk: %s", exit)
	}
}

// The parameters PVE keeps to root@pam on the power, destroy and resize calls, and the storage
// check of a resize.
func TestConformanceRootParams(t *testing.T) {
	_, a, _ := vmConformanceSetup(t)
	vm := "/nodes/" + node + "/qemu/10101"
	rootOnly := func(p string) map[string]string { return map[string]string{p: "Only root may use this option."} }
	// root clones into the tenant's pool a VM whose disk is on a storage the tenant has no space on
	if _, exit := a.root.task("POST", "/nodes/"+node+"/qemu/9001/clone", vals("newid", "10109", "pool", a.pool, "full", "1")); exit != "OK" {
		t.Fatalf("root clone onto ceph: %s", exit)
	}
	expect(t, a.tenant, []refusal{
		{name: "start past a lock", source: "Qemu.pm:3575", method: "POST", path: vm + "/status/start", params: []string{"skiplock", "1"}, status: 400, errors: rootOnly("skiplock")},
		{name: "start as a migration target", source: "Qemu.pm:3576", method: "POST", path: vm + "/status/start", params: []string{"migratedfrom", node}, status: 400, errors: rootOnly("migratedfrom")},
		{name: "stop keeping volumes active", source: "Qemu.pm:3739", method: "POST", path: vm + "/status/stop", params: []string{"keepActive", "1"}, status: 400, errors: rootOnly("keepActive")},
		{name: "shut down past a lock", source: "Qemu.pm:3910", method: "POST", path: vm + "/status/shutdown", params: []string{"skiplock", "1"}, status: 400, errors: rootOnly("skiplock")},
		{name: "reset past a lock", source: "Qemu.pm:3839", method: "POST", path: vm + "/status/reset", params: []string{"skiplock", "1"}, status: 400, errors: rootOnly("skiplock")},
		{name: "destroy past a lock", source: "Qemu.pm:2823", method: "DELETE", path: vm, params: []string{"skiplock", "1"}, status: 400, errors: rootOnly("skiplock")},
		{name: "resize past a lock", source: "Qemu.pm:5997", method: "PUT", path: vm + "/resize", params: []string{"disk", "scsi0", "size", "+1G", "skiplock", "1"}, status: 400, errors: rootOnly("skiplock")},
		{name: "resize a disk on a storage without AllocateSpace", source: "Qemu.pm:6025", method: "PUT", path: "/nodes/" + node + "/qemu/10109/resize",
			params: []string{"disk", "scsi0", "size", "+1G"}, status: 403, msg: "Permission check failed (/storage/ceph, Datastore.AllocateSpace)\n"},
	})
	// the same calls without the root-only parameters pass
	if _, exit := a.tenant.task("PUT", vm+"/resize", vals("disk", "scsi0", "size", "+1G")); exit != "OK" {
		t.Fatalf("resize on its storage: %s", exit)
	}
	if _, exit := a.tenant.task("POST", vm+"/status/start", nil); exit != "OK" {
		t.Fatalf("start: %s", exit)
	}
	if _, exit := a.tenant.task("POST", vm+"/status/stop", vals("skiplock", "0")); exit != "OK" {
		t.Fatalf("stop: %s", exit)
	}
	// root's own token is not root@pam
	expect(t, a.root, []refusal{{name: "root's token past a lock", source: "Qemu.pm:3575", method: "POST", path: vm + "/status/start",
		params: []string{"skiplock", "1"}, status: 400, errors: rootOnly("skiplock")}})
}

// A trunk range's end is bounded by the VLAN ACL paths (1-9999): an absurd range costs no more.
func TestTrunkVLANsBounded(t *testing.T) {
	if got := trunkVLANs("9998-2000000000"); len(got) != 2 || got[0] != "9998" || got[1] != "9999" {
		t.Fatalf("trunkVLANs = %v", got)
	}
	if got := trunkVLANs("20000-30000"); len(got) != 1 || got[0] != "20000" {
		t.Fatalf("a range above the bound is still checked: trunkVLANs = %v", got)
	}
}

// PVE's permission check (the schema's `permissions`, checked by the HTTP server before any
// handler) answers first: a tenant is refused storage creation (served for root:
// conformance_storage_test.go) and migration (conformance_migrate_test.go) as by PVE.
func TestConformanceUnservedCallsCheckFirst(t *testing.T) {
	_, a, _ := vmConformanceSetup(t)
	dropTenantPriv(t, a.root, "VM.Migrate") // a token without it (onboarding grants it, ADR-0013)
	migrate := "/nodes/" + node + "/qemu/10101/migrate"
	expect(t, a.tenant, []refusal{
		{name: "migrate its own VM", source: "Qemu.pm migrate_vm permissions", method: "POST", path: migrate, params: []string{"target", "dv02hyp002p03", "online", "1"},
			status: 403, msg: "Permission check failed (/vms/10101, VM.Migrate)\n"},
		{name: "create a storage", source: "API2/Storage/Config.pm create permissions", method: "POST", path: "/storage", params: []string{"storage", "evil", "type", "dir", "path", "/"},
			status: 403, msg: "Permission check failed (/storage, Datastore.Allocate)\n"},
	})
}
