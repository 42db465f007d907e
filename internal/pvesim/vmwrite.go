package pvesim

// VM config writes (POST/PUT config): changes, the privileges they need, bridges, NIC normalisation.

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/pvesim/schema"
)

func (s *Server) vmConfigPost(r *reqCtx, vm *VM) (any, error) { return s.vmConfigWrite(r, vm, true) }

func (s *Server) vmConfigPut(r *reqCtx, vm *VM) (any, error) { return s.vmConfigWrite(r, vm, false) }

func (s *Server) vmConfigWrite(r *reqCtx, vm *VM, async bool) (any, error) {
	set, dels, err := s.configChanges(r, vm)
	if err != nil {
		return nil, err
	}
	if len(set) == 0 && len(dels) == 0 && !r.params.Has("revert") {
		return nil, plainErr("no options specified")
	}
	if err := s.configPerms(r, vm, set, dels); err != nil {
		return nil, err
	}
	if d := r.params.Str("digest"); d != "" && d != vmDigest(vm.Config) {
		return nil, plainErr("checksum mismatch (file change by other user?)")
	}
	if vm.Lock != "" && !r.params.Bool("skiplock") {
		return nil, plainErr("VM is locked (%s)", vm.Lock)
	}
	revert := schema.SplitList(r.params.Str("revert"))
	apply := func() error {
		for _, k := range revert {
			delete(vm.Pending, k)
			var keep []string
			for _, d := range vm.PendDel {
				if d != k {
					keep = append(keep, d)
				}
			}
			vm.PendDel = keep
		}
		if vm.Pending == nil {
			vm.Pending = map[string]string{}
		}
		ciKey := func(k string) bool {
			return strings.HasPrefix(k, "ipconfig") || slices.Contains(ciKeys, k) || k == "name" || k == "description" || k == "tags"
		}
		for k, v := range set {
			if vm.Status != "running" || ciKey(k) || slices.Contains(hotKeys, k) {
				vm.Config[k] = v
				delete(vm.Pending, k)
			} else {
				vm.Pending[k] = v
			}
		}
		for _, k := range dels {
			if vm.Status != "running" || ciKey(k) || slices.Contains(hotKeys, k) {
				delete(vm.Config, k)
				delete(vm.Pending, k)
			} else if !slices.Contains(vm.PendDel, k) {
				vm.PendDel = append(vm.PendDel, k)
			}
		}
		if len(vm.Pending) == 0 {
			vm.Pending = nil
		}
		return nil
	}
	if !async {
		return nil, apply()
	}
	t := s.startTask(r, vm.Node, "qmconfig", strconv.Itoa(vm.VMID), apply)
	t.Log = append(t.Log, fmt.Sprintf("update VM %d: %s", vm.VMID, strings.Join(sortedKeys(set), " ")))
	return t.UPID, nil
}

// configChanges validates and normalises a config write; it returns the
// values to set and the keys to delete.
func (s *Server) configChanges(r *reqCtx, vm *VM) (map[string]string, []string, error) {
	set := map[string]string{}
	var dels []string
	mi := s.schema.Method("/nodes/{node}/qemu/{vmid}/config", "POST")
	if r.params.Has("delete") {
		for _, k := range schema.SplitList(r.params.Str("delete")) {
			if mi.Parameters.Lookup(k) == nil {
				return nil, nil, paramErr(map[string]string{"delete": fmt.Sprintf("invalid configuration ID '%s'", k)})
			}
			dels = append(dels, k)
		}
	}
	drives := map[string]string{}
	for k := range r.params {
		if diskKeyRe.MatchString(k) {
			drives[k] = r.params.Str(k)
		}
	}
	for k := range r.params {
		if slices.Contains(nonConfig, k) {
			continue
		}
		sv := r.params.Str(k)
		switch {
		case diskKeyRe.MatchString(k):
			d, err := s.storeDrive(vm, k, sv, drives)
			if err != nil {
				return nil, nil, err
			}
			sv = d
		case netKeyRe.MatchString(k):
			p := mi.Parameters.Lookup(k)
			f, err := s.schema.ParsePropertyString(k, p.FormatObject(), sv)
			if err != nil {
				return nil, nil, paramErr(map[string]string{k: "invalid format - " + err.Error()})
			}
			if old := parseNet(vm.effective()[k]); old["macaddr"] != "" && f["macaddr"] == "" && old["model"] == f["model"] {
				f["macaddr"] = old["macaddr"] // PVE keeps the MAC when the model is unchanged
			}
			sv = s.normalizeNet(f)
		case k == "tags":
			sv = normalizeTags(sv)
		case k == "sshkeys":
			dec, err := url.PathUnescape(sv)
			if err != nil {
				return nil, nil, plainErr("SSH public key validation error")
			}
			for _, line := range strings.Split(dec, "\n") {
				line = strings.TrimSpace(line)
				if line != "" && !strings.HasPrefix(line, "#") && !sshKeyRe.MatchString(line) {
					return nil, nil, plainErr("SSH public key validation error")
				}
			}
		case k == "cipassword":
			// PVE stores a crypt hash; the value never comes back in clear text.
			h := sha1.Sum([]byte(sv))
			sv = "$5$pvesim$" + hex.EncodeToString(h[:])
		}
		set[k] = sv
	}
	return set, dels, nil
}

