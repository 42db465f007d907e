package pvesim

// Which volumes a VM's drives may use and where new ones may be allocated (qemu-server
// src/PVE/API2/Qemu.pm $check_storage_access and $check_storage_access_clone; pve-storage
// src/PVE/Storage.pm check_volume_access).

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	// newDiskVolRe is PVE::QemuServer::Drive::NEW_DISK_RE: "[STORAGE:]SIZE", a volume to allocate.
	newDiskVolRe = regexp.MustCompile(`^(([^/:\s]+):)?(\d+(\.\d+)?)$`)
	// volumeIDRe is PVE::Storage::parse_volume_id: "STORAGE:VOLNAME"; anything else is a path.
	volumeIDRe = regexp.MustCompile(`(?i)^([a-z][a-z0-9\-_.]*[a-z0-9]):(.+)$`)
	// ownerRe finds the owning VMID of an image volume: the last vm-/base-<vmid>- (a linked
	// clone's base-<src>-disk-0/vm-<vmid>-disk-0 belongs to <vmid>).
	ownerRe   = regexp.MustCompile(`(?:^|/)(?:vm|base)-(\d+)-`)
	backupRe  = regexp.MustCompile(`^backup/vzdump-(?:qemu|lxc)-(\d+)-`)
	cloudRe   = regexp.MustCompile(`[:/](?:vm-\d+-)?cloudinit(?:\.(?:raw|qcow2|vmdk))?$`)
	unusedRe  = regexp.MustCompile(`^unused\d+$`)
	perlWhere = " at /usr/share/perl5/PVE/Storage.pm line 651.\n" // the die has no newline: Perl adds where
)

// driveFile is a drive value's volume (the bare first value, or file=/volume=) and its fields.
func driveFile(v string) (string, map[string]string) {
	f := deviceFields(v, "file")
	if vol, ok := f["volume"]; ok && f["file"] == "" {
		f["file"] = vol
	}
	return f["file"], f
}

// volname is what a storage plugin's parse_volname tells of a volume: its content type and owner.
func (s *Server) volname(volid string) (sid, vtype string, owner int, err error) {
	m := volumeIDRe.FindStringSubmatch(volid)
	if m == nil {
		return "", "", 0, nil
	}
	sid, name := m[1], m[2]
	if _, ok := s.st.Storages[sid]; !ok {
		return sid, "", 0, plainErr("storage '%s' does not exist", sid)
	}
	kind, _, _ := strings.Cut(name, "/")
	switch kind {
	case "iso", "vztmpl", "import", "snippets":
		return sid, kind, 0, nil
	case "backup":
		if b := backupRe.FindStringSubmatch(name); b != nil {
			owner, _ = strconv.Atoi(b[1])
		}
		return sid, "backup", owner, nil
	}
	if o := ownerRe.FindAllStringSubmatch(name, -1); o != nil {
		owner, _ = strconv.Atoi(o[len(o)-1][1])
		return sid, "images", owner, nil
	}
	return sid, "", 0, plainErr("unable to parse volume name '%s'", name)
}

// volumeAccess is Storage.pm check_volume_access (line 619): Datastore.Allocate on the storage
// allows any volume; an ISO or template needs AllocateSpace or Audit; the VM's own images pass;
// another VM's need Datastore.Audit and that VM's VM.Config.Disk (its backups, AllocateSpace and
// VM.Backup); a path is root's only.
func (s *Server) volumeAccess(who principal, vmid int, volid, want string) error {
	sid, vtype, owner, err := s.volname(volid)
	if err != nil {
		return err
	}
	if sid == "" {
		if !who.isRoot() {
			return plainErr("%s", "Only root can pass arbitrary filesystem paths."+perlWhere)
		}
		return nil
	}
	if want != "" && vtype != want && (want != "rootdir" || vtype != "images") {
		return plainErr("unable to use volume %s - content type needs to be '%s'", volid, want)
	}
	store := "/storage/" + sid
	if s.st.has(who, store, []string{"Datastore.Allocate"}, false) {
		return nil
	}
	switch {
	case vtype == "iso" || vtype == "vztmpl" || vtype == "import":
		return s.st.check(who, store, []string{"Datastore.AllocateSpace", "Datastore.Audit"}, true)
	case owner != 0 && owner == vmid:
		return nil
	case vtype == "backup" && owner != 0:
		if err := s.st.check(who, store, []string{"Datastore.AllocateSpace"}, false); err != nil {
			return err
		}
		return s.st.check(who, "/vms/"+strconv.Itoa(owner), []string{"VM.Backup"}, false)
	case vtype == "images" && owner != 0:
		if err := s.st.check(who, store, []string{"Datastore.Audit"}, false); err != nil {
			return err
		}
		return s.st.check(who, "/vms/"+strconv.Itoa(owner), []string{"VM.Config.Disk"}, false)
	}
	return plainErr("missing privileges to access %s", volid)
}

