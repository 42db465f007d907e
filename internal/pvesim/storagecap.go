package pvesim

// What each node's disks hold and what the storages on them report and refuse: a storage's
// status (PVE::Storage storage_info and each plugin's status), the allocation of a volume
// (vdisk_alloc, the plugin's alloc_image, clone_image) and its growth (volume_resize).
//
// The backing is the node's: volume groups with their thin pools, and the directories' file
// systems. Sizes are set at start from the config and by POST /_sim/disks/{node}, as the
// node's disks would be; a thin pool's used data is what its volumes wrote, which pvesim
// cannot know, so it is set the same way (a guest filling its disk).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// nodeDisks is one node's disks as lvs, vgs and df report them.
type nodeDisks struct {
	VGs  map[string]*volGroup `json:"vgs"`
	Dirs map[string]*backing  `json:"dirs"`
}

// volGroup is an LVM volume group: its size and its thin pools (thick volumes are the lvm
// storages' volumes, counted from the VMs' configs).
type volGroup struct {
	Size      int64               `json:"size"`
	ThinPools map[string]*backing `json:"thinpools"`
}

// backing is a thin pool's or a file system's size and the data written to it.
type backing struct {
	Size int64 `json:"size"`
	Used int64 `json:"used"`
}

const (
	defaultBacking = int64(1) << 40 // 1 TiB: a storage's backing when the config sets no size
	lvmExtent      = int64(4) << 20 // vgcreate's default physical extent
	cloudinitSize  = int64(4) << 20 // qemu-server's cloud-init volume (Cloudinit.pm, 4 MiB)
)

// disksOf is node's disks, made empty when the node has none yet.
func (st *state) disksOf(node string) *nodeDisks {
	if st.Disks == nil {
		st.Disks = map[string]*nodeDisks{}
	}
	d := st.Disks[node]
	if d == nil {
		d = &nodeDisks{VGs: map[string]*volGroup{}, Dirs: map[string]*backing{}}
		st.Disks[node] = d
	}
	return d
}

// seedDisks gives each node the backing of the storages on it: a volume group with the thin
// pool of an lvmthin storage (the group twice the pool), the group of an lvm storage, the file
// system of a dir storage.
func (st *state) seedDisks(storages []StorageConfig) {
	for _, n := range st.Nodes {
		d := st.disksOf(n.Name)
		for _, sc := range storages {
			if !sc.onNode(n.Name) {
				continue
			}
			size := sc.Size
			if size <= 0 {
				size = defaultBacking
			}
			switch sc.Type {
			case "lvmthin", "lvm":
				vg := d.VGs[sc.VGName]
				if vg == nil {
					vg = &volGroup{ThinPools: map[string]*backing{}}
					d.VGs[sc.VGName] = vg
				}
				if sc.Type == "lvm" {
					vg.Size = max(vg.Size, size)
					continue
				}
				if d.VGs[sc.VGName].ThinPools[sc.ThinPool] == nil {
					vg.ThinPools[sc.ThinPool] = &backing{Size: size}
					vg.Size = max(vg.Size, 2*vg.thinSum())
				}
			case "dir":
				if d.Dirs[sc.Path] == nil {
					d.Dirs[sc.Path] = &backing{Size: size}
				}
			}
		}
	}
}

func (vg *volGroup) thinSum() int64 {
	var n int64
	for _, tp := range vg.ThinPools {
		n += tp.Size
	}
	return n
}

// volumeSizes are the volumes on storage sid that live on node, from the VMs' configs
// (a shared storage's from every node), by name.
func (s *Server) volumeSizes(sid, node string) map[string]int64 {
	out := map[string]int64{}
	shared := s.st.Storages[sid].Shared
	for _, vm := range s.st.VMs {
		if !shared && vm.Node != node {
			continue
		}
		for k, v := range vm.Config {
			if !diskKeyRe.MatchString(k) {
				continue
			}
			volid, f := driveFile(v)
			st, name, ok := strings.Cut(volid, ":")
			if !ok || st != sid {
				continue
			}
			size := cloudinitSize
			if !strings.Contains(name, "cloudinit") {
				_, b := parseSize(f["size"])
				size = max(int64(b), 0)
			}
			out[name] = size
		}
	}
	return out
}

