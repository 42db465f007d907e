package pvesim

// POST /nodes/{node}/qemu/{vmid}/migrate: what PVE 9 checks before and during an intra-cluster
// migration, and the VM moving node when nothing refuses it. Sources: qemu-server
// src/PVE/API2/Qemu.pm migrate_vm (the call's checks), src/PVE/QemuMigrate.pm prepare and
// scan_local_volumes (the task's), src/PVE/QemuMigrate/Helpers.pm check_local_resources,
// pve-guest-common src/PVE/AbstractMigrate.pm migrate (how a refusal ends the task), pve-cluster
// src/PVE/Cluster.pm check_node_exists. The permission (VM.Migrate on /vms/{vmid}) is the
// schema's, checked before this handler. pvesim holds no HA resources, replication jobs,
// snapshots or device mappings, so their branches never apply (a mapped device is missing on
// every node, as in a cluster without mappings).

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	// localResourceRe is check_local_resources' last rule: devices that stay with the host.
	localResourceRe = regexp.MustCompile(`^(usb|hostpci|serial|parallel|virtiofs)\d+$`)
	// migratableLocalTypes are the local storage types scan_local_volumes can copy.
	migratableLocalTypes = map[string]bool{"dir": true, "btrfs": true, "zfspool": true, "lvmthin": true, "lvm": true}
)

// migrateAborted is how AbstractMigrate ends a task that prepare or phase1 refused: the reason
// in the log, "migration aborted" as the exit status.
type migrateAborted struct{ reason string }

func (m migrateAborted) Error() string { return "migration aborted" }

func (s *Server) vmMigrate(r *reqCtx) (any, error) {
	node, target := r.params.Str("node"), r.params.Str("target")
	if target == node {
		return nil, paramErr(map[string]string{"target": "target is local node."})
	}
	if !s.nodeExists(target) {
		return nil, plainErr("no such cluster node '%s'", target)
	}
	return rootParams(on(s.getVM, s.vmMigrateChecked), "force", "migration_type", "migration_network")(r)
}

// vmMigrateChecked is migrate_vm from load_config on: the lock, a running VM needing online, then
// the qmigrate task.
func (s *Server) vmMigrateChecked(r *reqCtx, vm *VM) (any, error) {
	if vm.Lock != "" {
		return nil, plainErr("VM is locked (%s)", vm.Lock)
	}
	running := vm.Status == "running"
	if running && !r.params.Bool("online") {
		return nil, plainErr("can't migrate running VM without --online")
	}
	target := r.params.Str("target")
	if err := s.migrateStorages(r, vm, target); err != nil {
		return nil, err
	}
	vm.Lock = "migrate"
	t := s.startTask(r, vm.Node, "qmigrate", strconv.Itoa(vm.VMID), nil)
	t.finish = func() error {
		vm.Lock = ""
		warns, reason := s.migrateRefusal(vm, target, running, r.params)
		t.Log = append(t.Log, warns...)
		if reason != "" {
			t.Log = append(t.Log, "ERROR: migration aborted (duration 00:00:00): "+reason)
			return migrateAborted{reason}
		}
		vm.Node = target
		t.Log = append(t.Log, "migration finished successfully (duration 00:00:00)")
		return nil
	}
	t.abort = func() { vm.Lock = "" }
	return t.UPID, nil
}

// migrateRefusal is why prepare or phase1 refuse the migration ("" when they do not), in their
// order: local devices, the target unreachable over ssh, then the local volumes; warns are the
// lines the volume scan logs before it gives up.
func (s *Server) migrateRefusal(vm *VM, target string, running bool, p Params) (warns []string, reason string) {
	blocking, mapped := localResources(vm.Config)
	if len(blocking) > 0 && (running || !p.Bool("force")) {
		return nil, "can't migrate VM which uses local devices: " + strings.Join(blocking, ", ")
	}
	if len(mapped) > 0 {
		return nil, fmt.Sprintf("can't migrate to '%s': missing mapped devices %s", target, strings.Join(mapped, ", "))
	}
	if s.st.offline(target) != nil {
		return nil, "Can't connect to destination address using public key"
	}
	return s.scanLocalVolumes(vm, running, p.Bool("with-local-disks"))
}

// migrateStorages is migrate_vm's storage checks before its task: with targetstorage, each
// target storage enabled on the target node, Datastore.AllocateSpace on it and VM images in it
// ($check_storage_access_migrate), and VM.Config.Disk unless the map is the identity ("1");
// without, check_storage_availability: every volume's storage enabled on both nodes.
func (s *Server) migrateStorages(r *reqCtx, vm *VM, target string) error {
	ts := r.params.Str("targetstorage")
	if ts == "" || ts == "1" {
		return s.storageAvailability(vm, target)
	}
	if err := s.st.check(r.who, fmt.Sprintf("/vms/%d", vm.VMID), []string{"VM.Config.Disk"}, false); err != nil {
		return err
	}
	for _, entry := range strings.Split(ts, ",") {
		_, sid, mapped := strings.Cut(entry, ":")
		if !mapped {
			sid = entry // one storage id: the map's default
		}
		sc, ok := s.st.Storages[sid]
		if !ok {
			return plainErr("storage '%s' does not exist", sid)
		}
		if err := storageEnabled(sc, target); err != nil {
			return err
		}
		if err := s.st.check(r.who, "/storage/"+sid, []string{"Datastore.AllocateSpace"}, false); err != nil {
			return err
		}
		if !slices.Contains(sc.Content, "images") {
			return plainErr("storage '%s' does not support vm images", sid)
		}
	}
	return nil
}