// storageAccess is $check_storage_access (Qemu.pm:163) for the drives, unused volumes and
// vmstatestorage of settings, on create (defaultStorage: its "storage") and update.
func (s *Server) storageAccess(who principal, vmid int, settings map[string]string, defaultStorage string) error {
	for _, k := range sortedKeys(settings) {
		if !driveNameRe.MatchString(k) {
			continue
		}
		if err := s.driveAccess(who, vmid, k, settings[k], defaultStorage); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(settings) {
		if !unusedRe.MatchString(k) {
			continue
		}
		volid, _ := driveFile(settings[k])
		if !volumeIDRe.MatchString(volid) {
			return paramErr(map[string]string{k: "not a valid volid: " + volid})
		}
		if err := s.volumeAccess(who, vmid, volid, "images"); err != nil {
			return err
		}
	}
	if st, ok := settings["vmstatestorage"]; ok {
		return s.st.check(who, "/storage/"+st, []string{"Datastore.AllocateSpace"}, false)
	}
	return nil
}

// driveAccess is one drive of $check_storage_access: nothing for none and cloud-init, Sys.Console
// for the host's CD-ROM drive, AllocateSpace for a new volume, volumeAccess for an existing one,
// and the volume it imports from (VM.Clone on its VM).
func (s *Server) driveAccess(who principal, vmid int, opt, value, defaultStorage string) error {
	volid, f := driveFile(value)
	cdrom := f["media"] == "cdrom"
	_, name, _ := strings.Cut(volid, ":")
	switch {
	case volid == "" || volid == "none" || volid == "cloudinit" || name == "cloudinit":
	case cdrom && volid == "cdrom":
		if err := s.st.check(who, "/", []string{"Sys.Console"}, false); err != nil {
			return err
		}
	case !cdrom && newDiskVolRe.MatchString(volid):
		sid := newDiskVolRe.FindStringSubmatch(volid)[2]
		if sid == "" {
			sid = defaultStorage
		}
		if sid == "" {
			return plainErr("no storage ID specified (and no default storage)")
		}
		if err := s.st.check(who, "/storage/"+sid, []string{"Datastore.AllocateSpace"}, false); err != nil {
			return err
		}
		if sc, ok := s.st.Storages[sid]; !ok {
			return plainErr("storage '%s' does not exist", sid)
		} else if !slices.Contains(sc.Content, "images") {
			return paramErr(map[string]string{"storage": fmt.Sprintf("storage '%s' does not support vm images", sid)})
		}
	default:
		if err := s.volumeAccess(who, vmid, volid, ""); err != nil {
			return err
		}
		if _, vtype, _, _ := s.volname(volid); vtype != "" && vtype != "images" && vtype != "iso" {
			return paramErr(map[string]string{opt: "content type needs to be 'images' or 'iso'"})
		}
	}
	src := f["import-from"]
	if src == "" {
		return nil
	}
	sid, vtype, owner, err := s.volname(src)
	if err != nil {
		return err
	}
	if sid != "" && vtype != "images" && vtype != "import" {
		return paramErr(map[string]string{opt: fmt.Sprintf("%s has wrong type '%s' - needs to be 'images' or 'import'", src, vtype)})
	}
	if owner != 0 {
		return s.st.check(who, "/vms/"+strconv.Itoa(owner), []string{"VM.Clone"}, false)
	}
	return s.volumeAccess(who, vmid, src, "")
}

// cloneStorageAccess is $check_storage_access_clone (Qemu.pm:282): AllocateSpace where each disk
// of the source lands (its own storage, or the target storage), Sys.Console for the host's
// CD-ROM drive; CD-ROM and cloud-init volumes are simply allowed.
func (s *Server) cloneStorageAccess(who principal, conf map[string]string, storage string) error {
	for _, k := range sortedKeys(conf) {
		if !driveNameRe.MatchString(k) {
			continue
		}
		volid, f := driveFile(conf[k])
		if volid == "" || volid == "none" {
			continue
		}
		if f["media"] == "cdrom" {
			if volid == "cdrom" {
				if err := s.st.check(who, "/", []string{"Sys.Console"}, false); err != nil {
					return err
				}
			}
			continue
		}
		sid, _, _ := strings.Cut(volid, ":")
		if storage != "" {
			sid = storage
		}
		if err := s.st.check(who, "/storage/"+sid, []string{"Datastore.AllocateSpace"}, false); err != nil {
			return err
		}
	}
	if st, ok := conf["vmstatestorage"]; ok {
		return s.st.check(who, "/storage/"+st, []string{"Datastore.AllocateSpace"}, false)
	}
	return nil
}

// drivePerm is update_vm_api's $check_drive_perms (Qemu.pm:2323): a cloud-init drive needs
// VM.Config.Cloudinit and VM.Config.CDROM, a CD-ROM VM.Config.CDROM, any other drive
// VM.Config.Disk.
func (st *state) drivePerm(who principal, vmid int, value string) error {
	volid, f := driveFile(value)
	switch {
	case cloudRe.MatchString(volid):
		return st.checkVMPerm(who, vmid, "", []string{"VM.Config.Cloudinit", "VM.Config.CDROM"}, false)
	case f["media"] == "cdrom":
		return st.checkVMPerm(who, vmid, "", []string{"VM.Config.CDROM"}, false)
	}
	return st.checkVMPerm(who, vmid, "", []string{"VM.Config.Disk"}, false)
}
