package pvesim

// What PVE checks before a VM's config changes, option by option (qemu-server
// src/PVE/API2/Qemu.pm: $check_vm_modify_config_perm and the serial, usb, hostpci, rng and virtiofs
// checks; RPCEnvironment::check_vm_perm), and which networks a NIC may join (QemuServer.pm
// check_bridge_access, pve-guest-common GuestHelpers.pm check_vnet_access).

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The option groups of $check_vm_modify_config_perm; an option in none of them is root's only.
var (
	cpuOptions     = []string{"cores", "cpu", "runningcpu", "cpulimit", "cpuunits", "numa", "smp", "sockets", "vcpus"}
	memoryOptions  = []string{"memory", "balloon", "shares", "allow-ksm"}
	hwtypeOptions  = []string{"acpi", "hotplug", "kvm", "machine", "runningmachine", "scsihw", "smbios1", "tablet", "vga", "watchdog", "audio0", "rng0"}
	generalOptions = []string{"agent", "autostart", "bios", "description", "keyboard", "localtime", "migrate_downtime", "migrate_speed",
		"name", "onboot", "ostype", "protection", "reboot", "startdate", "startup", "tdf", "template"}
	vmpowerOptions   = []string{"freeze"}
	diskOptions      = []string{"boot", "bootdisk", "vmstatestorage"}
	cloudinitOptions = []string{"cicustom", "cipassword", "citype", "ciuser", "ciupgrade", "nameserver", "searchdomain", "sshkeys"}

	// driveNameRe is PVE::QemuServer::Drive::is_valid_drivename.
	driveNameRe = regexp.MustCompile(`^(ide[0-3]|sata[0-5]|scsi([0-9]|[12][0-9]|30)|virtio([0-9]|1[0-5])|efidisk0|tpmstate0)$`)
	// valueCheckedRe are the options whose check depends on their value, done elsewhere.
	valueCheckedRe = regexp.MustCompile(`^(unused|serial|usb|hostpci|virtiofs)\d+$`)
	numaNodeRe     = regexp.MustCompile(`^numa\d+$`)
	ipconfigRe     = regexp.MustCompile(`^ipconfig\d+$`)
)

// checkVMPerm is RPCEnvironment::check_vm_perm: the privileges on the pool, when one is given
// (a create into a pool), else on the VM.
func (st *state) checkVMPerm(who principal, vmid int, pool string, privs []string, any bool) error {
	if pool != "" && st.has(who, "/pool/"+pool, privs, any) {
		return nil
	}
	return st.check(who, "/vms/"+strconv.Itoa(vmid), privs, any)
}

