// Package cgroupslice places a process into a tenant's cgroup v2 group, whose memory.max and
// cpu.max are the tenant's envelope (docs/adr/0014-tenant-envelope.md, decision 3): the kernel
// then caps what all of one tenant's VMs on a node use together, whatever their configs say.
//
// Why a group of our own, <root>/deevnet.slice/tenant-<name>.slice, and not one under PVE's:
// qemu-server's vm_start (PVE::QemuServer, $run_qemu) forks and calls
// PVE::Systemd::enter_systemd_scope($vmid, ..., Slice => 'qemu.slice', KillMode => 'process'),
// which asks systemd (StartTransientUnit over D-Bus) for a transient unit <vmid>.scope in
// qemu.slice holding the forked process, so QEMU runs in /sys/fs/cgroup/qemu.slice/<vmid>.scope.
// That scope is systemd's and every VM's scope sits in the one qemu.slice shared by all tenants,
// so no limit there is per tenant, and systemd would undo a group we made inside its own units.
// Moving the QEMU process out of its scope into a group outside systemd's slices means, on a real
// node: the scope is left empty, and systemd ends a scope whose cgroup empties (vm_start's own
// "systemctl stop <vmid>.scope" before a start then finds nothing to stop); PVE's runtime
// changes that go through the scope (PVE::QemuServer::CGroup: cpulimit/cpuunits by
// SetUnitProperties on <vmid>.scope) and its pressure figures (read_cgroup_pressure of
// qemu.slice/<vmid>.scope) no longer reach or describe the process; stopping the VM is
// unchanged (QMP quit, then the pid, not the cgroup). The tenant's limits take their place.
package cgroupslice

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Parent is the group under the cgroup2 root that holds every tenant's group.
const Parent = "deevnet.slice"

// Limits are one tenant's share of a node (internal/guard NodeShare): memory (MiB) and cores
// (vCPUs), and its disk I/O on each of the node's devices behind its storage.
type Limits struct {
	MemoryMiB int
	Cores     int
	IO        []IOLimit
}

// IOLimit is the group's io.max on one whole block device (the kernel takes none on a
// partition): bytes and operations a second, each 0 for none (the kernel's "max"). The kernel's
// blk-throttle holds every bio the group's processes issue to that device, whatever the VM's own
// disk options, and a bio a device-mapper target passes down keeps its cgroup.
type IOLimit struct {
	Dev                      string // MAJ:MIN
	RBps, WBps, RIOPS, WIOPS int64
}

