// Package hookcli is cmd/envelope_guard's command line, a package of its own so that pvesim's
// tests run the very code PVE would run as the hookscript (see cmd/envelope_guard for the usage).
package hookcli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/cgroupslice"
	"github.com/deevnet/tenant/internal/guard"
	"github.com/deevnet/tenant/internal/wire"
)

// EnvelopeFile is the envelope file's name beside the guard in the node's snippets directory.
const EnvelopeFile = "deevnet-envelopes.json"

// SnippetVolume is the guard's volume on every node: the hookscript the substrate sets.
const SnippetVolume = "local:snippets/deevnet-envelope-guard"

type options struct {
	envelopes, cgroupRoot, runDir, volume string
	nft, wireFile                         string
	sysRoot                               string
	check                                 bool
	template                              int
	away, node                            string
	// joining (sweep, wire, contain; with -check only): VMID=POOL,... the VMs this run puts into a tenant's pool
	// (tenant_vm's adopt), swept as that pool's: check mode shows the hookscript the real run's
	// sweep sets once they are in it
	joining string
	// joiningVNets (wire, with -check only): VNET=POOL,... the VNets this run marks as the tenant's
	// (tenant_vrf's adopt sets the alias Terraform's VNet lacks)
	joiningVNets   string
	stdout, stderr io.Writer
}

// Main runs the guard with args (os.Args[1:]) and returns its exit status: 1 with one line on
// stderr (PVE logs it in the start task) when it refuses or fails.
func Main(args []string) int { return Run(args, os.Stdout, os.Stderr) }