// storageAvailability is QemuServer.pm check_storage_availability: each volume's storage is
// enabled on this node and on node.
func (s *Server) storageAvailability(vm *VM, node string) error {
	for _, k := range sortedKeys(vm.Config) {
		if !diskKeyRe.MatchString(k) {
			continue
		}
		vol, _ := driveFile(vm.Config[k])
		sid, _, ok := strings.Cut(vol, ":")
		if !ok || strings.HasPrefix(vol, "/") {
			continue // none, cdrom, a path: no storage (parse_volume_id's noerr)
		}
		sc, known := s.st.Storages[sid]
		if !known {
			return plainErr("storage '%s' does not exist", sid)
		}
		for _, n := range []string{vm.Node, node} {
			if err := storageEnabled(sc, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// localResources is check_local_resources: the devices that pin the VM to its host, and the
// mapped ones (a mapping names a device per node).
func localResources(conf map[string]string) (blocking, mapped []string) {
	for _, k := range sortedKeys(conf) {
		v := conf[k]
		f := deviceFields(v, "host")
		switch {
		case strings.HasPrefix(k, "usb") && strings.EqualFold(f["host"], "spice"):
			continue
		case (strings.HasPrefix(k, "usb") || strings.HasPrefix(k, "hostpci")) && f["mapping"] != "",
			strings.HasPrefix(k, "virtiofs"):
			mapped = append(mapped, k)
			continue
		case strings.HasPrefix(k, "serial") && v == "socket":
			continue
		}
		if localResourceRe.MatchString(k) {
			blocking = append(blocking, k)
		}
	}
	return blocking, mapped
}

// scanLocalVolumes is scan_local_volumes for the volumes pvesim knows: what is on shared
// storage stays where it is; what is local must be the VM's own and copyable. PVE's clone
// refusal is a die without a newline: its log line ends with Perl's " at .../QemuMigrate.pm line
// N.", left out here (N moves with every release).
func (s *Server) scanLocalVolumes(vm *VM, running, withLocal bool) (warns []string, reason string) {
	var local []string
	logErr := func(vol, msg string) {
		warns = append(warns, fmt.Sprintf("can't migrate local disk '%s': %s", vol, msg))
	}
	for _, k := range sortedKeys(vm.Config) {
		if !diskKeyRe.MatchString(k) {
			continue
		}
		vol, f := driveFile(vm.Config[k])
		cdrom := f["media"] == "cdrom"
		switch {
		case vol == "none" && cdrom:
			continue
		case vol == "cdrom" && cdrom:
			warns = append(warns, "can't migrate local cdrom drive")
			continue
		case strings.HasPrefix(vol, "/"):
			logErr(vol, "local file/device")
			continue
		}
		sid, _, _ := strings.Cut(vol, ":")
		if s.st.Storages[sid].Shared {
			continue
		}
		if cdrom && !isCloudinitDrive(vm.Config[k]) {
			logErr(vol, "local cdrom image")
			continue
		}
		if _, _, owner, _ := s.volname(vol); owner != vm.VMID {
			logErr(vol, fmt.Sprintf("owned by other VM (owner = VM %d)", owner))
			continue
		}
		if vm.Template && s.baseUsed(vm.VMID, vol) {
			logErr(vol, "referenced by linked clone(s)")
			continue
		}
		if running && !withLocal && !unusedRe.MatchString(k) && !cdrom {
			logErr(vol, "can't live migrate attached local disks without with-local-disks option")
			continue
		}
		local = append(local, vol)
	}
	if len(warns) > 0 {
		return warns, "can't migrate VM - check log"
	}
	for _, vol := range local {
		sid, name, _ := strings.Cut(vol, ":")
		if t := s.st.Storages[sid].Type; !migratableLocalTypes[t] {
			return nil, fmt.Sprintf("Problem found while scanning volumes - can't migrate '%s' - storage type '%s' not supported", vol, t)
		}
		if base, _, linked := strings.Cut(name, "/"); linked {
			return nil, fmt.Sprintf("Problem found while scanning volumes - can't migrate '%s' as it's a clone of '%s'", vol, base)
		}
	}
	return nil, ""
}

// baseUsed is volume_is_base_and_used: another VM's disk is a linked clone of base volume vol.
func (s *Server) baseUsed(vmid int, vol string) bool {
	sid, name, _ := strings.Cut(vol, ":")
	for _, id := range s.sortedVMIDs() {
		if id == vmid {
			continue
		}
		for k, v := range s.st.VMs[id].Config {
			if diskKeyRe.MatchString(k) && strings.HasPrefix(v, sid+":"+name+"/") {
				return true
			}
		}
	}
	return false
}