// line is l as io.max reads it back (one device a line, every key, "max" for none).
func (l IOLimit) line() string {
	v := func(n int64) string {
		if n <= 0 {
			return "max"
		}
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("%s rbps=%s wbps=%s riops=%s wiops=%s", l.Dev, v(l.RBps), v(l.WBps), v(l.RIOPS), v(l.WIOPS))
}

var devRule = regexp.MustCompile(`^[0-9]+:[0-9]+$`)

// cpuPeriod is cpu.max's period in microseconds (the kernel's default); the quota is one
// period per vCPU, so Cores vCPUs may run flat out together and no more.
const cpuPeriod = 100000

// A tenant name is one path element: the tenant contract's names are lower-case DNS labels.
var nameRule = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Dir is the tenant's group under the cgroup2 mount root.
func Dir(root, tenant string) string {
	return filepath.Join(root, Parent, "tenant-"+tenant+".slice")
}

// Ensure creates the tenant's group with its limits (idempotent) and returns its directory.
// It checks everything it can before creating anything: the name, the limits, and that the
// root offers the memory and cpu controllers.
func Ensure(root, tenant string, l Limits) (string, error) {
	if !nameRule.MatchString(tenant) {
		return "", fmt.Errorf("tenant %q: must be a lower-case DNS label (a-z, 0-9, '-'), it names a cgroup", tenant)
	}
	if l.MemoryMiB < 1 || l.Cores < 1 {
		return "", fmt.Errorf("tenant %s: memory %d MiB and cores %d must each be at least 1", tenant, l.MemoryMiB, l.Cores)
	}
	if err := l.checkIO(tenant); err != nil {
		return "", err
	}
	controllers := []string{"memory", "cpu"}
	if len(l.IO) > 0 {
		controllers = append(controllers, "io") // only then: a node without it keeps its memory and CPU caps
	}
	if err := requireControllers(filepath.Join(root, "cgroup.controllers"), controllers...); err != nil {
		return "", err
	}
	parent := filepath.Join(root, Parent)
	dir := Dir(root, tenant)
	// Each level's subtree_control hands the controllers down to its children; the kernel makes a
	// repeated "+memory" a no-op. The tenant's group is a leaf: processes live in it.
	for _, step := range []struct{ mkdir, control string }{
		{"", filepath.Join(root, "cgroup.subtree_control")},
		{parent, filepath.Join(parent, "cgroup.subtree_control")},
		{dir, ""},
	} {
		if step.mkdir != "" {
			if err := os.Mkdir(step.mkdir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return "", fmt.Errorf("creating cgroup %s: %w", step.mkdir, err)
			}
		}
		if step.control != "" {
			if err := write(step.control, "+"+strings.Join(controllers, " +")); err != nil {
				return "", err
			}
		}
	}
	for _, v := range l.values() {
		if err := write(filepath.Join(dir, v.file), v.value); err != nil {
			return "", err
		}
	}
	if err := writeIO(dir, l.IO); err != nil {
		return "", err
	}
	return dir, nil
}

// checkIO refuses an io.max that is no device number or a negative rate, before anything is
// written.
func (l Limits) checkIO(tenant string) error {
	seen := map[string]bool{}
	for _, io := range l.IO {
		if !devRule.MatchString(io.Dev) || seen[io.Dev] {
			return fmt.Errorf("tenant %s: io.max device %q: must be one MAJ:MIN, once", tenant, io.Dev)
		}
		seen[io.Dev] = true
		if io.RBps < 0 || io.WBps < 0 || io.RIOPS < 0 || io.WIOPS < 0 {
			return fmt.Errorf("tenant %s: io.max on %s: rbps %d, wbps %d, riops %d, wiops %d: no rate may be negative", tenant, io.Dev, io.RBps, io.WBps, io.RIOPS, io.WIOPS)
		}
	}
	return nil
}

// ioChanges are the io.max lines to write to the group at dir for want: each device whose line
// differs, and every device it caps that want does not name, back to no cap (a device no longer
// behind the tenant's storage, or rates taken out of the envelope). was is each such device's
// line now ("none": no cap).
func ioChanges(dir string, want []IOLimit) (lines, was []string, err error) {
	file := filepath.Join(dir, "io.max")
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		b, err = nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", file, err)
	}
	now := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if dev, _, ok := strings.Cut(line, " "); ok {
			now[dev] = line
		}
	}
	named := map[string]bool{}
	for _, w := range want {
		named[w.Dev] = true
		if line := w.line(); now[w.Dev] != line {
			lines, was = append(lines, line), append(was, or(now[w.Dev], "none"))
		}
	}
	for _, dev := range slices.Sorted(maps.Keys(now)) {
		if !named[dev] {
			lines, was = append(lines, IOLimit{Dev: dev}.line()), append(was, now[dev])
		}
	}
	return lines, was, nil
}

func or(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// writeIO writes the io.max lines the group at dir lacks. The kernel takes one device a write;
// a directory laid out like cgroupfs (the tests') gets the whole file as the kernel would show it.
func writeIO(dir string, want []IOLimit) error {
	lines, _, err := ioChanges(dir, want)
	if err != nil || len(lines) == 0 {
		return err
	}
	file := filepath.Join(dir, "io.max")
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return fmt.Errorf("statfs %s: %w", dir, err)
	}
	if fs.Type == cgroup2Magic {
		for _, line := range lines {
			if err := write(file, line); err != nil {
				return err
			}
		}
		return nil
	}
	var all []string
	for _, w := range want {
		all = append(all, w.line())
	}
	return write(file, strings.Join(all, "\n"))
}