// vgFree is what an LVM volume group has left: its size less its thin pools and the thick
// volumes of the lvm storages on it.
func (s *Server) vgFree(node, vgname string) int64 {
	vg := s.st.disksOf(node).VGs[vgname]
	if vg == nil {
		return 0
	}
	used := vg.thinSum()
	for _, sid := range sortedKeys(s.st.Storages) {
		if sc := s.st.Storages[sid]; sc.Type == "lvm" && sc.VGName == vgname {
			for _, b := range s.volumeSizes(sid, node) {
				used += b
			}
		}
	}
	return vg.Size - used
}

// storageStatus is a plugin's status on node: total, used, avail and whether it is active
// (LvmThinPlugin status: the pool's size and written data; LVMPlugin: the group's size and
// free; DirPlugin: the file system's df). A missing backing is an inactive storage.
func (s *Server) storageStatus(sc StorageConfig, node string) (total, used, avail int64, active bool) {
	d := s.st.disksOf(node)
	switch sc.Type {
	case "lvmthin":
		if vg := d.VGs[sc.VGName]; vg != nil {
			if tp := vg.ThinPools[sc.ThinPool]; tp != nil && tp.Size > 0 {
				return tp.Size, tp.Used, tp.Size - tp.Used, true
			}
		}
		return 0, 0, 0, false
	case "lvm":
		vg := d.VGs[sc.VGName]
		if vg == nil {
			return 0, 0, 0, false
		}
		free := s.vgFree(node, sc.VGName)
		return vg.Size, vg.Size - free, free, true
	case "dir":
		if b := d.Dirs[sc.Path]; b != nil {
			return b.Size, b.Used, b.Size - b.Used, true
		}
		return 0, 0, 0, false
	}
	// the other types (rbd, ...) have no backing here: room enough, never refused
	return defaultBacking, 0, defaultBacking, true
}

// activateStorage is the plugin's activate_storage on node: an lvmthin storage's pool must exist
// (LvmThinPlugin $activate_lv); LVMPlugin only rescans; dir creates its path.
func (s *Server) activateStorage(sc StorageConfig, node string) error {
	if sc.Type != "lvmthin" {
		return nil
	}
	if vg := s.st.disksOf(node).VGs[sc.VGName]; vg == nil || vg.ThinPools[sc.ThinPool] == nil {
		return fmt.Errorf("no such logical volume %s/%s", sc.VGName, sc.ThinPool)
	}
	return nil
}

// pveMsg is an error whose text is PVE's (or lvm2's) own, punctuation and all.
type pveMsg string

func (m pveMsg) Error() string { return string(m) }

// newVolume is a volume a create, clone or resize is about to allocate or grow.
type newVolume struct {
	sid, name string
	size      int64 // bytes; for a resize, the growth
	linked    bool  // a linked clone's thin snapshot (LvmThinPlugin clone_image)
	base      string
}

