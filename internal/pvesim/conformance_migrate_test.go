package pvesim

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Migration (qemu-server src/PVE/API2/Qemu.pm migrate_vm, src/PVE/QemuMigrate.pm prepare and
// scan_local_volumes, pve-guest-common src/PVE/AbstractMigrate.pm migrate): the call's refusals
// with PVE's answer, the task's with its exit status and log, and the VM moving node when
// nothing refuses.
func TestConformanceMigrate(t *testing.T) {
	const target = "dv02hyp003p02"
	s := startSim(t, func(c *Config) {
		c.Nodes = append(c.Nodes, NodeConfig{Name: target, MaxCPU: 16, MaxMem: 1 << 36})
		// quorate with the target offline: a QDevice's vote (quorum.go)
		c.Quorum.QDevice = &QDeviceConfig{Host: "qnetd.test"}
		c.Storages = append(c.Storages, StorageConfig{ID: "ceph", Type: "rbd", Content: []string{"images"}, Shared: true},
			StorageConfig{ID: "scratch", Type: "iscsidirect", Content: []string{"images"}})
		vm := func(id int, conf map[string]string) TemplateConfig {
			return TemplateConfig{VMID: id, Node: node, Name: "mig-" + strconv.Itoa(id), Config: conf}
		}
		c.Templates = append(c.Templates,
			vm(301, map[string]string{"scsi0": "ceph:vm-301-disk-0,size=1G", "ide2": "none,media=cdrom"}),
			vm(302, map[string]string{"scsi0": "local-lvm:vm-302-disk-0,size=1G", "ide2": "local-lvm:vm-302-cloudinit,media=cdrom"}),
			vm(303, map[string]string{"scsi0": "ceph:vm-303-disk-0,size=1G", "serial0": "/dev/ttyS0", "usb0": "host=spice"}),
			vm(304, map[string]string{"scsi0": "ceph:vm-304-disk-0,size=1G", "ide2": "local:iso/tools.iso,media=cdrom"}),
			vm(305, map[string]string{"scsi0": "ceph:vm-305-disk-0,size=1G", "hostpci0": "mapping=gpu"}),
			vm(306, map[string]string{"scsi0": "local-lvm:vm-301-disk-0,size=1G"}),
			vm(307, map[string]string{"scsi0": "ceph:vm-307-disk-0,size=1G"}),
			vm(308, map[string]string{"scsi0": "scratch:vm-308-disk-0,size=1G"}),
		)
	})
	s.mu.Lock()
	s.st.VMs[307].Lock = "backup"
	s.mu.Unlock()
	a := onboard(t, s, "tdemo", 1, "tdemov0", "10001")
	if _, exit := a.tenant.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10101", "name", "tdemo-1", "pool", a.pool)); exit != "OK" {
		t.Fatalf("tdemo's linked clone: %s", exit)
	}
	root := a.root
	mig := func(id string) string { return "/nodes/" + node + "/qemu/" + id + "/migrate" }
	rootOnly := func(p string) map[string]string { return map[string]string{p: "Only root may use this option."} }

	// The call: a tenant without VM.Migrate (onboarding grants it since the tenant's own storage,
	// ADR-0013), then what migrate_vm refuses before its task.
	dropTenantPriv(t, root, "VM.Migrate")
	expect(t, a.tenant, []refusal{{name: "the tenant's own VM", source: "Qemu.pm migrate_vm permissions", method: "POST", path: mig("10101"),
		params: []string{"target", target}, status: 403, msg: "Permission check failed (/vms/10101, VM.Migrate)\n"}})
	expect(t, root, []refusal{
		{name: "to its own node", source: "Qemu.pm migrate_vm: target is local node", method: "POST", path: mig("301"),
			params: []string{"target", node}, status: 400, errors: map[string]string{"target": "target is local node."}},
		{name: "to a node outside the cluster", source: "Cluster.pm check_node_exists", method: "POST", path: mig("301"),
			params: []string{"target", "dv02hyp009p02"}, status: 500, msg: "no such cluster node 'dv02hyp009p02'\n"},
		{name: "force, with root's token (not root@pam)", source: "Qemu.pm migrate_vm force", method: "POST", path: mig("303"),
			params: []string{"target", target, "force", "1"}, status: 400, errors: rootOnly("force")},
		{name: "migration_type", source: "Qemu.pm migrate_vm migration_type", method: "POST", path: mig("301"),
			params: []string{"target", target, "migration_type", "insecure"}, status: 400, errors: rootOnly("migration_type")},
		{name: "migration_network", source: "Qemu.pm migrate_vm migration_network", method: "POST", path: mig("301"),
			params: []string{"target", target, "migration_network", "10.20.10.0/24"}, status: 400, errors: rootOnly("migration_network")},
		{name: "a locked VM", source: "AbstractConfig check_lock", method: "POST", path: mig("307"),
			params: []string{"target", target}, status: 500, msg: "VM is locked (backup)\n"},
		{name: "a VM on another node", source: "QemuConfig load_config", method: "POST", path: "/nodes/" + target + "/qemu/301/migrate",
			params: []string{"target", node}, status: 500, msg: "Configuration file 'nodes/" + target + "/qemu-server/301.conf' does not exist\n"},
	})

	// The task: refusals end it "migration aborted", the reason in its log; the VM stays.
	for _, tc := range []struct {
		name, vmid string
		params     []string
		log        []string
	}{
		{"a host serial device", "303", nil, []string{"ERROR: migration aborted (duration 00:00:00): can't migrate VM which uses local devices: serial0"}},
		{"a mapped PCI device no node maps", "305", nil, []string{"ERROR: migration aborted (duration 00:00:00): can't migrate to '" + target + "': missing mapped devices hostpci0"}},
		{"an ISO on local storage", "304", nil, []string{"can't migrate local disk 'local:iso/tools.iso': local cdrom image",
			"ERROR: migration aborted (duration 00:00:00): can't migrate VM - check log"}},
		{"another VM's local disk", "306", nil, []string{"can't migrate local disk 'local-lvm:vm-301-disk-0': owned by other VM (owner = VM 301)",
			"ERROR: migration aborted (duration 00:00:00): can't migrate VM - check log"}},
		{"a template its linked clones use", "9000", nil, []string{"can't migrate local disk 'local-lvm:base-9000-disk-0': referenced by linked clone(s)",
			"ERROR: migration aborted (duration 00:00:00): can't migrate VM - check log"}},
		{"a local disk on a storage type it cannot copy", "308", nil, []string{"ERROR: migration aborted (duration 00:00:00): Problem found while scanning volumes - " +
			"can't migrate 'scratch:vm-308-disk-0' - storage type 'iscsidirect' not supported"}},
		{"a linked clone on local storage", "10101", nil, []string{"ERROR: migration aborted (duration 00:00:00): Problem found while scanning volumes - " +
			"can't migrate 'local-lvm:base-9000-disk-0/vm-10101-disk-0' as it's a clone of 'base-9000-disk-0'"}},
	} {
		upid, exit := root.task("POST", mig(tc.vmid), vals(append([]string{"target", target}, tc.params...)...))
		if exit != "migration aborted" || !logHas(t, root, upid, tc.log...) {
			t.Errorf("%s: exit %q, want \"migration aborted\" and %q", tc.name, exit, tc.log)
		}
		s.mu.Lock()
		vm := *s.st.VMs[atoiSafe(tc.vmid)]
		s.mu.Unlock()
		if vm.Node != node || vm.Lock != "" {
			t.Errorf("%s: VM %s moved or stayed locked: %+v", tc.name, tc.vmid, vm)
		}
	}

	// A running VM: online is required; attached local disks need with-local-disks.
	if _, exit := root.task("POST", "/nodes/"+node+"/qemu/302/status/start", nil); exit != "OK" {
		t.Fatalf("start 302: %s", exit)
	}
	expect(t, root, []refusal{{name: "running, without online", source: "Qemu.pm migrate_vm check_running", method: "POST", path: mig("302"),
		params: []string{"target", target}, status: 500, msg: "can't migrate running VM without --online\n"}})
	upid, exit := root.task("POST", mig("302"), vals("target", target, "online", "1"))
	if exit != "migration aborted" || !logHas(t, root, upid, "can't migrate local disk 'local-lvm:vm-302-disk-0': can't live migrate attached local disks without with-local-disks option") {
		t.Errorf("live, local disk without with-local-disks: exit %q", exit)
	}
	if _, exit := root.task("POST", mig("302"), vals("target", target, "online", "1", "with-local-disks", "1")); exit != "OK" {
		t.Errorf("live with its local disks: exit %q, want OK", exit)
	}
	var st map[string]any
	root.ok("GET", "/nodes/"+target+"/qemu/302/status/current", nil, &st)
	if st["status"] != "running" {
		t.Errorf("302 on %s after a live migration: %v", target, st)
	}

	// An offline target: the ssh test of prepare fails.
	if err := s.SetNodeOffline(target, "No route to host", time.Minute); err != nil {
		t.Fatal(err)
	}
	upid, exit = root.task("POST", mig("301"), vals("target", target))
	if exit != "migration aborted" || !logHas(t, root, upid, "ERROR: migration aborted (duration 00:00:00): Can't connect to destination address using public key") {
		t.Errorf("to an offline node: exit %q", exit)
	}
	if _, err := s.SetNodeOnline(target, false); err != nil {
		t.Fatal(err)
	}

	// Shared storage only, stopped: the VM moves; the config is read on the target, not the source.
	if _, exit := root.task("POST", mig("301"), vals("target", target, "online", "1")); exit != "OK" {
		t.Fatalf("stopped VM on shared storage: exit %q, want OK", exit)
	}
	root.ok("GET", "/nodes/"+target+"/qemu/301/config", nil, nil)
	expect(t, root, []refusal{{name: "the config left its source", source: "QemuConfig load_config", method: "GET", path: "/nodes/" + node + "/qemu/301/config",
		status: 500, msg: "Configuration file 'nodes/" + node + "/qemu-server/301.conf' does not exist\n"}})
}

// logHas says whether a task's log holds each line.
func logHas(t *testing.T, c *client, upid string, lines ...string) bool {
	t.Helper()
	var l []map[string]any
	c.ok("GET", "/nodes/"+strings.Split(upid, ":")[1]+"/tasks/"+url.PathEscape(upid)+"/log", nil, &l)
	got := map[string]bool{}
	for _, e := range l {
		got[e["t"].(string)] = true
	}
	for _, want := range lines {
		if !got[want] {
			t.Logf("task log %v lacks %q", l, want)
			return false
		}
	}
	return true
}
