package pvesim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"github.com/deevnet/tenant/internal/pvesim/schema"
	"net/netip"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

func (s *Server) nodeExists(n string) bool {
	for _, x := range s.st.Nodes {
		if x.Name == n {
			return true
		}
	}
	return false
}

// getVM finds a VM on a node with PVE's "config file does not exist" error.
func (s *Server) getVM(r *reqCtx) (*VM, error) {
	node := r.params.Str("node")
	vmid := int(r.params.Int("vmid"))
	vm := s.st.VMs[vmid]
	if vm == nil || vm.Node != node {
		return nil, plainErr("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vmid)
	}
	return vm, nil
}

func (s *Server) version(r *reqCtx) (any, error) {
	return map[string]any{"version": s.cfg.Version, "release": s.cfg.Release, "repoid": "0123abcd"}, nil
}

func (s *Server) nodes(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, n := range s.st.Nodes {
		out = append(out, map[string]any{"node": n.Name, "status": "online", "type": "node", "id": "node/" + n.Name,
			"maxcpu": n.MaxCPU, "maxmem": n.MaxMem, "level": "", "ssl_fingerprint": ""})
	}
	return out, nil
}

func (s *Server) node(r *reqCtx) (any, error) {
	if !s.nodeExists(r.params.Str("node")) {
		return nil, plainErr("no such cluster node '%s'", r.params.Str("node"))
	}
	var out []map[string]string
	for _, c := range []string{"qemu", "sdn", "tasks", "status", "network", "storage"} {
		out = append(out, map[string]string{"name": c})
	}
	return out, nil
}

func (s *Server) clusterStatus(r *reqCtx) (any, error) {
	out := []map[string]any{{"type": "cluster", "id": "cluster", "name": s.cfg.ClusterName, "nodes": len(s.st.Nodes), "quorate": 1, "version": 1}}
	for i, n := range s.st.Nodes {
		out = append(out, map[string]any{"type": "node", "id": "node/" + n.Name, "name": n.Name, "nodeid": i + 1,
			"online": 1, "local": boolInt(i == 0), "ip": fmt.Sprintf("127.0.0.%d", i+1), "level": ""})
	}
	return out, nil
}

func (s *Server) nodeStatus(r *reqCtx) (any, error) {
	name := r.params.Str("node")
	for _, n := range s.st.Nodes {
		if n.Name == name {
			return map[string]any{"uptime": 86400, "pveversion": "pve-manager/" + s.cfg.Version, "kversion": "Linux 6.14.8-2-pve",
				"cpu": 0.02, "loadavg": []string{"0.10", "0.05", "0.01"},
				"cpuinfo": map[string]any{"cpus": n.MaxCPU, "cores": n.MaxCPU, "sockets": 1, "model": "pvesim"},
				"memory":  map[string]any{"total": n.MaxMem, "used": n.MaxMem / 8, "free": n.MaxMem - n.MaxMem/8}}, nil
		}
	}
	return nil, plainErr("no such cluster node '%s'", name)
}

func (s *Server) nextID(r *reqCtx) (any, error) {
	if r.params.Has("vmid") {
		id := int(r.params.Int("vmid"))
		if s.st.VMs[id] != nil {
			return nil, paramErr(map[string]string{"vmid": fmt.Sprintf("VM %d already exists", id)})
		}
		return id, nil
	}
	for id := 100; id < 1000000; id++ {
		if s.st.VMs[id] == nil {
			return id, nil
		}
	}
	return nil, plainErr("unable to get any free VMID in range [100, 1000000]")
}

func (s *Server) resources(r *reqCtx) (any, error) {
	typ := r.params.Str("type")
	out := []map[string]any{}
	if typ == "" || typ == "vm" {
		for _, id := range s.sortedVMIDs() {
			vm := s.st.VMs[id]
			if !s.st.has(r.who, fmt.Sprintf("/vms/%d", id), []string{"VM.Audit"}, false) {
				continue
			}
			o := map[string]any{"id": fmt.Sprintf("qemu/%d", id), "type": "qemu", "vmid": id, "node": vm.Node,
				"name": vm.Config["name"], "status": vm.Status, "template": boolInt(vm.Template),
				"maxcpu": atoiSafe(vm.Config["cores"]), "maxmem": int64(atoiSafe(vm.Config["memory"])) << 20}
			if vm.Pool != "" {
				o["pool"] = vm.Pool
			}
			if vm.Lock != "" {
				o["lock"] = vm.Lock
			}
			if t := vm.Config["tags"]; t != "" {
				o["tags"] = t
			}
			out = append(out, o)
		}
	}
	if typ == "" || typ == "node" {
		for _, n := range s.st.Nodes {
			if s.st.has(r.who, "/nodes/"+n.Name, []string{"Sys.Audit"}, false) {
				out = append(out, map[string]any{"id": "node/" + n.Name, "type": "node", "node": n.Name, "status": "online", "maxcpu": n.MaxCPU, "maxmem": n.MaxMem})
			}
		}
	}
	if typ == "" || typ == "storage" {
		for _, n := range s.st.Nodes {
			for _, sid := range sortedKeys(s.st.Storages) {
				if s.st.has(r.who, "/storage/"+sid, []string{"Datastore.Audit", "Datastore.AllocateSpace"}, true) {
					st := s.st.Storages[sid]
					out = append(out, map[string]any{"id": "storage/" + n.Name + "/" + sid, "type": "storage", "storage": sid,
						"node": n.Name, "status": "available", "plugintype": st.Type, "content": strings.Join(st.Content, ","), "shared": boolInt(st.Shared)})
				}
			}
		}
	}
	if typ == "" || typ == "sdn" {
		for _, n := range s.st.Nodes {
			for _, z := range sortedKeys(s.st.SDN.Current["zones"]) {
				if s.st.has(r.who, "/sdn/zones/"+z, []string{"SDN.Audit"}, false) {
					out = append(out, map[string]any{"id": "sdn/" + n.Name + "/" + z, "type": "sdn", "sdn": z, "node": n.Name, "status": "ok"})
				}
			}
		}
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Server) sortedVMIDs() []int {
	ids := make([]int, 0, len(s.st.VMs))
	for id := range s.st.VMs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

func (s *Server) qemuList(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	out := []map[string]any{}
	for _, id := range s.sortedVMIDs() {
		vm := s.st.VMs[id]
		if vm.Node != node || !s.st.has(r.who, fmt.Sprintf("/vms/%d", id), []string{"VM.Audit"}, false) {
			continue
		}
		o := map[string]any{"vmid": id, "name": vm.Config["name"], "status": vm.Status, "template": boolInt(vm.Template),
			"cpus": atoiSafe(vm.Config["cores"]), "maxmem": int64(atoiSafe(vm.Config["memory"])) << 20}
		if vm.Lock != "" {
			o["lock"] = vm.Lock
		}
		if t := vm.Config["tags"]; t != "" {
			o["tags"] = t
		}
		out = append(out, o)
	}
	return out, nil
}

func (s *Server) vmStatusIndex(r *reqCtx) (any, error) {
	if _, err := s.getVM(r); err != nil {
		return nil, err
	}
	return []map[string]string{{"subdir": "current"}, {"subdir": "start"}, {"subdir": "stop"}, {"subdir": "shutdown"}, {"subdir": "reboot"}, {"subdir": "reset"}}, nil
}

func (s *Server) vmIndex(r *reqCtx) (any, error) {
	if _, err := s.getVM(r); err != nil {
		return nil, err
	}
	var out []map[string]string
	for _, c := range []string{"config", "pending", "status", "clone", "resize", "cloudinit", "template"} {
		out = append(out, map[string]string{"subdir": c})
	}
	return out, nil
}

// ---- config rendering ----

func vmDigest(c map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(c) {
		fmt.Fprintf(&b, "%s: %s\n", k, c[k])
	}
	h := sha1.Sum([]byte(b.String()))
	return hex.EncodeToString(h[:])
}

// renderConfig turns stored strings into PVE's JSON types using the config schema.
func (s *Server) renderConfig(c map[string]string) map[string]any {
	mi := s.schema.Method("/nodes/{node}/qemu/{vmid}/config", "POST")
	out := map[string]any{}
	for k, v := range c {
		p := mi.Parameters.Lookup(k)
		switch {
		case k == "cipassword":
			out[k] = "**********"
		case p != nil && (p.Type == "integer" || p.Type == "boolean"):
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[k] = n
			} else {
				out[k] = v
			}
		case p != nil && p.Type == "number":
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out[k] = f
			} else {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

// effective is the config with pending changes applied (GET config default).
func (vm *VM) effective() map[string]string {
	c := map[string]string{}
	for k, v := range vm.Config {
		c[k] = v
	}
	for k, v := range vm.Pending {
		c[k] = v
	}
	for _, k := range vm.PendDel {
		delete(c, k)
	}
	return c
}

func (s *Server) vmConfigGet(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	c := vm.effective()
	if r.params.Bool("current") {
		c = vm.Config
	}
	out := s.renderConfig(c)
	out["digest"] = vmDigest(vm.Config)
	if vm.Lock != "" {
		out["lock"] = vm.Lock
	}
	return out, nil
}

func (s *Server) vmPending(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range vm.Config {
		keys[k] = true
	}
	for k := range vm.Pending {
		keys[k] = true
	}
	cur := s.renderConfig(vm.Config)
	pend := s.renderConfig(vm.Pending)
	var out []map[string]any
	for _, k := range sortedKeys(keys) {
		o := map[string]any{"key": k}
		if v, ok := cur[k]; ok {
			o["value"] = v
		}
		if v, ok := pend[k]; ok {
			o["pending"] = v
		}
		if contains(vm.PendDel, k) {
			o["delete"] = 1
		}
		out = append(out, o)
	}
	return out, nil
}

// ---- config writes ----

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
	case strings.HasPrefix(k, "ipconfig") || contains(ciKeys, k):
		return []string{"VM.Config.Cloudinit", "VM.Config.Network"}, true
	case contains(cpuKeys, k):
		return []string{"VM.Config.CPU"}, false
	case contains(memKeys, k):
		return []string{"VM.Config.Memory"}, false
	case k == "boot":
		return []string{"VM.Config.Disk"}, false
	case diskKeyRe.MatchString(k):
		return []string{"VM.Config.Disk"}, false // refined by diskPrivs
	case contains(hwKeys, k) || strings.HasPrefix(k, "hostpci") || strings.HasPrefix(k, "serial") || strings.HasPrefix(k, "usb"):
		return []string{"VM.Config.HWType"}, false
	case contains(optKeys, k):
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
		case contains(models, k):
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
	for k, v := range r.params {
		if contains(nonConfig, k) {
			continue
		}
		sv := r.params.Str(k)
		_ = v
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
	return set, dels, nil
}

// configPerms checks the per-option privileges and SDN.Use on new and old bridges.
func (s *Server) configPerms(r *reqCtx, vm *VM, set map[string]string, dels []string) error {
	vmPath := fmt.Sprintf("/vms/%d", vm.VMID)
	cur := vm.effective()
	keys := append(sortedKeys(set), dels...)
	for _, k := range keys {
		if contains(rootOnly, k) && !r.who.isRoot() {
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

func (s *Server) vmConfigWrite(r *reqCtx, async bool) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
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
			return strings.HasPrefix(k, "ipconfig") || contains(ciKeys, k) || k == "name" || k == "description" || k == "tags"
		}
		for k, v := range set {
			if vm.Status != "running" || ciKey(k) || contains(hotKeys, k) {
				vm.Config[k] = v
				delete(vm.Pending, k)
			} else {
				vm.Pending[k] = v
			}
		}
		for _, k := range dels {
			if vm.Status != "running" || ciKey(k) || contains(hotKeys, k) {
				delete(vm.Config, k)
				delete(vm.Pending, k)
			} else if !contains(vm.PendDel, k) {
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

func (s *Server) vmConfigPost(r *reqCtx) (any, error) { return s.vmConfigWrite(r, true) }
func (s *Server) vmConfigPut(r *reqCtx) (any, error)  { return s.vmConfigWrite(r, false) }

// ---- clone ----

func (s *Server) vmClone(r *reqCtx) (any, error) {
	src, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	newid := int(r.params.Int("newid"))
	pool := r.params.Str("pool")
	if pool != "" && s.st.Pools[pool] == nil {
		return nil, &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (pool '%s' does not exist)\n", pool)}
	}
	full := src.Config["template"] != "1" || r.params.Bool("full")
	if !full {
		for _, k := range []string{"storage", "format"} {
			if r.params.Has(k) {
				return nil, plainErr("parameter '%s' not allowed for linked clones", k)
			}
		}
	}
	if st := r.params.Str("storage"); st != "" {
		sc, ok := s.st.Storages[st]
		if !ok {
			return nil, plainErr("storage '%s' does not exist", st)
		}
		if !contains(sc.Content, "images") {
			return nil, paramErr(map[string]string{"storage": fmt.Sprintf("storage '%s' does not support vm images", st)})
		}
	}
	if tgt := r.params.Str("target"); tgt != "" && tgt != src.Node {
		if !s.nodeExists(tgt) {
			return nil, plainErr("no such cluster node '%s'", tgt)
		}
		for k, v := range src.Config {
			if diskKeyRe.MatchString(k) && !strings.Contains(v, "media=cdrom") {
				if sc := s.st.Storages[strings.SplitN(v, ":", 2)[0]]; !sc.Shared {
					return nil, plainErr("can't clone VM to node '%s' (VM uses local storage)", tgt)
				}
			}
		}
	}
	// Permission extras: storage space and SDN.Use on every source NIC bridge.
	if !r.who.isRoot() {
		storages := map[string]bool{}
		if st := r.params.Str("storage"); st != "" {
			storages[st] = true
		} else {
			for k, v := range src.Config {
				if diskKeyRe.MatchString(k) && !strings.Contains(v, "media=cdrom") {
					storages[strings.SplitN(v, ":", 2)[0]] = true
				}
			}
		}
		for _, st := range sortedKeys(storages) {
			if err := s.st.check(r.who, "/storage/"+st, []string{"Datastore.AllocateSpace"}, false); err != nil {
				return nil, err
			}
		}
		for _, k := range sortedKeys(src.Config) {
			if netKeyRe.MatchString(k) {
				if p := s.bridgePath(src.Config[k]); p != "" {
					if err := s.st.check(r.who, p, []string{"SDN.Use"}, false); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if s.st.VMs[newid] != nil {
		return nil, plainErr("unable to create VM %d: config file already exists", newid)
	}
	if src.Lock != "" {
		return nil, plainErr("VM is locked (%s)", src.Lock)
	}
	node := src.Node
	if tgt := r.params.Str("target"); tgt != "" {
		node = tgt
	}
	c := map[string]string{}
	for k, v := range src.Config {
		if k == "template" || strings.HasPrefix(k, "unused") {
			continue
		}
		c[k] = v
	}
	c["name"] = "Copy-of-VM-" + firstNonEmpty(src.Config["name"], strconv.Itoa(src.VMID))
	if n := r.params.Str("name"); n != "" {
		c["name"] = n
	}
	if d := r.params.Str("description"); d != "" {
		c["description"] = d
	}
	for k, v := range c {
		if netKeyRe.MatchString(k) {
			f := parseNet(v)
			f["macaddr"] = ""
			c[k] = s.normalizeNet(f)
		}
		if diskKeyRe.MatchString(k) {
			vol := strings.SplitN(v, ",", 2)
			store := strings.SplitN(vol[0], ":", 2)[0]
			if st := r.params.Str("storage"); st != "" && !strings.Contains(v, "cloudinit") {
				store = st
			}
			kind := "disk-0"
			if strings.Contains(v, "cloudinit") {
				kind = "cloudinit"
			}
			nv := fmt.Sprintf("%s:vm-%d-%s", store, newid, kind)
			if !full && !strings.Contains(v, "cloudinit") {
				nv = fmt.Sprintf("%s:base-%d-disk-0/vm-%d-disk-0", store, src.VMID, newid)
			}
			if len(vol) > 1 {
				nv += "," + vol[1]
			}
			c[k] = nv
		}
	}
	vm := &VM{VMID: newid, Node: node, Status: "stopped", Config: c, Lock: "clone"}
	s.st.VMs[newid] = vm
	t := s.startTask(r, src.Node, "qmclone", strconv.Itoa(src.VMID), func() error {
		vm.Lock = ""
		vm.Pool = pool
		return nil
	})
	t.abort = func() { delete(s.st.VMs, newid) }
	t.Log = append(t.Log, fmt.Sprintf("create %s clone of drive scsi0", map[bool]string{true: "full", false: "linked"}[full]))
	return t.UPID, nil
}

func firstNonEmpty(a ...string) string {
	for _, x := range a {
		if x != "" {
			return x
		}
	}
	return ""
}

// ---- resize ----

var sizeRe = regexp.MustCompile(`^(\+?)(\d+(?:\.\d+)?)([KMGT]?)$`)

func parseSize(v string) (bool, float64) {
	m := sizeRe.FindStringSubmatch(v)
	if m == nil {
		return false, -1
	}
	n, _ := strconv.ParseFloat(m[2], 64)
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[3]]
	return m[1] == "+", n * mult
}

func fmtSize(b float64) string {
	for _, u := range []struct {
		s string
		m float64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.m && b/u.m == float64(int64(b/u.m)) {
			return fmt.Sprintf("%d%s", int64(b/u.m), u.s)
		}
	}
	return fmt.Sprintf("%d", int64(b))
}

func (s *Server) vmResize(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	if d := r.params.Str("digest"); d != "" && d != vmDigest(vm.Config) {
		return nil, plainErr("checksum mismatch (file change by other user?)")
	}
	if vm.Lock != "" && !r.params.Bool("skiplock") {
		return nil, plainErr("VM is locked (%s)", vm.Lock)
	}
	disk := r.params.Str("disk")
	v, ok := vm.Config[disk]
	if !ok {
		return nil, plainErr("disk '%s' does not exist", disk)
	}
	if strings.Contains(v, "media=cdrom") {
		return nil, plainErr("you can't resize a cdrom")
	}
	sizeStr := ""
	for _, part := range strings.Split(v, ",") {
		if x, ok := strings.CutPrefix(part, "size="); ok {
			sizeStr = x
		}
	}
	_, cur := parseSize(sizeStr)
	if cur < 0 {
		cur = 0
	}
	rel, n := parseSize(r.params.Str("size"))
	newSize := n
	if rel {
		newSize = cur + n
	}
	if newSize < cur {
		return nil, plainErr("shrinking disks is not supported")
	}
	apply := func() error {
		parts := strings.Split(vm.Config[disk], ",")
		out := []string{parts[0]}
		done := false
		for _, p := range parts[1:] {
			if strings.HasPrefix(p, "size=") {
				p, done = "size="+fmtSize(newSize), true
			}
			out = append(out, p)
		}
		if !done {
			out = append(out, "size="+fmtSize(newSize))
		}
		vm.Config[disk] = strings.Join(out, ",")
		return nil
	}
	t := s.startTask(r, vm.Node, "resize", strconv.Itoa(vm.VMID), apply)
	return t.UPID, nil
}

// ---- power ----

func (s *Server) vmStatusCurrent(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	o := map[string]any{"status": vm.Status, "qmpstatus": vm.Status, "vmid": vm.VMID, "name": vm.Config["name"],
		"cpus": atoiSafe(firstNonEmpty(vm.Config["cores"], "1")), "maxmem": int64(atoiSafe(firstNonEmpty(vm.Config["memory"], "512"))) << 20,
		"mem": 0, "maxdisk": 0, "uptime": 0, "ha": map[string]any{"managed": 0}}
	if vm.Status == "running" {
		o["uptime"] = time.Now().Unix() - vm.Started
		o["pid"] = 10000 + vm.VMID
		o["mem"] = int64(atoiSafe(firstNonEmpty(vm.Config["memory"], "512"))) << 19
	}
	if vm.Lock != "" {
		o["lock"] = vm.Lock
	}
	if t := vm.Config["tags"]; t != "" {
		o["tags"] = t
	}
	if vm.Template {
		o["template"] = 1
	}
	if strings.HasPrefix(vm.Config["agent"], "1") || strings.Contains(vm.Config["agent"], "enabled=1") {
		o["agent"] = 1
	}
	return o, nil
}

func (s *Server) vmPower(action string) handlerFunc {
	return func(r *reqCtx) (any, error) {
		vm, err := s.getVM(r)
		if err != nil {
			return nil, err
		}
		if vm.Lock != "" && !r.params.Bool("skiplock") {
			return nil, plainErr("VM is locked (%s)", vm.Lock)
		}
		if (action == "reboot" || action == "reset") && vm.Status != "running" {
			return nil, plainErr("VM %d not running", vm.VMID)
		}
		if action == "start" && vm.Config["template"] == "1" {
			return nil, plainErr("you can't start a vm if it's a template")
		}
		id := strconv.Itoa(vm.VMID)
		t := s.startTask(r, vm.Node, "qm"+action, id, func() error {
			switch action {
			case "start":
				if vm.Status == "running" {
					return fmt.Errorf("VM %d already running", vm.VMID)
				}
				vm.Status, vm.Started = "running", time.Now().Unix()
				// pending changes are applied at start
				for k, v := range vm.Pending {
					vm.Config[k] = v
				}
				for _, k := range vm.PendDel {
					delete(vm.Config, k)
				}
				vm.Pending, vm.PendDel = nil, nil
				if err := s.checkBridges(vm); err != nil {
					vm.Status, vm.Started = "stopped", 0
					return err
				}
			case "stop", "shutdown":
				vm.Status = "stopped"
			case "reboot", "reset":
				vm.Started = time.Now().Unix()
			}
			return nil
		})
		return t.UPID, nil
	}
}

func (s *Server) vmTemplate(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	if vm.Status == "running" {
		return nil, plainErr("you can't convert a running VM to a template")
	}
	t := s.startTask(r, vm.Node, "qmtemplate", strconv.Itoa(vm.VMID), func() error {
		vm.Config["template"], vm.Template = "1", true
		return nil
	})
	return t.UPID, nil
}

// ---- delete ----

func (s *Server) vmDelete(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	if vm.Status == "running" {
		return nil, plainErr("VM %d is running - destroy failed", vm.VMID)
	}
	if vm.Config["protection"] == "1" {
		return nil, plainErr("can't remove VM %d - protection mode enabled", vm.VMID)
	}
	purge := r.params.Bool("purge")
	t := s.startTask(r, vm.Node, "qmdestroy", strconv.Itoa(vm.VMID), func() error {
		if vm.Lock != "" && !r.params.Bool("skiplock") {
			return fmt.Errorf("VM is locked (%s)", vm.Lock)
		}
		if vm.Template {
			for _, o := range s.st.VMs {
				for _, v := range o.Config {
					if strings.Contains(v, fmt.Sprintf("base-%d-disk", vm.VMID)) && o.VMID != vm.VMID {
						return fmt.Errorf("base volume is used by linked clone VM %d", o.VMID)
					}
				}
			}
		}
		delete(s.st.VMs, vm.VMID)
		// VM-specific ACLs go with the VM; pool membership too (purge or not,
		// as PVE 9 removes it at destroy).
		var keep []ACL
		for _, a := range s.st.ACLs {
			if a.Path != fmt.Sprintf("/vms/%d", vm.VMID) {
				keep = append(keep, a)
			}
		}
		s.st.ACLs = keep
		_ = purge
		return nil
	})
	t.Log = append(t.Log, fmt.Sprintf("destroy VM %d", vm.VMID))
	return t.UPID, nil
}

// ---- tasks ----

func (s *Server) taskFor(r *reqCtx) (*Task, error) {
	upid := r.params.Str("upid")
	if !upidRe.MatchString(upid) {
		return nil, paramErr(map[string]string{"upid": "unable to parse worker upid"})
	}
	t := s.st.Tasks[upid]
	if t == nil {
		return nil, paramErr(map[string]string{"upid": "no such task"})
	}
	owner := t.User == r.who.User && (r.who.TokenID == "" || r.who.TokenID == t.TokenID)
	if !owner && !r.who.isRoot() {
		if err := s.st.check(r.who, "/nodes/"+t.Node, []string{"Sys.Audit"}, false); err != nil {
			return nil, err
		}
	}
	return t, nil
}

var upidRe = regexp.MustCompile(`^UPID:([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s]+):([^:\s]*):([^:\s]+):$`)

func (s *Server) taskStatus(r *reqCtx) (any, error) {
	t, err := s.taskFor(r)
	if err != nil {
		return nil, err
	}
	o := map[string]any{"upid": t.UPID, "node": t.Node, "pid": t.PID, "pstart": t.PStart, "starttime": t.StartTime,
		"type": t.Type, "id": t.ID, "user": t.User, "status": t.Status}
	if t.TokenID != "" {
		o["tokenid"] = t.TokenID
	}
	if t.Status == "stopped" {
		o["exitstatus"] = t.ExitStatus
	}
	return o, nil
}

func (s *Server) taskLog(r *reqCtx) (any, error) {
	t, err := s.taskFor(r)
	if err != nil {
		return nil, err
	}
	start := int(r.params.Int("start"))
	limit := 50
	if r.params.Has("limit") {
		limit = int(r.params.Int("limit"))
	}
	out := []map[string]any{}
	for i := start; i < len(t.Log) && len(out) < limit; i++ {
		out = append(out, map[string]any{"n": i + 1, "t": t.Log[i]})
	}
	return out, nil
}

func (s *Server) taskIndex(r *reqCtx) (any, error) {
	if _, err := s.taskFor(r); err != nil {
		return nil, err
	}
	return []map[string]string{{"name": "log"}, {"name": "status"}}, nil
}

func (s *Server) taskStop(r *reqCtx) (any, error) {
	t, err := s.taskFor(r)
	if err != nil {
		return nil, err
	}
	if t.Status == "running" {
		t.Status, t.ExitStatus, t.EndTime = "stopped", "interrupted by signal", time.Now().Unix()
		if t.abort != nil {
			t.abort()
		}
	}
	return nil, nil
}

func (s *Server) taskList(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	out := []map[string]any{}
	for i := len(s.st.TaskSeq) - 1; i >= 0; i-- {
		t := s.st.Tasks[s.st.TaskSeq[i]]
		if t == nil || (node != "" && t.Node != node) {
			continue
		}
		owner := t.User == r.who.User && (r.who.TokenID == "" || r.who.TokenID == t.TokenID)
		if !owner && !s.st.has(r.who, "/nodes/"+t.Node, []string{"Sys.Audit"}, false) {
			continue
		}
		o := map[string]any{"upid": t.UPID, "node": t.Node, "pid": t.PID, "pstart": t.PStart, "starttime": t.StartTime, "type": t.Type, "id": t.ID, "user": t.User}
		if t.Status == "stopped" {
			o["status"], o["endtime"] = t.ExitStatus, t.EndTime
		}
		out = append(out, o)
	}
	return out, nil
}

// vmCloudinit lists the cloud-init keys: value for the current drive, pending for the next.
func (s *Server) vmCloudinit(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	eff := vm.effective()
	for _, k := range sortedKeys(eff) {
		if !strings.HasPrefix(k, "ipconfig") && !contains(ciKeys, k) {
			continue
		}
		v := eff[k]
		if k == "cipassword" {
			v = "**********"
		}
		out = append(out, map[string]any{"key": k, "value": v})
	}
	return out, nil
}

var newDiskRe = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9._-]*[a-zA-Z0-9]):(\d+(?:\.\d+)?)(,.*)?$`)

// vmCreate is POST /nodes/{node}/qemu: a new VM from config parameters;
// "STORAGE:SIZE" disks are allocated as vm-<id>-disk-<n>.
func (s *Server) vmCreate(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	if !s.nodeExists(node) {
		return nil, plainErr("no such cluster node '%s'", node)
	}
	vmid := int(r.params.Int("vmid"))
	pool := r.params.Str("pool")
	if !r.who.isRoot() {
		if !s.st.has(r.who, fmt.Sprintf("/vms/%d", vmid), []string{"VM.Allocate"}, false) &&
			(pool == "" || !s.st.has(r.who, "/pool/"+pool, []string{"VM.Allocate"}, false)) {
			return nil, permError(fmt.Sprintf("/vms/%d", vmid), []string{"VM.Allocate"})
		}
	}
	if pool != "" && s.st.Pools[pool] == nil {
		return nil, &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (pool '%s' does not exist)\n", pool)}
	}
	if s.st.VMs[vmid] != nil {
		return nil, plainErr("unable to create VM %d: config file already exists", vmid)
	}
	tmp := &VM{VMID: vmid, Node: node, Status: "stopped", Config: map[string]string{}}
	skip := []string{"pool", "start", "unique", "archive", "storage", "force", "live-restore", "bwlimit", "import-working-storage"}
	sub := &reqCtx{method: r.method, template: r.template, path: r.path, vars: r.vars, params: Params{}, who: r.who}
	for k, v := range r.params {
		if !contains(skip, k) {
			sub.params[k] = v
		}
	}
	set, _, err := s.configChanges(sub, tmp)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, k := range sortedKeys(set) {
		v := set[k]
		if !diskKeyRe.MatchString(k) {
			continue
		}
		if m := newDiskRe.FindStringSubmatch(v); m != nil {
			st, ok := s.st.Storages[m[1]]
			if !ok {
				return nil, plainErr("storage '%s' does not exist", m[1])
			}
			if !contains(st.Content, "images") {
				return nil, paramErr(map[string]string{k: fmt.Sprintf("storage '%s' does not support vm images", m[1])})
			}
			if !r.who.isRoot() {
				if err := s.st.check(r.who, "/storage/"+m[1], []string{"Datastore.AllocateSpace"}, false); err != nil {
					return nil, err
				}
			}
			set[k] = fmt.Sprintf("%s:vm-%d-disk-%d,size=%sG", m[1], vmid, n, m[2]) + m[3]
			n++
		}
	}
	if !r.who.isRoot() {
		for _, k := range sortedKeys(set) {
			if netKeyRe.MatchString(k) {
				if p := s.bridgePath(set[k]); p != "" {
					if err := s.st.check(r.who, p, []string{"SDN.Use"}, false); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	tmp.Config, tmp.Lock = set, "create"
	s.st.VMs[vmid] = tmp
	t := s.startTask(r, node, "qmcreate", strconv.Itoa(vmid), func() error {
		tmp.Lock, tmp.Pool = "", pool
		return nil
	})
	t.abort = func() { delete(s.st.VMs, vmid) }
	return t.UPID, nil
}

func (s *Server) vmCloudinitRegen(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	if vm.Lock != "" {
		return nil, plainErr("VM is locked (%s)", vm.Lock)
	}
	return nil, nil
}

// vmCloudinitDump renders the generated user/network/meta data (nocloud).
func (s *Server) vmCloudinitDump(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	c := vm.effective()
	var b strings.Builder
	switch r.params.Str("type") {
	case "user":
		b.WriteString("#cloud-config\n")
		fmt.Fprintf(&b, "hostname: %s\nmanage_etc_hosts: true\n", firstNonEmpty(c["name"], "VM"+strconv.Itoa(vm.VMID)))
		if u := c["ciuser"]; u != "" {
			fmt.Fprintf(&b, "user: %s\n", u)
		}
		if c["cipassword"] != "" {
			fmt.Fprintf(&b, "password: %s\n", c["cipassword"])
		}
		if k := c["sshkeys"]; k != "" {
			dec, _ := url.PathUnescape(k)
			b.WriteString("ssh_authorized_keys:\n")
			for _, l := range strings.Split(dec, "\n") {
				if strings.TrimSpace(l) != "" {
					fmt.Fprintf(&b, "  - %s\n", strings.TrimSpace(l))
				}
			}
		}
		b.WriteString("chpasswd:\n  expire: False\n")
	case "network":
		b.WriteString("version: 1\nconfig:\n")
		for _, k := range sortedKeys(c) {
			if !netKeyRe.MatchString(k) {
				continue
			}
			idx := strings.TrimPrefix(k, "net")
			f := parseNet(c[k])
			fmt.Fprintf(&b, "    - type: physical\n      name: eth%s\n      mac_address: '%s'\n", idx, strings.ToLower(f["macaddr"]))
			ipc := map[string]string{}
			for _, part := range strings.Split(c["ipconfig"+idx], ",") {
				if kk, vv, ok := strings.Cut(part, "="); ok {
					ipc[kk] = vv
				}
			}
			if ip := ipc["ip"]; ip != "" && ip != "dhcp" {
				fmt.Fprintf(&b, "      subnets:\n      - type: static\n        address: '%s'\n", ip)
				if gw := ipc["gw"]; gw != "" {
					fmt.Fprintf(&b, "        gateway: '%s'\n", gw)
				}
			} else {
				b.WriteString("      subnets:\n      - type: dhcp4\n")
			}
		}
		if ns := c["nameserver"]; ns != "" {
			b.WriteString("    - type: nameserver\n      address:\n")
			for _, a := range schema.SplitList(ns) {
				fmt.Fprintf(&b, "      - '%s'\n", a)
			}
			if sd := c["searchdomain"]; sd != "" {
				b.WriteString("      search:\n")
				for _, d := range schema.SplitList(sd) {
					fmt.Fprintf(&b, "      - '%s'\n", d)
				}
			}
		}
	default:
		fmt.Fprintf(&b, "instance-id: %s\n", vmDigest(c))
	}
	return b.String(), nil
}

// vmAgentInterfaces answers like a guest agent that applied the cloud-init
// network config: eth<N> with the MAC of net<N> and the static ipconfig<N>.
func (s *Server) vmAgentInterfaces(r *reqCtx) (any, error) {
	vm, err := s.getVM(r)
	if err != nil {
		return nil, err
	}
	if a := vm.Config["agent"]; a == "" || strings.HasPrefix(a, "0") || strings.Contains(a, "enabled=0") {
		return nil, plainErr("No QEMU guest agent configured")
	}
	if vm.Status != "running" {
		return nil, plainErr("VM %d is not running", vm.VMID)
	}
	ifaces := []map[string]any{{"name": "lo", "hardware-address": "00:00:00:00:00:00",
		"ip-addresses": []map[string]any{{"ip-address": "127.0.0.1", "ip-address-type": "ipv4", "prefix": 8}}}}
	for _, k := range sortedKeys(vm.Config) {
		if !netKeyRe.MatchString(k) {
			continue
		}
		idx := strings.TrimPrefix(k, "net")
		addrs := []map[string]any{}
		for _, part := range strings.Split(vm.Config["ipconfig"+idx], ",") {
			if v, ok := strings.CutPrefix(part, "ip="); ok {
				if p, err := netip.ParsePrefix(v); err == nil {
					addrs = append(addrs, map[string]any{"ip-address": p.Addr().String(), "ip-address-type": "ipv4", "prefix": p.Bits()})
				}
			}
		}
		ifaces = append(ifaces, map[string]any{"name": "eth" + idx, "hardware-address": strings.ToLower(parseNet(vm.Config[k])["macaddr"]), "ip-addresses": addrs})
	}
	return map[string]any{"result": ifaces}, nil
}

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
		if b == "" || contains(bridges, b) {
			continue
		}
		if _, ok := s.st.SDN.Running["vnets"][b]; ok {
			continue
		}
		return fmt.Errorf("bridge '%s' does not exist", b)
	}
	return nil
}