// cgroup2Magic is CGROUP2_SUPER_MAGIC (linux/magic.h), statfs's f_type of a cgroup v2 mount.
const cgroup2Magic = 0x63677270

type limitValue struct{ file, value string }

// values are the limit files Ensure writes for l and their values, as the kernel reads them back.
func (l Limits) values() []limitValue {
	return []limitValue{
		{"memory.max", strconv.FormatInt(int64(l.MemoryMiB)<<20, 10)},
		{"cpu.max", fmt.Sprintf("%d %d", l.Cores*cpuPeriod, cpuPeriod)},
	}
}

// Made says whether the group at dir exists.
func Made(dir string) (bool, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("cgroup %s: %w", dir, err)
	}
	return true, nil
}

// Changes names each limit file of the group at dir whose value is not l's, as
// `memory.max 34359738368 -> 2147483648`, so a caller changes (and reports) only what differs;
// made says whether the group exists at all (one not made yet has nothing to change: Place makes
// it with its limits).
func Changes(dir string, l Limits) (changes []string, made bool, err error) {
	if made, err = Made(dir); !made || err != nil {
		return nil, made, err
	}
	for _, v := range l.values() {
		file := filepath.Join(dir, v.file)
		b, err := os.ReadFile(file)
		was := strings.TrimSpace(string(b))
		if errors.Is(err, os.ErrNotExist) {
			was = "none"
		} else if err != nil {
			return nil, true, fmt.Errorf("reading %s: %w", file, err)
		}
		if was != v.value {
			changes = append(changes, fmt.Sprintf("%s %s -> %s", v.file, was, v.value))
		}
	}
	lines, was, err := ioChanges(dir, l.IO)
	if err != nil {
		return nil, true, err
	}
	for i, line := range lines {
		changes = append(changes, fmt.Sprintf("io.max %s -> %s", was[i], line))
	}
	return changes, true, nil
}

// Move puts pid into the group at dir (a process already there stays there).
func Move(dir string, pid int) error {
	if pid < 1 {
		return fmt.Errorf("pid %d: must be at least 1", pid)
	}
	return write(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid))
}

// Holds says whether pid is in the group at dir (its cgroup.procs); a group not made yet holds
// nothing.
func Holds(dir string, pid int) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", filepath.Join(dir, "cgroup.procs"), err)
	}
	return slices.Contains(strings.Fields(string(b)), strconv.Itoa(pid)), nil
}

// Place is Ensure then Move: the tenant's group with its limits, and pid in it.
func Place(root, tenant string, l Limits, pid int) (string, error) {
	dir, err := Ensure(root, tenant, l)
	if err != nil {
		return "", err
	}
	if err := Move(dir, pid); err != nil {
		return "", err
	}
	return dir, nil
}

func requireControllers(file string, want ...string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("reading %s (is it a cgroup v2 mount root?): %w", file, err)
	}
	have := map[string]bool{}
	for _, c := range strings.Fields(string(b)) {
		have[c] = true
	}
	var missing []string
	for _, c := range want {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lists %q: the cgroup v2 controller(s) %s are not available there (bound to cgroup v1?)",
			file, strings.TrimSpace(string(b)), strings.Join(missing, ", "))
	}
	return nil
}

// write writes one value the way cgroupfs takes it: one write(2) to an existing file (a regular
// file is created, so a directory laid out like cgroupfs works in tests).
func write(file, value string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, file, err)
	}
	if _, err := f.WriteString(value); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %q to %s: %w", value, file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, file, err)
	}
	return nil
}