// allocVolumes is vdisk_alloc for each of vols on node, in order: the storage activated on the
// node, then its plugin's refusal. LVM-thin over-provisions (lvm2's
// thin_pool_check_overprovisioning only warns when the virtual sizes pass the pool) and refuses
// a new thin volume only in a pool out of data space (thin_pool_below_threshold, via
// _check_pool_create); LVM thick refuses what the group cannot hold: LVMPlugin
// alloc_lvm_image's own check compares the group's free bytes with the size in KiB (so it
// rarely fires), then lvcreate -L refuses the extents the group lacks.
func (s *Server) allocVolumes(node string, vols []newVolume) error {
	pending := map[string]int64{} // thick space taken by the earlier volumes of this call
	for _, v := range vols {
		sc, ok := s.st.Storages[v.sid]
		if !ok {
			return fmt.Errorf("storage '%s' does not exist", v.sid)
		}
		if sc.Disable {
			return fmt.Errorf("storage '%s' is disabled", v.sid)
		}
		if !sc.onNode(node) {
			return fmt.Errorf("storage '%s' is not available on node '%s'", v.sid, node)
		}
		if err := s.activateStorage(sc, node); err != nil {
			return err
		}
		vg := s.st.disksOf(node).VGs[sc.VGName]
		switch sc.Type {
		case "lvmthin":
			tp := vg.ThinPools[sc.ThinPool]
			if tp.Used >= tp.Size {
				refusal := fmt.Sprintf("  Free space in pool %s/%s is above threshold, new volumes are not allowed.", sc.VGName, sc.ThinPool)
				if v.linked {
					return pveMsg(fmt.Sprintf("clone image '%s/%s' error: %s", sc.VGName, v.base, refusal))
				}
				return pveMsg(fmt.Sprintf("lvcreate '%s/%s' error: %s", sc.VGName, v.name, refusal))
			}
		case "lvm":
			if vg == nil {
				return fmt.Errorf("no such volume group '%s'", sc.VGName)
			}
			free := s.vgFree(node, sc.VGName) - pending[sc.VGName]
			if free < v.size/1024 {
				return fmt.Errorf("not enough free space (%d < %d)", free, v.size/1024)
			}
			if free < v.size {
				return pveMsg(fmt.Sprintf("lvcreate '%s/%s' error:   Volume group \"%s\" has insufficient free space (%d extents): %d required.",
					sc.VGName, v.name, sc.VGName, max(free, 0)/lvmExtent, (v.size+lvmExtent-1)/lvmExtent))
			}
			pending[sc.VGName] += v.size
		}
	}
	return nil
}

// growVolume is volume_resize of volume name on storage sid by grow bytes: a thin volume grows
// (lvextend of a thin LV changes its virtual size; the pool only warns), a thick one needs the
// extents (LVMPlugin volume_resize, lvm2's lvresize refusal).
func (s *Server) growVolume(node, sid, name string, grow int64) error {
	sc := s.st.Storages[sid]
	if sc.Type != "lvm" || grow <= 0 {
		return nil
	}
	free := s.vgFree(node, sc.VGName)
	if free >= grow {
		return nil
	}
	need := (grow + lvmExtent - 1) / lvmExtent
	return fmt.Errorf("error resizing volume '/dev/%s/%s':   Insufficient free space: %d extents needed, but only %d available",
		sc.VGName, name, need, max(free, 0)/lvmExtent)
}

// nodeStorageList is Status.pm index: the storages enabled on node that the caller may audit
// or allocate on, with their status.
func (s *Server) nodeStorageList(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	if !s.nodeExists(node) {
		return nil, plainErr("no such cluster node '%s'", node)
	}
	out := []map[string]any{}
	for _, sid := range sortedKeys(s.st.Storages) {
		sc := s.st.Storages[sid]
		if !sc.onNode(node) || !s.st.has(r.who, "/storage/"+sid, []string{"Datastore.Audit", "Datastore.AllocateSpace"}, true) {
			continue
		}
		if st := r.params.Str("storage"); st != "" && st != sid {
			continue
		}
		if c := r.params.Str("content"); c != "" && !slices.ContainsFunc(splitList(c), func(x string) bool { return slices.Contains(sc.Content, x) }) {
			continue
		}
		if r.params.Has("enabled") && r.params.Bool("enabled") && sc.Disable {
			continue
		}
		e := s.statusEntry(sc, node)
		e["storage"] = sid
		out = append(out, e)
	}
	return out, nil
}

func (s *Server) statusEntry(sc StorageConfig, node string) map[string]any {
	total, used, avail, active := s.storageStatus(sc, node)
	e := map[string]any{"type": sc.Type, "content": strings.Join(sc.Content, ","), "shared": boolInt(sc.Shared),
		"enabled": boolInt(!sc.Disable), "active": boolInt(active && !sc.Disable)}
	if active && !sc.Disable {
		e["total"], e["used"], e["avail"] = total, used, avail
		if total > 0 {
			e["used_fraction"] = float64(used) / float64(total)
		}
	}
	return e
}