// modifyConfigPerm is $check_vm_modify_config_perm (Qemu.pm:995) for the options keys.
func (st *state) modifyConfigPerm(who principal, vmid int, pool string, keys []string) error {
	if who.isRoot() {
		return nil
	}
	for _, opt := range keys {
		var privs []string
		any := false
		switch {
		case driveNameRe.MatchString(opt) || opt == "cdrom" || valueCheckedRe.MatchString(opt) || opt == "tags":
			continue // checked with their value (drives, devices) or by assert_tag_permissions
		case slices.Contains(cpuOptions, opt) || numaNodeRe.MatchString(opt):
			privs = []string{"VM.Config.CPU"}
		case slices.Contains(memoryOptions, opt):
			privs = []string{"VM.Config.Memory"}
		case slices.Contains(hwtypeOptions, opt):
			privs = []string{"VM.Config.HWType"}
		case slices.Contains(generalOptions, opt):
			privs = []string{"VM.Config.Options"}
		case slices.Contains(vmpowerOptions, opt):
			privs = []string{"VM.PowerMgmt"}
		case slices.Contains(diskOptions, opt):
			privs = []string{"VM.Config.Disk"}
		case netKeyRe.MatchString(opt) || opt == "running-nets-host-mtu":
			privs = []string{"VM.Config.Network"}
		case slices.Contains(cloudinitOptions, opt) || ipconfigRe.MatchString(opt):
			privs, any = []string{"VM.Config.Cloudinit", "VM.Config.Network"}, true
		case opt == "vmstate":
			privs = []string{"VM.Config.Disk", "VM.PowerMgmt"}
		default:
			return plainErr("only root can set '%s' config", opt)
		}
		if err := st.checkVMPerm(who, vmid, pool, privs, any); err != nil {
			return err
		}
		// startup changes the host's behaviour (Qemu.pm:1019)
		if opt == "startup" {
			if err := st.check(who, "/", []string{"Sys.Modify"}, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// deviceFields parses a property string whose bare first value is defaultKey (usb: host,
// hostpci: host, rng: source, virtiofs: dirid).
func deviceFields(v, defaultKey string) map[string]string {
	out := map[string]string{}
	for i, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if !ok && i == 0 {
			k, val = defaultKey, part
		}
		out[k] = val
	}
	return out
}

// devicePerm is the value-dependent check of one serial, usb, hostpci, rng or virtiofs option
// (Qemu.pm:864-993: check_usb_perm, check_hostpci_perm, check_rng_perm, check_dir_perm and, for
// serial ports, the create check).
func (st *state) devicePerm(who principal, vmid int, pool, opt, value string) error {
	if who.isRoot() {
		return nil
	}
	hwtype := []string{"VM.Config.HWType"}
	switch {
	case strings.HasPrefix(opt, "serial"):
		if value != "socket" {
			return plainErr("only root can set '%s' config for real devices", opt)
		}
		return st.checkVMPerm(who, vmid, pool, hwtype, false)
	case strings.HasPrefix(opt, "usb"):
		if err := st.checkVMPerm(who, vmid, pool, hwtype, false); err != nil {
			return err
		}
		return st.passthrough(who, opt, value)
	case strings.HasPrefix(opt, "hostpci"):
		if err := st.passthrough(who, opt, value); err != nil {
			return err
		}
		if err := st.checkVMPerm(who, vmid, pool, hwtype, false); err != nil {
			return err
		}
		if _, ok := deviceFields(value, "host")["romfile"]; ok {
			return paramErr(map[string]string{opt: "only root@pam can set 'romfile' option"})
		}
		return nil
	case strings.HasPrefix(opt, "rng"):
		if err := st.checkVMPerm(who, vmid, pool, hwtype, false); err != nil {
			return err
		}
		if deviceFields(value, "source")["source"] == "/dev/hwrng" {
			return st.check(who, "/mapping/hwrng", []string{"Mapping.Use"}, false)
		}
		return nil
	case strings.HasPrefix(opt, "virtiofs"):
		if err := st.checkVMPerm(who, vmid, pool, []string{"VM.Config.Disk"}, false); err != nil {
			return err
		}
		return st.check(who, "/mapping/dir/"+deviceFields(value, "dirid")["dirid"], []string{"Mapping.Use"}, false)
	}
	return nil
}

// passthrough is the host device part of a usb or hostpci option (Qemu.pm:887-930, QemuServer.pm
// check_mapping_access): a host device is root's (a USB port may be SPICE), a mapped one needs
// Mapping.Use on its mapping.
func (st *state) passthrough(who principal, opt, value string) error {
	kind, what := "pci", "non-mapped devices"
	if strings.HasPrefix(opt, "usb") {
		kind, what = "usb", "real devices"
	}
	d := deviceFields(value, "host")
	switch {
	case kind == "usb" && strings.EqualFold(d["host"], "spice"):
		return nil
	case d["host"] != "":
		return plainErr("only root can set '%s' config for %s", opt, what)
	case d["mapping"] != "":
		return st.check(who, "/mapping/"+kind+"/"+d["mapping"], []string{"Mapping.Use"}, false)
	}
	return plainErr("either 'host' or 'mapping' must be set.")
}

var deviceRe = regexp.MustCompile(`^(serial|usb|hostpci|rng|virtiofs)\d+$`)

// createAllowed is create_vm's first checks (Qemu.pm:1293-1318): the pool exists, the default
// storage and a start after create are allowed, and VM.Allocate on the VM or on its pool.
func (s *Server) createAllowed(r *reqCtx, vmid int, pool string) error {
	// A restore has its own checks (the archive's volume, VM.Backup on an existing VM, the
	// restored NICs and devices); pvesim does not restore, and says so rather than create a VM.
	if r.params.Has("archive") {
		return &apiError{Status: 501, Message: "Method 'POST /nodes/{node}/qemu' with 'archive' (restore) not implemented\n"}
	}
	if pool != "" && s.st.Pools[pool] == nil {
		return &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (pool '%s' does not exist)\n", pool)}
	}
	if r.who.isRoot() {
		return nil
	}
	if st := r.params.Str("storage"); st != "" {
		if err := s.st.check(r.who, "/storage/"+st, []string{"Datastore.AllocateSpace"}, false); err != nil {
			return err
		}
	}
	if r.params.Bool("start") {
		if err := s.st.checkVMPerm(r.who, vmid, pool, []string{"VM.PowerMgmt"}, false); err != nil {
			return err
		}
	}
	if s.st.has(r.who, "/vms/"+strconv.Itoa(vmid), []string{"VM.Allocate"}, false) ||
		pool != "" && s.st.has(r.who, "/pool/"+pool, []string{"VM.Allocate"}, false) {
		return nil
	}
	return &apiError{Status: 403, Message: "Permission check failed\n"}
}

// createPerms is what create_vm checks of its config (Qemu.pm:1348-1364): the volumes, the option
// groups, the devices, then the NICs' networks.
func (s *Server) createPerms(who principal, vmid int, pool string, set map[string]string, storage string) error {
	// The volume checks run for root too: they also refuse storages without images.
	if err := s.storageAccess(who, vmid, set, storage); err != nil {
		return err
	}
	keys := sortedKeys(set)
	if err := s.st.modifyConfigPerm(who, vmid, pool, keys); err != nil {
		return err
	}
	for _, k := range keys {
		if deviceRe.MatchString(k) {
			if err := s.st.devicePerm(who, vmid, pool, k, set[k]); err != nil {
				return err
			}
		}
	}
	return s.bridgeAccess(who, set)
}

// bridgeAccess is QemuServer.pm check_bridge_access: each NIC's network, in option order.
func (s *Server) bridgeAccess(who principal, conf map[string]string) error {
	if who.isRoot() {
		return nil
	}
	for _, k := range sortedKeys(conf) {
		if !netKeyRe.MatchString(k) {
			continue
		}
		f := parseNet(conf[k])
		if f["bridge"] == "" {
			continue
		}
		if err := s.vnetAccess(who, f["bridge"], f["tag"], f["trunks"]); err != nil {
			return err
		}
	}
	return nil
}

// vnetAccess is GuestHelpers.pm check_vnet_access: SDN.Use on /sdn/zones/<zone>/<bridge>/<vlan>
// for the tag and every VLAN of the trunk (a grant on the bridge reaches them only if it
// propagates), or on the bridge itself when the NIC has neither. The zone is the VNet's in the
// current SDN config; a plain bridge is in "localnetwork".
func (s *Server) vnetAccess(who principal, bridge, tag, trunks string) error {
	zone := "localnetwork"
	if v, ok := s.st.SDN.Current["vnets"][bridge]; ok {
		zone = fmt.Sprint(v["zone"])
	}
	path := "/sdn/zones/" + zone + "/" + bridge
	use := []string{"SDN.Use"}
	if tag != "" && tag != "0" {
		if err := s.st.check(who, path+"/"+tag, use, false); err != nil {
			return err
		}
	}
	if trunks != "" {
		for _, vlan := range trunkVLANs(trunks) {
			if err := s.st.check(who, path+"/"+vlan, use, false); err != nil {
				return err
			}
		}
	}
	if (tag == "" || tag == "0") && trunks == "" {
		return s.st.check(who, path, use, false)
	}
	return nil
}

// trunkVLANs is get_tags_from_trunk: ";"-separated VLANs and "a-b" ranges (b > a, else only a),
// in the order PVE checks them: Perl's sort, as strings.
func trunkVLANs(trunks string) []string {
	seen := map[string]bool{}
	for _, part := range strings.Split(trunks, ";") {
		from, to, _ := strings.Cut(part, "-")
		a, errA := strconv.Atoi(from)
		b, errB := strconv.Atoi(to)
		if errA == nil && errB == nil && b > a {
			// VLAN ACL paths end at 9999: a range beyond cannot be granted, and PVE would spend
			// its time (and pvesim its memory) listing it.
			b = max(min(b, 9999), a)
			for v := a; v <= b; v++ {
				seen[strconv.Itoa(v)] = true
			}
			continue
		}
		seen[from] = true
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// mappingAccess is QemuServer.pm check_mapping_access (clone, restore): a passed-through host
// device is root's, a mapped one needs Mapping.Use on its mapping.
func (s *Server) mappingAccess(who principal, conf map[string]string) error {
	if who.isRoot() {
		return nil
	}
	use := []string{"Mapping.Use"}
	for _, k := range sortedKeys(conf) {
		var err error
		switch {
		case (strings.HasPrefix(k, "usb") || strings.HasPrefix(k, "hostpci")) && deviceRe.MatchString(k):
			err = s.st.passthrough(who, k, conf[k])
		case strings.HasPrefix(k, "rng") && deviceRe.MatchString(k):
			if deviceFields(conf[k], "source")["source"] == "/dev/hwrng" {
				err = s.st.check(who, "/mapping/hwrng", use, false)
			}
		case strings.HasPrefix(k, "virtiofs") && deviceRe.MatchString(k):
			err = s.st.check(who, "/mapping/dir/"+deviceFields(conf[k], "dirid")["dirid"], use, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
