package pvesim

// VM clone (POST .../clone): full and linked clones, target node and storage.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

func (s *Server) vmClone(r *reqCtx, src *VM) (any, error) {
	newid := int(r.params.Int("newid"))
	pool := r.params.Str("pool")
	if pool != "" && s.st.Pools[pool] == nil {
		return nil, &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (pool '%s' does not exist)\n", pool)}
	}
	full := src.Config["template"] != "1" || r.params.Bool("full")
	if err := s.checkCloneParams(r, src, full); err != nil {
		return nil, err
	}
	if err := s.checkClonePerms(r, src); err != nil {
		return nil, err
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
	conf := s.cloneConfig(r, src, newid, full)
	// the worker's clone_disk: vdisk_alloc (full) or the storage's clone_image (linked), on the
	// source's node; a refusal fails the task and the copy goes (clone_vm's "clone failed")
	allocErr := s.allocVolumes(src.Node, cloneVolumes(conf))
	vm := &VM{VMID: newid, Node: node, Status: "stopped", Config: conf, Lock: "clone"}
	s.st.VMs[newid] = vm
	t := s.startTask(r, src.Node, "qmclone", strconv.Itoa(src.VMID), func() error {
		if allocErr != nil {
			delete(s.st.VMs, newid)
			return fmt.Errorf("clone failed: %w", allocErr)
		}
		vm.Lock = ""
		vm.Pool = pool
		return nil
	})
	t.abort = func() { delete(s.st.VMs, newid) }
	t.Log = append(t.Log, fmt.Sprintf("create %s clone of drive scsi0", map[bool]string{true: "full", false: "linked"}[full]))
	return t.UPID, nil
}

// storageEnabled is pve-storage's storage_check_enabled: the storage is not disabled and is on node.
func storageEnabled(sc StorageConfig, node string) error {
	if sc.Disable {
		return plainErr("storage '%s' is disabled", sc.ID)
	}
	if !sc.onNode(node) {
		return plainErr("storage '%s' is not available on node '%s'", sc.ID, node)
	}
	return nil
}

// checkCloneParams refuses what PVE refuses before any permission check: storage or format on a
// linked clone, an unknown storage or one without images, a target node the disks cannot reach.
func (s *Server) checkCloneParams(r *reqCtx, src *VM, full bool) error {
	if !full {
		for _, k := range []string{"storage", "format"} {
			if r.params.Has(k) {
				return plainErr("parameter '%s' not allowed for linked clones", k)
			}
		}
	}
	tgt := r.params.Str("target")
	if tgt == src.Node {
		tgt = "" // clone_vm: a target that is the local node is none
	}
	if tgt != "" && !s.nodeExists(tgt) {
		return plainErr("no such cluster node '%s'", tgt)
	}
	if st := r.params.Str("storage"); st != "" {
		sc, ok := s.st.Storages[st]
		if !ok {
			return plainErr("storage '%s' does not exist", st)
		}
		// storage_check_enabled on the local node (the call runs on the source's node)
		if err := storageEnabled(sc, src.Node); err != nil {
			return err
		}
		if !slices.Contains(sc.Content, "images") {
			return paramErr(map[string]string{"storage": fmt.Sprintf("storage '%s' does not support vm images", st)})
		}
		if tgt != "" {
			// Qemu.pm clone_vm: the storage on the target node too, and shared, since the
			// copy's volumes are made on the local node and only the config moves
			if err := storageEnabled(sc, tgt); err != nil {
				return err
			}
			if !sc.Shared {
				return plainErr("can't clone to non-shared storage '%s'", st)
			}
		}
	}
	if tgt != "" {
		for k, v := range src.Config {
			if diskKeyRe.MatchString(k) && !strings.Contains(v, "media=cdrom") {
				if sc := s.st.Storages[strings.SplitN(v, ":", 2)[0]]; !sc.Shared {
					return plainErr("can't clone VM to node '%s' (VM uses local storage)", tgt)
				}
			}
		}
	}
	return nil
}

// checkClonePerms is clone_vm's load_and_check (Qemu.pm:4490-4494): space where the copy's disks
// land, the source's mapped devices, and its NICs' networks.
func (s *Server) checkClonePerms(r *reqCtx, src *VM) error {
	if r.who.isRoot() {
		return nil
	}
	if err := s.cloneStorageAccess(r.who, src.Config, r.params.Str("storage")); err != nil {
		return err
	}
	if err := s.mappingAccess(r.who, src.Config); err != nil {
		return err
	}
	return s.bridgeAccess(r.who, src.Config)
}

// cloneConfig is the copy's config: the source's without template and unused volumes, a new
// name, NICs without MAC (a new one is generated), disks renamed to the new VMID.
func (s *Server) cloneConfig(r *reqCtx, src *VM, newid int, full bool) map[string]string {
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
			c[k] = cloneVolume(v, r.params.Str("storage"), src.VMID, newid, full)
		}
	}
	return c
}

// cloneVolume names the copy of disk value v: on storage when given (the cloud-init drive too:
// QemuServer.pm clone_disk's $storeid = $storage || $src_storeid), vm-<newid>-disk-0 for a full
// clone, base-<src>-disk-0/vm-<newid>-disk-0 for a linked one.
func cloneVolume(v, storage string, srcID, newid int, full bool) string {
	vol := strings.SplitN(v, ",", 2)
	store := strings.SplitN(vol[0], ":", 2)[0]
	ci := strings.Contains(v, "cloudinit")
	if storage != "" {
		store = storage
	}
	kind := "disk-0"
	if ci {
		kind = "cloudinit"
	}
	nv := fmt.Sprintf("%s:vm-%d-%s", store, newid, kind)
	if !full && !ci {
		nv = fmt.Sprintf("%s:base-%d-disk-0/vm-%d-disk-0", store, srcID, newid)
	}
	if len(vol) > 1 {
		nv += "," + vol[1]
	}
	return nv
}

func firstNonEmpty(a ...string) string {
	for _, x := range a {
		if x != "" {
			return x
		}
	}
	return ""
}

// cloneVolumes are the volumes a clone allocates: each disk of the copy, sized as the source's;
// a linked copy's disk is a thin snapshot of the source's base volume.
func cloneVolumes(conf map[string]string) []newVolume {
	var vols []newVolume
	for _, k := range sortedKeys(conf) {
		if !diskKeyRe.MatchString(k) || strings.Contains(conf[k], "media=cdrom") && !strings.Contains(conf[k], "cloudinit") {
			continue
		}
		volid, f := driveFile(conf[k])
		sid, name, ok := strings.Cut(volid, ":")
		if !ok {
			continue
		}
		_, size := parseSize(f["size"])
		v := newVolume{sid: sid, name: name, size: max(int64(size), 0)}
		if base, own, linked := strings.Cut(name, "/"); linked {
			v.name, v.linked, v.base = own, true, base
		}
		if strings.Contains(name, "cloudinit") {
			v.size = cloudinitSize
		}
		vols = append(vols, v)
	}
	return vols
}