// Run is Main writing to stdout and stderr (what changed, and what was left or refused).
func Run(args []string, stdout, stderr io.Writer) int {
	if err := run(args, stdout, stderr); err != nil {
		_, _ = fmt.Fprintln(stderr, strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	return 0
}

func run(args []string, stdout, stderr io.Writer) error {
	o := options{stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("envelope_guard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.envelopes, "envelopes", "", "the envelope file (default: "+EnvelopeFile+" beside this executable)")
	fs.StringVar(&o.cgroupRoot, "cgroup-root", "/sys/fs/cgroup", "the cgroup v2 mount root")
	fs.StringVar(&o.runDir, "run-dir", "/var/run/qemu-server", "where qemu-server keeps <vmid>.pid")
	fs.StringVar(&o.sysRoot, "sys-root", "/sys", "sysfs, where the devices behind a tenant's thin pool are found (its io.max)")
	fs.StringVar(&o.volume, "volume", SnippetVolume, "sweep: the hookscript volume to set")
	fs.BoolVar(&o.check, "check", false, "sweep: report what would change, change nothing")
	fs.IntVar(&o.template, "template", 0, "sweep: also set the hookscript on this template (the one the tenants clone)")
	fs.StringVar(&o.joining, "joining", "", "sweep, wire, contain with -check: VMID=POOL,... VMs this run puts into a tenant's pool, counted as its members")
	fs.StringVar(&o.joiningVNets, "joining-vnets", "", "wire with -check: VNET=POOL,... VNets this run marks as the tenant's")
	fs.StringVar(&o.away, "away", "", "sweep: nodes to leave alone, comma-separated (the substrate's maintenance list)")
	fs.StringVar(&o.node, "node", "", "contain, wire, watch: this node's name in PVE (default: the host name up to its first dot, as PVE's nodename)")
	fs.StringVar(&o.nft, "nft", "nft", "wire, watch: the nft command that loads the table ('': only write -wire-file)")
	fs.StringVar(&o.wireFile, "wire-file", WireFile, "wire, watch: the table the guard loaded last")
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "usage: envelope_guard [flags] <vmid> <phase> | place <vmid> | sweep | contain | wire | watch | skeleton\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.envelopes == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the envelope file beside the guard: %w", err)
		}
		o.envelopes = filepath.Join(filepath.Dir(exe), EnvelopeFile)
	}
	a := fs.Args()
	if len(a) == 1 && a[0] == "sweep" {
		return sweep(o)
	}
	if len(a) == 1 && a[0] == "contain" {
		return contain(o)
	}
	if len(a) == 1 && a[0] == "wire" {
		return wireCmd(o)
	}
	if len(a) == 1 && a[0] == "watch" {
		return watch(o)
	}
	if len(a) == 1 && a[0] == "skeleton" {
		_, err := fmt.Fprint(o.stdout, wire.Skeleton())
		return err
	}
	if len(a) != 2 {
		fs.Usage()
		return errors.New("want two arguments: <vmid> <phase>, or place <vmid>; or one: sweep, contain, wire, watch or skeleton")
	}
	if a[0] == "place" {
		return place(o, a[1])
	}
	switch a[1] {
	case "pre-start":
		return preStart(o, a[0])
	case "post-start":
		return place(o, a[0])
	}
	_, err := vmid(a[0])
	return err
}

func vmid(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 100 {
		return 0, fmt.Errorf("vmid %q: must be a whole number of at least 100", s)
	}
	return n, nil
}

// state is what both phases read: the envelope file and the cluster's guests.
func state(o options) (guard.File, []guard.Resource, error) {
	b, err := os.ReadFile(o.envelopes)
	if err != nil {
		return guard.File{}, nil, fmt.Errorf("reading the envelope file: %w", err)
	}
	f, err := guard.Parse(b)
	if err != nil {
		return guard.File{}, nil, fmt.Errorf("%s: %w", o.envelopes, err)
	}
	var res []guard.Resource
	if err := pvesh(&res, "/cluster/resources", "--type", "vm"); err != nil {
		return guard.File{}, nil, err
	}
	return f, res, nil
}

// vmState reads a phase's vmid argument, then the envelope file and the cluster's guests.
func vmState(o options, arg string) (int, guard.File, []guard.Resource, error) {
	id, err := vmid(arg)
	if err != nil {
		return 0, guard.File{}, nil, err
	}
	f, res, err := state(o)
	return id, f, res, err
}

func preStart(o options, arg string) error {
	id, f, res, err := vmState(o, arg)
	if err != nil {
		return err
	}
	_, self, err := f.TenantOf(res, id)
	if err != nil {
		return err
	}
	var config map[string]any
	if err := pvesh(&config, fmt.Sprintf("/nodes/%s/qemu/%d/config", self.Node, id)); err != nil {
		return err
	}
	running, err := f.RunningPeers(res, id)
	if err != nil {
		return err
	}
	// what each running peer runs with (current=1: not its pending changes), not its maxcpu
	peers := map[int]map[string]any{}
	if err := runningConfigs(running, peers); err != nil {
		return err
	}
	name, err := f.CheckStart(res, id, config, peers)
	if err != nil || name == "" {
		return err
	}
	// The start is allowed: the tenant's group here gets its share counting this VM, before QEMU
	// runs (other nodes' groups follow at their next contain, the timer's or a play's).
	peers[id] = config
	share, err := f.NodeShare(res, name, self.Node, peers, id)
	if err != nil {
		return err
	}
	return refresh(o, name, self.Node, share)
}

// runningConfigs reads into configs what each guest runs with (GET .../config with current=1:
// not its pending changes), the values NodeShare and CheckStart count; one already read is not
// read again.
func runningConfigs(running []guard.Resource, configs map[int]map[string]any) error {
	for _, r := range running {
		if _, ok := configs[r.VMID]; ok {
			continue
		}
		var c map[string]any
		if err := pvesh(&c, fmt.Sprintf("/nodes/%s/qemu/%d/config", r.Node, r.VMID), "--current", "1"); err != nil {
			return err
		}
		configs[r.VMID] = c
	}
	return nil
}

// shareOf is tenant's share on node (guard.NodeShare), reading the running configurations of the
// tenant's running guests into configs first; starting as NodeShare takes it.
func shareOf(f guard.File, res []guard.Resource, tenant, node string, configs map[int]map[string]any, starting int) (guard.Share, error) {
	if err := runningConfigs(f.Running(res, tenant), configs); err != nil {
		return guard.Share{}, err
	}
	return f.NodeShare(res, tenant, node, configs, starting)
}

// refresh sets the limits of tenant's group on this node to its share where the group exists and
// they differ, with one line saying what changed and why (with -check: what would). A group not
// made yet is left: Place makes it with the share when a VM of the tenant first runs here.
func refresh(o options, tenant, node string, s guard.Share) error {
	l, err := limitsOf(o, s)
	if err != nil {
		return fmt.Errorf("tenant %s: %w", tenant, err)
	}
	dir := cgroupslice.Dir(o.cgroupRoot, tenant)
	changes, made, err := cgroupslice.Changes(dir, l)
	if err != nil {
		return fmt.Errorf("tenant %s: %w", tenant, err)
	}
	if !made || len(changes) == 0 {
		return nil
	}
	if !o.check {
		if _, err := cgroupslice.Ensure(o.cgroupRoot, tenant, l); err != nil {
			return fmt.Errorf("tenant %s: setting its share on %s: %w", tenant, node, err)
		}
	}
	_, _ = fmt.Fprintf(o.stdout, "tenant %s: %s on %s: %s (its share here: %s)\n", tenant, dir, node, strings.Join(changes, ", "), s)
	return nil
}

func place(o options, arg string) error {
	id, f, res, err := vmState(o, arg)
	if err != nil {
		return err
	}
	name, self, err := f.TenantOf(res, id)
	if err != nil || name == "" {
		return err // a VM of no tenant stays where PVE put it
	}
	pid, err := qemuPid(o.runDir, id)
	if err != nil {
		return err
	}
	// its QEMU runs here (its pid): counted on this node whatever /cluster/resources says yet
	var config map[string]any
	if err := pvesh(&config, fmt.Sprintf("/nodes/%s/qemu/%d/config", self.Node, id), "--current", "1"); err != nil {
		return err
	}
	share, err := shareOf(f, res, name, self.Node, map[int]map[string]any{id: config}, id)
	if err != nil {
		return err
	}
	l, err := limitsOf(o, share)
	if err != nil {
		return fmt.Errorf("tenant %s: placing VM %d (pid %d): %w", name, id, pid, err)
	}
	dir, err := cgroupslice.Place(o.cgroupRoot, name, l, pid)
	if err != nil {
		return fmt.Errorf("tenant %s: placing VM %d (pid %d): %w", name, id, pid, err)
	}
	_, _ = fmt.Fprintf(o.stdout, "tenant %s: VM %d (pid %d) placed in %s\n", name, id, pid, dir)
	return nil
}

// limitsOf is what the group gets for s: memory.max, cpu.max, and io.max on each device under
// the tenant's thin pool here (cgroupslice.Devices; none while the pool is not active here).
func limitsOf(o options, s guard.Share) (cgroupslice.Limits, error) {
	l := cgroupslice.Limits{MemoryMiB: s.MemoryMaxMiB(), Cores: s.Cores}
	if !s.CapsIO() {
		return l, nil
	}
	devs, err := cgroupslice.Devices(o.sysRoot, s.ThinData)
	if err != nil {
		return l, fmt.Errorf("the devices under %s for its io.max: %w", s.ThinData, err)
	}
	for _, d := range devs {
		l.IO = append(l.IO, cgroupslice.IOLimit{Dev: d, RBps: s.ReadBps, WBps: s.WriteBps, RIOPS: s.ReadIOPS, WIOPS: s.WriteIOPS})
	}
	return l, nil
}

// qemuPid reads the pid qemu-server keeps for a running VM (<run-dir>/<vmid>.pid).
func qemuPid(runDir string, id int) (int, error) {
	pidFile := filepath.Join(runDir, strconv.Itoa(id)+".pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, fmt.Errorf("VM %d's QEMU pid: %w", id, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid < 1 {
		return 0, fmt.Errorf("%s: %q is not a pid", pidFile, strings.TrimSpace(string(b)))
	}
	return pid, nil
}

// contain puts every tenant VM running on this node outside its tenant's group into it: one
// started without the guard (made with POST /qemu and started before a sweep set the hookscript,
// or started while the guard's post-start failed) runs in PVE's qemu.slice, where no tenant limit
// reaches it. In its tenant's group the kernel holds it, with the tenant's other VMs, to the
// envelope's memory and CPU: past them it is throttled or OOM-killed inside that group, never
// stopped by the substrate, and no other tenant loses memory to it. One line per VM placed (or,
// with -check, that would be) on stdout; a running VM with no QEMU pid file here is named on
// stderr and left (its status is stale, or it runs elsewhere).
func contain(o options) error {
	f, res, node, err := nodeState(o)
	if err != nil {
		return err
	}
	var errs []string
	// Each tenant's share here first: its group's limits follow what runs on the other nodes
	// (guard.NodeShare), and a VM placed below lands in a group already at its share.
	configs := map[int]map[string]any{}
	shares := map[string]guard.Share{}
	share := func(name string) (guard.Share, error) {
		if s, ok := shares[name]; ok {
			return s, nil
		}
		s, err := shareOf(f, res, name, node, configs, 0)
		if err != nil {
			return guard.Share{}, fmt.Errorf("tenant %s: its share on %s: %w", name, node, err)
		}
		shares[name] = s
		return s, nil
	}
	for _, name := range slices.Sorted(maps.Keys(f.Tenants)) {
		made, err := cgroupslice.Made(cgroupslice.Dir(o.cgroupRoot, name))
		if err == nil && !made {
			continue // no group here: Place makes it with the share when one of its VMs is placed
		}
		var s guard.Share
		if err == nil {
			s, err = share(name)
		}
		if err == nil {
			err = refresh(o, name, node, s)
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, r := range res {
		if r.Type != "qemu" || r.Template == 1 || r.Node != node || r.Status != "running" {
			continue
		}
		name := tenantOf(f, res, r.VMID, &errs)
		if name == "" {
			continue
		}
		pid, err := qemuPid(o.runDir, r.VMID)
		if errors.Is(err, os.ErrNotExist) {
			_, _ = fmt.Fprintf(o.stderr, "tenant %s: VM %d reads running on %s but has no QEMU pid file in %s: left alone\n", name, r.VMID, node, o.runDir)
			continue
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		dir := cgroupslice.Dir(o.cgroupRoot, name)
		in, err := cgroupslice.Holds(dir, pid)
		if err != nil {
			errs = append(errs, fmt.Sprintf("tenant %s: VM %d (pid %d): %v", name, r.VMID, pid, err))
			continue
		}
		if in {
			continue
		}
		s, err := share(name)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if !o.check {
			l, err := limitsOf(o, s)
			if err == nil {
				_, err = cgroupslice.Place(o.cgroupRoot, name, l, pid)
			}
			if err != nil {
				errs = append(errs, fmt.Sprintf("tenant %s: placing VM %d (pid %d): %v", name, r.VMID, pid, err))
				continue
			}
		}
		_, _ = fmt.Fprintf(o.stdout, "tenant %s: VM %d (pid %d) ran outside its tenant's group: placed in %s, its envelope caps it (not stopped)\n", name, r.VMID, pid, dir)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// sweep sets the guard as the hookscript of every VM of a tenant's pool that lacks it (a VM made
// with POST /qemu, not cloned from the template, has none), and of the -template, as root may, and prints one line per
// VM it changed (or, with -check, would change). It stops nothing: a VM already running without
// the guard is named, and its next start is guarded.
func sweep(o options) error {
	f, res, err := state(o)
	if err != nil {
		return err
	}
	if o.template != 0 && !isTemplate(res, o.template) {
		return fmt.Errorf("-template %d: no template with that vmid in /cluster/resources", o.template)
	}
	if o.joining != "" {
		if !o.check {
			return errors.New("-joining: only with -check (a real sweep reads the pools as they are)")
		}
		if err := joinPools(res, o.joining); err != nil {
			return err
		}
	}
	away := strings.FieldsFunc(o.away, func(c rune) bool { return c == ',' })
	unswept := map[string]int{}
	var errs []string
	for _, r := range res {
		if r.Type != "qemu" {
			continue
		}
		var who string
		if r.Template == 1 {
			// The shared template: a clone copies its hookscript (qemu-server clone_vm copies
			// every option but drives, NICs and snapshots), so every clone is guarded from birth.
			if r.VMID != o.template {
				continue
			}
			who = fmt.Sprintf("template %d", r.VMID)
		} else {
			name := tenantOf(f, res, r.VMID, &errs)
			if name == "" {
				continue
			}
			who = fmt.Sprintf("tenant %s: VM %d", name, r.VMID)
		}
		if r.Status == "unknown" || slices.Contains(away, r.Node) {
			// Its node is away (in maintenance, or PVE's status once the guest's stats expire):
			// nothing starts there now, and the first sweep after it returns reaches it. On
			// stderr: stdout is what changed.
			unswept[r.Node]++
			continue
		}
		path := fmt.Sprintf("/nodes/%s/qemu/%d/config", r.Node, r.VMID)
		var config map[string]any
		if err := pvesh(&config, path); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		was, _ := config["hookscript"].(string)
		if was == o.volume {
			continue
		}
		if was == "" {
			was = "none"
		}
		running := ""
		if r.Status == "running" {
			running = "; it runs unguarded until its next start (not stopped)"
		}
		if !o.check {
			if err := pveshSet(path, "--hookscript", o.volume); err != nil {
				errs = append(errs, err.Error())
				continue
			}
		}
		_, _ = fmt.Fprintf(o.stdout, "%s: hookscript %s, was %s%s\n", who, o.volume, was, running)
	}
	for _, n := range slices.Sorted(maps.Keys(unswept)) {
		_, _ = fmt.Fprintf(o.stderr, "node %s is away: its %d tenant guest(s) not swept\n", n, unswept[n])
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// tenantOf names the tenant whose pool holds vmid, "" for a VM of no tenant or one the envelope
// file refuses (that refusal added to errs: the caller goes on with the other VMs).
// joinPools puts each VM of spec (VMID=POOL,...) that is in no pool into POOL, in res only.
func joinPools(res []guard.Resource, spec string) error {
	for _, e := range strings.FieldsFunc(spec, func(c rune) bool { return c == ',' }) {
		id, pool, ok := strings.Cut(e, "=")
		n, err := vmid(id)
		if !ok || err != nil || pool == "" {
			return fmt.Errorf("-joining %q: want VMID=POOL,... with a vmid of at least 100 and a pool", e)
		}
		for i := range res {
			if res[i].Type == "qemu" && res[i].VMID == n && res[i].Pool == "" {
				res[i].Pool = pool
			}
		}
	}
	return nil
}

func tenantOf(f guard.File, res []guard.Resource, vmid int, errs *[]string) string {
	name, _, err := f.TenantOf(res, vmid)
	if err != nil {
		*errs = append(*errs, err.Error())
		return ""
	}
	return name
}

func isTemplate(res []guard.Resource, vmid int) bool {
	for _, r := range res {
		if r.Type == "qemu" && r.VMID == vmid && r.Template == 1 {
			return true
		}
	}
	return false
}

func pveshSet(path string, args ...string) error {
	cmd := exec.Command("pvesh", append([]string{"set", path}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pvesh set %s: %w: %s", path, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// pvesh runs `pvesh get <path> [args] --output-format json` and decodes its answer into v.
func pvesh(v any, path string, args ...string) error {
	cmd := exec.Command("pvesh", append(append([]string{"get", path}, args...), "--output-format", "json")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("pvesh get %s: %w: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("pvesh get %s: not JSON: %w", path, err)
	}
	return nil
}
