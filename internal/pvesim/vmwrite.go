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

	"github.com/deevnet/tenant/internal/pveschema"
)

func (s *Server) vmConfigPost(r *reqCtx, vm *VM) (any, error) { return s.vmConfigWrite(r, vm, true) }

func (s *Server) vmConfigPut(r *reqCtx, vm *VM) (any, error) { return s.vmConfigWrite(r, vm, false) }

func (s *Server) vmConfigWrite(r *reqCtx, vm *VM, async bool) (any, error) {
	if r.params.Bool("skiplock") && !r.who.isRoot() {
		return nil, paramErr(map[string]string{"skiplock": "Only root may use this option."})
	}
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
	// The worker's checks: a refusal fails the task of a POST, the call of a PUT.
	refused := s.workerPerms(r.who, vm, set, dels)
	if refused == nil {
		// create_disks runs after the permission checks, on what they allowed.
		if err := s.storeDrives(vm, set); err != nil {
			return nil, err
		}
	}
	revert := pveschema.SplitList(r.params.Str("revert"))
	apply := func() error {
		if refused != nil {
			return refused
		}
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
		for _, k := range pveschema.SplitList(r.params.Str("delete")) {
			if mi.Parameters.Lookup(k) == nil {
				return nil, nil, paramErr(map[string]string{"delete": fmt.Sprintf("invalid configuration ID '%s'", k)})
			}
			if k == "cdrom" {
				k = "ide2" // the alias (Qemu.pm update_vm_api)
			}
			dels = append(dels, k)
		}
	}
	for k := range r.params {
		if slices.Contains(nonConfig, k) {
			continue
		}
		sv := r.params.Str(k)
		switch {
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
	// $resolve_cdrom_alias (Qemu.pm:86): cdrom is ide2 as a CD-ROM, checked as ide2.
	if v, ok := set["cdrom"]; ok {
		if !strings.Contains(v, "media=") {
			v += ",media=cdrom"
		}
		set["ide2"] = v
		delete(set, "cdrom")
	}
	return set, dels, nil
}

// configPerms is what update_vm_api checks before it forks (Qemu.pm:2196-2204): the option groups of the deleted and of the set options, the volumes of the set
// drives, the networks of the set NICs.
func (s *Server) configPerms(r *reqCtx, vm *VM, set map[string]string, dels []string) error {
	if err := s.st.modifyConfigPerm(r.who, vm.VMID, "", dels); err != nil {
		return err
	}
	if err := s.st.modifyConfigPerm(r.who, vm.VMID, "", sortedKeys(set)); err != nil {
		return err
	}
	if err := s.storageAccess(r.who, vm.VMID, set, ""); err != nil {
		return err
	}
	return s.bridgeAccess(r.who, set)
}

// workerPerms is what update_vm_api's worker checks as it writes each option (Qemu.pm:2340-2505):
// a deleted option by its value, a set one by its old and new value: drives by kind, devices by
// what they pass through, tags, and the network a replaced or removed NIC leaves.
func (s *Server) workerPerms(who principal, vm *VM, set map[string]string, dels []string) error {
	if who.isRoot() {
		return nil
	}
	st := s.st
	for _, k := range dels {
		val, ok := vm.Config[k]
		if !ok {
			if val, ok = vm.Pending[k]; !ok {
				continue // PVE warns "cannot delete '<opt>' - not set in current configuration!"
			}
		}
		var err error
		switch {
		case unusedRe.MatchString(k):
			err = st.checkVMPerm(who, vm.VMID, "", []string{"VM.Config.Disk"}, false)
		case driveNameRe.MatchString(k):
			err = st.drivePerm(who, vm.VMID, val)
		case strings.HasPrefix(k, "serial") && val != "socket":
			err = plainErr("only root can delete '%s' config for real devices", k)
		case deviceRe.MatchString(k):
			err = st.devicePerm(who, vm.VMID, "", k, val)
		case k == "tags":
			err = st.checkVMPerm(who, vm.VMID, "", []string{"VM.Config.Options"}, false)
		case netKeyRe.MatchString(k) && vm.Config[k] != "":
			err = s.bridgeAccess(who, map[string]string{k: vm.Config[k]})
		}
		if err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(set) {
		old, hadOld := vm.Config[k]
		var err error
		switch {
		case driveNameRe.MatchString(k):
			if hadOld {
				err = st.drivePerm(who, vm.VMID, old)
			}
			if err == nil {
				err = st.drivePerm(who, vm.VMID, set[k])
			}
		case strings.HasPrefix(k, "serial"):
			if (hadOld && old != "socket") || set[k] != "socket" {
				err = plainErr("only root can modify '%s' config for real devices", k)
			} else {
				err = st.checkVMPerm(who, vm.VMID, "", []string{"VM.Config.HWType"}, false)
			}
		case deviceRe.MatchString(k):
			if hadOld {
				err = st.devicePerm(who, vm.VMID, "", k, old)
			}
			if err == nil {
				err = st.devicePerm(who, vm.VMID, "", k, set[k])
			}
		case k == "tags":
			err = st.checkVMPerm(who, vm.VMID, "", []string{"VM.Config.Options"}, false)
		case netKeyRe.MatchString(k) && hadOld:
			err = s.bridgeAccess(who, map[string]string{k: old})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var (
	netKeyRe  = regexp.MustCompile(`^net\d+$`)
	diskKeyRe = regexp.MustCompile(`^(scsi|virtio|ide|sata|efidisk|tpmstate|unused)\d+$`)
	ciKeys    = []string{"ciuser", "cipassword", "sshkeys", "nameserver", "searchdomain", "citype", "ciupgrade", "cicustom"}
	hotKeys   = []string{"name", "description", "tags", "onboot", "protection", "startup", "boot", "agent", "ostype", "cores", "memory", "balloon", "cpulimit", "cpuunits", "hotplug"}
	nonConfig = []string{"node", "vmid", "digest", "delete", "revert", "skiplock", "background_delay", "force"}
)

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
	for _, t := range pveschema.SplitList(v) {
		seen[strings.ToLower(t)] = true
	}
	return strings.Join(sortedKeys(seen), ";")
}

var sshKeyRe = regexp.MustCompile(`^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/]+=*( .*)?$`)

// checkBridges fails a start as PVE's tap_plug does when a NIC names a bridge that is neither
// a bridge of the VM's node nor a VNet of the running (applied) SDN config.
func (s *Server) checkBridges(vm *VM) error {
	var bridges []string
	for _, n := range s.cfg.Nodes {
		if n.Name == vm.Node {
			bridges = n.bridges()
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