// configPerms checks the per-option privileges and SDN.Use on new and old bridges.
func (s *Server) configPerms(r *reqCtx, vm *VM, set map[string]string, dels []string) error {
	vmPath := fmt.Sprintf("/vms/%d", vm.VMID)
	cur := vm.effective()
	keys := append(sortedKeys(set), dels...)
	for _, k := range keys {
		if slices.Contains(rootOnly, k) && !r.who.isRoot() {
			return &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (only root can set '%s' config)\n", k)}
		}
		privs, any := optPrivs(k)
		if diskKeyRe.MatchString(k) {
			privs = diskPrivs(set[k], cur[k])
		}
		if privs == nil {
			if !r.who.isRoot() {
				return &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (only root can set '%s' config)\n", k)}
			}
			continue
		}
		if err := s.st.check(r.who, vmPath, privs, any); err != nil {
			return err
		}
		if netKeyRe.MatchString(k) {
			if nv, ok := set[k]; ok {
				if p := s.bridgePath(nv); p != "" {
					if err := s.st.check(r.who, p, []string{"SDN.Use"}, false); err != nil {
						return err
					}
				}
			}
			if ov, ok := cur[k]; ok {
				if p := s.bridgePath(ov); p != "" {
					if err := s.st.check(r.who, p, []string{"SDN.Use"}, false); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

var (
	netKeyRe  = regexp.MustCompile(`^net\d+$`)
	diskKeyRe = regexp.MustCompile(`^(scsi|virtio|ide|sata|efidisk|tpmstate|unused)\d+$`)
	ciKeys    = []string{"ciuser", "cipassword", "sshkeys", "nameserver", "searchdomain", "citype", "ciupgrade", "cicustom"}
	cpuKeys   = []string{"cores", "sockets", "cpu", "cpulimit", "cpuunits", "vcpus", "affinity", "numa"}
	memKeys   = []string{"memory", "balloon", "shares"}
	hwKeys    = []string{"vga", "scsihw", "machine", "bios", "keyboard", "audio0", "rng0", "tablet", "watchdog", "serial0", "serial1", "serial2", "serial3", "usb0", "smbios1", "arch", "tdf", "amd-sev", "intel-tdx", "ivshmem", "kvm", "acpi", "allow-ksm", "hotplug"}
	optKeys   = []string{"name", "description", "onboot", "agent", "ostype", "tags", "protection", "startup", "boot", "bootdisk", "localtime", "startdate", "freeze", "autostart", "reboot", "hookscript", "vmstatestorage", "spice_enhancements", "migrate_speed", "migrate_downtime", "template", "hugepages", "keephugepages"}
	hotKeys   = []string{"name", "description", "tags", "onboot", "protection", "startup", "boot", "agent", "ostype", "cores", "memory", "balloon", "cpulimit", "cpuunits", "hotplug"}
	rootOnly  = []string{"args", "lock", "skiplock"}
	nonConfig = []string{"node", "vmid", "digest", "delete", "revert", "skiplock", "background_delay", "force"}
)

// optPrivs is what PVE checks per changed option (PERMISSIONS.md §3).
func optPrivs(k string) ([]string, bool) {
	switch {
	case netKeyRe.MatchString(k):
		return []string{"VM.Config.Network"}, false
	case strings.HasPrefix(k, "ipconfig") || slices.Contains(ciKeys, k):
		return []string{"VM.Config.Cloudinit", "VM.Config.Network"}, true
	case slices.Contains(cpuKeys, k):
		return []string{"VM.Config.CPU"}, false
	case slices.Contains(memKeys, k):
		return []string{"VM.Config.Memory"}, false
	case k == "boot":
		return []string{"VM.Config.Disk"}, false
	case diskKeyRe.MatchString(k):
		return []string{"VM.Config.Disk"}, false // refined by diskPrivs
	case slices.Contains(hwKeys, k) || strings.HasPrefix(k, "hostpci") || strings.HasPrefix(k, "serial") || strings.HasPrefix(k, "usb"):
		return []string{"VM.Config.HWType"}, false
	case slices.Contains(optKeys, k):
		return []string{"VM.Config.Options"}, false
	}
	return nil, false
}

// diskPrivs: a cloud-init drive needs Cloudinit and CDROM, a CD-ROM needs
// CDROM, anything else Disk (the old value counts when deleting).
func diskPrivs(newV, oldV string) []string {
	v := newV + "," + oldV
	switch {
	case strings.Contains(v, "cloudinit"):
		return []string{"VM.Config.Cloudinit", "VM.Config.CDROM"}
	case strings.Contains(v, "media=cdrom") || strings.HasPrefix(newV, "none") || strings.HasPrefix(newV, "cdrom"):
		return []string{"VM.Config.CDROM"}
	}
	return []string{"VM.Config.Disk"}
}

// bridgePath maps a NIC bridge (+vlan tag) to its SDN ACL path.
func (s *Server) bridgePath(net string) string {
	f := parseNet(net)
	br := f["bridge"]
	if br == "" {
		return ""
	}
	zone := "localnetwork"
	if v, ok := s.st.SDN.Current["vnets"][br]; ok {
		zone = fmt.Sprint(v["zone"])
	}
	p := "/sdn/zones/" + zone + "/" + br
	if t := f["tag"]; t != "" {
		p += "/" + t
	}
	return p
}

// parseNet splits a stored/normalised netN value into fields (model, macaddr, bridge...).
func parseNet(v string) map[string]string {
	out := map[string]string{}
	models := []string{"e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "e1000e", "i82551", "i82557b", "i82559er", "ne2k_isa", "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3"}
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		switch {
		case !ok:
			out["model"] = part
		case slices.Contains(models, k):
			out["model"], out["macaddr"] = k, val
		default:
			out[k] = val
		}
	}
	return out
}

// normalizeNet renders netN as PVE stores it: <model>=<MAC>,bridge=<br>[,rest sorted].
func (s *Server) normalizeNet(fields map[string]string) string {
	if fields["macaddr"] == "" {
		fields["macaddr"] = s.macAddr()
	}
	parts := []string{fields["model"] + "=" + strings.ToUpper(fields["macaddr"])}
	if b := fields["bridge"]; b != "" {
		parts = append(parts, "bridge="+b)
	}
	for _, k := range sortedKeys(fields) {
		if k != "model" && k != "macaddr" && k != "bridge" {
			parts = append(parts, k+"="+fields[k])
		}
	}
	return strings.Join(parts, ",")
}

func normalizeTags(v string) string {
	seen := map[string]bool{}
	for _, t := range schema.SplitList(v) {
		seen[strings.ToLower(t)] = true
	}
	return strings.Join(sortedKeys(seen), ";")
}

var sshKeyRe = regexp.MustCompile(`^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]+=*( .*)?$`)

// checkBridges fails a start as PVE's tap_plug does when a NIC names a bridge that is neither
// a bridge of the VM's node nor a VNet of the running (applied) SDN config.
func (s *Server) checkBridges(vm *VM) error {
	bridges := []string{"vmbr0"}
	for _, n := range s.cfg.Nodes {
		if n.Name == vm.Node && len(n.Bridges) > 0 {
			bridges = n.Bridges
		}
	}
	keys := make([]string, 0, len(vm.Config))
	for k := range vm.Config {
		if strings.HasPrefix(k, "net") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b := parseNet(vm.Config[k])["bridge"]
		if b == "" || slices.Contains(bridges, b) {
			continue
		}
		if _, ok := s.st.SDN.Running["vnets"][b]; ok {
			continue
		}
		return fmt.Errorf("bridge '%s' does not exist", b)
	}
	return nil
}
