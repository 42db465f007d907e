package pvesim

// Disks: allocation at create (POST /nodes/{node}/qemu) and resize (PUT .../resize).

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// newDiskRe is a disk to allocate at create: "STORAGE:SIZE[,options]".
var newDiskRe = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9._-]*[a-zA-Z0-9]):(\d+(?:\.\d+)?)(,.*)?$`)

// allocDisks turns the disks to allocate in the config set of new VM vmid into its volumes,
// vm-<vmid>-disk-<n>, after their storage's checks: it exists, holds images, and lets a non-root
// caller allocate space. It returns the volumes, for the create's task to allocate.
func (s *Server) allocDisks(r *reqCtx, vmid int, set map[string]string) ([]newVolume, error) {
	n := 0
	var vols []newVolume
	for _, k := range sortedKeys(set) {
		if !diskKeyRe.MatchString(k) {
			continue
		}
		m := newDiskRe.FindStringSubmatch(set[k])
		if m == nil {
			continue
		}
		st, ok := s.st.Storages[m[1]]
		if !ok {
			return nil, plainErr("storage '%s' does not exist", m[1])
		}
		if !slices.Contains(st.Content, "images") {
			return nil, paramErr(map[string]string{k: fmt.Sprintf("storage '%s' does not support vm images", m[1])})
		}
		if !r.who.isRoot() {
			if err := s.st.check(r.who, "/storage/"+m[1], []string{"Datastore.AllocateSpace"}, false); err != nil {
				return nil, err
			}
		}
		d, err := s.parseDrive(k, set[k])
		if err != nil {
			return nil, err
		}
		gib, _ := strconv.ParseFloat(m[2], 64)
		d["file"], d["size"] = fmt.Sprintf("%s:vm-%d-disk-%d", m[1], vmid, n), fmtSize(gib*(1<<30))
		set[k] = printDrive(d)
		vols = append(vols, newVolume{sid: m[1], name: fmt.Sprintf("vm-%d-disk-%d", vmid, n), size: int64(gib * (1 << 30))})
		n++
	}
	return vols, nil
}

func (s *Server) vmResize(r *reqCtx, vm *VM) (any, error) {
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
	volid, _ := driveFile(v)
	sid, name, _ := strings.Cut(volid, ":")
	growErr := s.growVolume(vm.Node, sid, name, int64(newSize-cur))
	apply := func() error {
		if growErr != nil { // the worker's volume_resize dies; the config keeps its size
			return growErr
		}
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