// nodeStorageStatus is Status.pm read_status: a storage not on the node is refused
// (storage_check_node).
func (s *Server) nodeStorageStatus(r *reqCtx) (any, error) {
	node, sid := r.params.Str("node"), r.params.Str("storage")
	if !s.nodeExists(node) {
		return nil, plainErr("no such cluster node '%s'", node)
	}
	sc, ok := s.st.Storages[sid]
	if !ok {
		return nil, plainErr("storage '%s' does not exist", sid)
	}
	if !sc.onNode(node) {
		return nil, plainErr("storage '%s' is not available on node '%s'", sid, node)
	}
	return s.statusEntry(sc, node), nil
}

// nodeThinPools is GET /nodes/{node}/disks/lvmthin (pve-manager API2/Disks/LVMThin.pm index):
// the node's thin pools, whether a storage uses them or not.
func (s *Server) nodeThinPools(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	if !s.nodeExists(node) {
		return nil, plainErr("no such cluster node '%s'", node)
	}
	out := []map[string]any{}
	d := s.st.disksOf(node)
	for _, vgname := range sortedKeys(d.VGs) {
		for _, lv := range sortedKeys(d.VGs[vgname].ThinPools) {
			tp := d.VGs[vgname].ThinPools[lv]
			out = append(out, map[string]any{"lv": lv, "vg": vgname, "lv_size": tp.Size, "used": tp.Used,
				"metadata_size": int64(1) << 30, "metadata_used": int64(0)})
		}
	}
	return out, nil
}

// DiskRequest is POST /_sim/disks/{node}: a volume group's size ("vg", "vg_size"), a thin pool in
// it ("thinpool", "size", "used": made when missing, the group grown to hold it) or a
// directory's file system ("path", "size", "used"). A null field leaves the value as it is;
// "remove": true takes the thin pool away. "create": true is a node's
// `lvcreate --type thin-pool -L <size> -n <thinpool> <vg>` (the lvcreate pvesim stands in for, cmd/pvesim):
// refused as lvm2 refuses it, with its message, when the group is missing, the pool exists or
// the group's free space is less than size; the group is never grown for it.
type DiskRequest struct {
	VG       string `json:"vg"`
	VGSize   *int64 `json:"vg_size"`
	ThinPool string `json:"thinpool"`
	Path     string `json:"path"`
	Size     *int64 `json:"size"`
	Used     *int64 `json:"used"`
	Remove   bool   `json:"remove"`
	Create   bool   `json:"create"`
}

var lvNameRe = regexp.MustCompile(`^[a-zA-Z0-9+_.][a-zA-Z0-9+_.-]*$`)

// SetDisks applies req to node's disks.
func (s *Server) SetDisks(node string, req DiskRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.nodeExists(node) {
		return fmt.Errorf("no such node %q", node)
	}
	d := s.st.disksOf(node)
	set := func(b *backing) error {
		if req.Size != nil {
			b.Size = *req.Size
		}
		if req.Used != nil {
			b.Used = *req.Used
		}
		if b.Size < 0 || b.Used < 0 || b.Used > b.Size {
			return fmt.Errorf("size %d and used %d: need 0 <= used <= size", b.Size, b.Used)
		}
		return nil
	}
	switch {
	case req.Path != "":
		if d.Dirs[req.Path] == nil {
			d.Dirs[req.Path] = &backing{}
		}
		return set(d.Dirs[req.Path])
	case req.VG != "":
		if !lvNameRe.MatchString(req.VG) || (req.ThinPool != "" && !lvNameRe.MatchString(req.ThinPool)) {
			return fmt.Errorf("vg %q / thinpool %q: not LVM names", req.VG, req.ThinPool)
		}
		vg := d.VGs[req.VG]
		if vg == nil && req.Create {
			return fmt.Errorf("  Volume group %q not found", req.VG)
		}
		if vg == nil {
			vg = &volGroup{ThinPools: map[string]*backing{}}
			d.VGs[req.VG] = vg
		}
		if req.VGSize != nil {
			vg.Size = *req.VGSize
		}
		if req.ThinPool == "" {
			return nil
		}
		if req.Remove {
			delete(vg.ThinPools, req.ThinPool)
			return nil
		}
		if req.Create {
			return s.lvcreateThin(node, req)
		}
		if vg.ThinPools[req.ThinPool] == nil {
			vg.ThinPools[req.ThinPool] = &backing{}
		}
		if err := set(vg.ThinPools[req.ThinPool]); err != nil {
			return err
		}
		vg.Size = max(vg.Size, vg.thinSum())
		return nil
	}
	return fmt.Errorf("give vg (with thinpool) or path")
}

