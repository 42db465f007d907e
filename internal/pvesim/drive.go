package pvesim

// Drives as qemu-server stores them. A write of a disk key (create or config update) goes
// through PVE's create_disks (API2/Qemu.pm), which parses the value (Drive.pm parse_drive),
// allocates what the special syntaxes ask for, and stores print_drive's string: the volume
// first, then the other options sorted by name, booleans as 1/0, size in PVE's units. A
// takeover compares configs it reads, so the simulator must store that string, not the one sent
// (the Terraform provider, for one, sends "file=...,size=8589934592,iothread=1,").

import (
	"fmt"
	"slices"
	"strings"
)

// pathStorages are the storage types with a file system path: a cloud-init volume there is a
// qcow2 file (vm-<vmid>-cloudinit.qcow2); on the others (lvmthin, zfs, rbd...) it is raw.
var pathStorages = []string{"dir", "nfs", "cifs", "btrfs", "cephfs", "glusterfs"}

// parseDrive is Drive.pm's parse_drive: the property string of disk key k, its volume under
// "file" (the bare item or file=/volume=), booleans as 1/0. The size needs no parsing: every
// stored drive gets its size from the volume (or none), never the one sent.
func (s *Server) parseDrive(k, v string) (map[string]string, error) {
	p := s.schema.Method("/nodes/{node}/qemu/{vmid}/config", "POST").Parameters.Lookup(k)
	if p == nil || p.FormatObject() == nil {
		return nil, fmt.Errorf("invalid drive key '%s'", k)
	}
	d, err := s.schema.ParsePropertyString(k, p.FormatObject(), v)
	if err != nil {
		return nil, fmt.Errorf("drive %s: %w", k, err)
	}
	return d, nil
}

// printDrive is Drive.pm's print_drive (JSONSchema print_property_string): the volume bare and
// first, then every other option as key=value in sorted key order.
func printDrive(d map[string]string) string {
	parts := []string{d["file"]}
	for _, k := range sortedKeys(d) {
		if k != "file" {
			parts = append(parts, k+"="+d[k])
		}
	}
	return strings.Join(parts, ",")
}

// storeDrives rewrites every drive of a config write (set) as create_disks stores it; it runs
// after the permission checks, as create_disks does.
func (s *Server) storeDrives(vm *VM, set map[string]string) error {
	sent := map[string]string{}
	for k, v := range set {
		if diskKeyRe.MatchString(k) {
			sent[k] = v
		}
	}
	for _, k := range sortedKeys(sent) {
		d, err := s.storeDrive(vm, k, sent[k], sent)
		if err != nil {
			return err
		}
		set[k] = d
	}
	return nil
}

// storeDrive is what create_disks stores for disk key k of VM vm given value v. "none" and
// "cdrom" lose their size; "[STORAGE:]cloudinit" allocates vm-<vmid>-cloudinit as a CD-ROM (one
// cloud-init drive per VM); "STORAGE:SIZE" is left to allocDisks (at create); any other volume
// must exist and gets its real size, whatever size was sent.
func (s *Server) storeDrive(vm *VM, k, v string, others map[string]string) (string, error) {
	d, err := s.parseDrive(k, v)
	if err != nil {
		return "", err
	}
	vol := d["file"]
	switch {
	case vol == "" || vol == "none" || vol == "cdrom":
		delete(d, "size")
	case strings.HasSuffix(vol, ":cloudinit") || vol == "cloudinit":
		st := strings.TrimSuffix(vol, "cloudinit")
		st = strings.TrimSuffix(st, ":")
		if err := s.cloudinitFree(vm, k, others); err != nil {
			return "", err
		}
		sc, ok := s.st.Storages[st]
		if !ok {
			return "", plainErr("storage '%s' does not exist", st)
		}
		name := fmt.Sprintf("vm-%d-cloudinit", vm.VMID)
		if slices.Contains(pathStorages, sc.Type) {
			name += "." + firstNonEmpty(d["format"], "qcow2")
		}
		d["file"], d["media"] = st+":"+name, "cdrom"
		delete(d, "format")
		delete(d, "size")
	case newDiskRe.MatchString(vol):
		// allocated by allocDisks at create, which prints it once it has the volume's name
	default:
		size, ok := s.volumeSize(vol)
		if !ok {
			return "", plainErr("volume %s does not exist", vol)
		}
		if size != "" {
			d["size"] = size
		} else {
			delete(d, "size")
		}
	}
	return printDrive(d), nil
}

// cloudinitFree refuses a second cloud-init drive: PVE's "already attached" check over the
// VM's config, its pending changes and the other drives of the same write.
func (s *Server) cloudinitFree(vm *VM, k string, others map[string]string) error {
	for _, c := range []map[string]string{vm.Config, vm.Pending, others} {
		for _, ok := range sortedKeys(c) {
			if ok != k && diskKeyRe.MatchString(ok) && isCloudinitDrive(c[ok]) {
				return plainErr("%s - cloud-init drive is already attached at '%s'", k, ok)
			}
		}
	}
	return nil
}

// isCloudinitDrive is drive_is_cloudinit on a stored value: its volume is [vm-N-]cloudinit.
func isCloudinitDrive(v string) bool {
	vol, _, _ := strings.Cut(v, ",")
	vol = strings.TrimPrefix(vol, "file=")
	_, name, ok := strings.Cut(vol, ":")
	if !ok {
		name = vol
	}
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".qcow2"), ".raw")
	return name == "cloudinit" || (strings.HasPrefix(name, "vm-") && strings.HasSuffix(name, "-cloudinit"))
}

// volumeSize is volume_size_info for the simulator's volumes, which live only in VM configs:
// the size a drive holding volume vol records ("" when it records none), and whether one does.
func (s *Server) volumeSize(vol string) (string, bool) {
	for _, id := range s.sortedVMIDs() {
		vm := s.st.VMs[id]
		for _, c := range []map[string]string{vm.Config, vm.Pending} {
			for _, k := range sortedKeys(c) {
				if !diskKeyRe.MatchString(k) {
					continue
				}
				parts := strings.Split(c[k], ",")
				if strings.TrimPrefix(parts[0], "file=") != vol {
					continue
				}
				for _, p := range parts[1:] {
					if sz, ok := strings.CutPrefix(p, "size="); ok {
						return sz, true
					}
				}
				return "", true
			}
		}
	}
	return "", false
}