// lvcreateThin makes req's thin pool in its existing group (s.mu held), as lvm2's lvcreate does:
// the pool takes its size out of the group's free space (vgFree), and refuses what lvm2 refuses
// (lib/metadata/lv_manip.c: an existing name, insufficient free extents), with its messages
// (lvm2 indents them by two spaces; the closing period is left off, as Go's errors are).
func (s *Server) lvcreateThin(node string, req DiskRequest) error {
	vg := s.st.disksOf(node).VGs[req.VG]
	if vg.ThinPools[req.ThinPool] != nil {
		return fmt.Errorf("  Logical Volume %q already exists in volume group %q", req.ThinPool, req.VG)
	}
	if req.Size == nil || *req.Size <= 0 || req.Used != nil {
		return fmt.Errorf("create: give size (bytes, above 0) and no used")
	}
	// lvcreate rounds the size up to whole extents
	size := (*req.Size + lvmExtent - 1) / lvmExtent * lvmExtent
	if free := s.vgFree(node, req.VG); free < size {
		return fmt.Errorf("  Volume group %q has insufficient free space (%d extents): %d required", req.VG, max(free, 0)/lvmExtent, size/lvmExtent)
	}
	vg.ThinPools[req.ThinPool] = &backing{Size: size}
	return nil
}

func (s *Server) serveDisks(w http.ResponseWriter, r *http.Request, node string, reply func(any)) {
	var req DiskRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		http.Error(w, "bad disks request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.SetDisks(node, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	reply(nil)
}

// vmMaxCPU is a VM's vCPUs as vmstatus reports them (QemuServer.pm): sockets x cores (each 1 by
// default) capped at its node's CPU count (nodeCPUs, when known), then vcpus when set. So it is
// not what a guest may run with: a 64-vCPU guest on a 16-CPU node reads 16.
func vmMaxCPU(c map[string]string, nodeCPUs int) int {
	n := max(atoiSafe(c["sockets"]), 1) * max(atoiSafe(c["cores"]), 1)
	if nodeCPUs > 0 && n > nodeCPUs {
		n = nodeCPUs
	}
	if v := atoiSafe(c["vcpus"]); v > 0 {
		n = v
	}
	return n
}

// vmMaxMem is a VM's memory in bytes: PVE 9's memory property string, "4096" or
// "current=4096" (QemuServer/Memory.pm get_current_memory; 512 MiB by default).
func vmMaxMem(c map[string]string) int64 {
	v := c["memory"]
	if v == "" {
		return 512 << 20
	}
	for _, part := range strings.Split(v, ",") {
		if x, ok := strings.CutPrefix(part, "current="); ok {
			return int64(atoiSafe(x)) << 20
		}
		if !strings.Contains(part, "=") {
			return int64(atoiSafe(part)) << 20
		}
	}
	return 512 << 20
}

// vmMaxDisk is the size of a VM's boot disk (vmstatus: the bootdisk's size): the first disk of
// boot order=..., else bootdisk, else the first disk, none a CD-ROM.
func vmMaxDisk(c map[string]string) int64 {
	var order []string
	if o, ok := strings.CutPrefix(c["boot"], "order="); ok {
		order = strings.Split(o, ";")
	}
	if b := c["bootdisk"]; b != "" {
		order = append(order, b)
	}
	for _, k := range sortedKeys(c) {
		if driveNameRe.MatchString(k) {
			order = append(order, k)
		}
	}
	for _, k := range order {
		v, ok := c[k]
		if !ok || strings.Contains(v, "media=cdrom") {
			continue
		}
		_, f := driveFile(v)
		if _, b := parseSize(f["size"]); b > 0 {
			return int64(b)
		}
	}
	return 0
}
