package pvesim

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/guard/hookcli"
	"github.com/deevnet/tenant/internal/pvesim/pvesh"
)

// guardName is the guard's file name in the tests' snippets directory: a copy of this test
// binary, which TestMain makes the guard when it runs under that name.
const guardName = "deevnet-envelope-guard"

// TestMain lets this test binary be the programs a hookscript start runs: pvesh (the link pvesim
// puts on the script's PATH) and cmd/envelope_guard's code (a copy named guardName).
func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "pvesh":
		os.Exit(pvesh.Main(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	case guardName:
		os.Exit(hookcli.Main(os.Args[1:]))
	}
	// Built with -race, each copy this binary starts (pvesh, the guard: several per hookscript
	// start) would sleep the race runtime's default second before exiting; the copies inherit this.
	if os.Getenv("GORACE") == "" {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// hookSim is vmConformanceSetup's cluster with a node disk (RenderDir) and this binary as pvesh.
func hookSim(t *testing.T, mut ...func(*Config)) (s *Server, a, b onboarded, snippets string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s = startSim(t, append([]func(*Config){func(c *Config) { c.RenderDir, c.Pvesh = dir, exe }}, mut...)...)
	a = onboard(t, s, "tdemo", 1, "tdemov0", "10001")
	b = onboard(t, s, "tother", 2, "totherv0", "10002")
	snippets = filepath.Join(dir, node, "var/lib/vz/snippets")
	if err := os.MkdirAll(snippets, 0o755); err != nil {
		t.Fatal(err)
	}
	return s, a, b, snippets
}

func writeScript(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func vmStatus(t *testing.T, c *client, vmid string) string {
	t.Helper()
	var st map[string]any
	c.ok("GET", "/nodes/"+node+"/qemu/"+vmid+"/status/current", nil, &st)
	return st["status"].(string)
}

// The hookscript runs at start as vm_start_nolock runs it (QemuServer.pm:5631 pre-start, stop on
// error; :6029 post-start), as `<script> <vmid> <phase>`, with a pvesh that answers as root.
func TestConformanceHookscriptAtStart(t *testing.T) {
	s, a, _, snippets := hookSim(t)
	writeScript(t, filepath.Join(snippets, "hook.sh"), `#!/bin/sh
st=$(pvesh get /nodes/`+node+`/qemu/$1/status/current --output-format json | sed 's/.*"status":"\([a-z]*\)".*/\1/')
echo "hook $1 $2 status=$st"
`, 0o755)
	writeScript(t, filepath.Join(snippets, "refuse.sh"), "#!/bin/sh\n[ \"$2\" = pre-start ] && { echo \"refused: $1 is over\" >&2; exit 3; }\nexit 0\n", 0o755)
	writeScript(t, filepath.Join(snippets, "plain.txt"), "#!/bin/sh\n", 0o644)
	for i, vmid := range []string{"10101", "10102", "10103", "10104"} {
		if _, exit := a.tenant.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", vmid, "name", "tdemo-"+vmid, "pool", a.pool)); exit != "OK" {
			t.Fatalf("clone %d: %s", i, exit)
		}
	}
	hook := func(vmid, volid string) {
		nodeRoot(t, s).ok("PUT", "/nodes/"+node+"/qemu/"+vmid+"/config", vals("hookscript", volid), nil)
	}
	hook("10101", "local:snippets/hook.sh")
	hook("10102", "local:snippets/refuse.sh")
	hook("10103", "local:snippets/missing.sh")
	hook("10104", "local:snippets/plain.txt")

	upid, exit := a.tenant.task("POST", "/nodes/"+node+"/qemu/10101/status/start", nil)
	log := taskLog(t, a.tenant, node, upid)
	if exit != "OK" || !strings.Contains(log, "hook 10101 pre-start status=stopped\nhook 10101 post-start status=running\nTASK OK") {
		t.Fatalf("start with hook.sh: %s, log:\n%s", exit, log)
	}
	// Already running: refused before the hookscript (QemuServer.pm:5531), which does not run.
	upid, exit = a.tenant.task("POST", "/nodes/"+node+"/qemu/10101/status/start", nil)
	if log := taskLog(t, a.tenant, node, upid); exit != "VM 10101 already running" || strings.Contains(log, "hook 10101") {
		t.Fatalf("a second start: %q, log:\n%s", exit, log)
	}
	for _, c := range []struct{ vmid, exit, log string }{
		{"10102", "hookscript error for 10102 on pre-start: command '/var/lib/vz/snippets/refuse.sh 10102 pre-start' failed: exit code 3 ", "refused: 10102 is over"},
		{"10103", "hookscript error for 10103 on pre-start: script 'local:snippets/missing.sh' does not exist ", ""},
		{"10104", "hookscript error for 10104 on pre-start: script 'local:snippets/plain.txt' is not executable ", ""},
	} {
		upid, exit := a.tenant.task("POST", "/nodes/"+node+"/qemu/"+c.vmid+"/status/start", nil)
		if exit != c.exit {
			t.Errorf("start %s: exit %q, want %q", c.vmid, exit, c.exit)
		}
		want := strings.TrimPrefix(c.log+"\nTASK ERROR: "+c.exit, "\n")
		if log := taskLog(t, a.tenant, node, upid); !strings.Contains(log, want) {
			t.Errorf("start %s: log\n%s\nlacks %q", c.vmid, log, want)
		}
		if st := vmStatus(t, a.tenant, c.vmid); st != "stopped" {
			t.Errorf("VM %s is %s after a failed pre-start", c.vmid, st)
		}
	}
	// Root's own: the tenant can neither delete nor change it (Qemu.pm:1037, as at set).
	expect(t, a.tenant, []refusal{
		{name: "deleting the hookscript", source: "Qemu.pm:1037", method: "PUT", path: "/nodes/" + node + "/qemu/10102/config",
			params: []string{"delete", "hookscript"}, status: 500, msg: "only root can set 'hookscript' config\n"},
		{name: "another hookscript", source: "Qemu.pm:1037", method: "PUT", path: "/nodes/" + node + "/qemu/10102/config",
			params: []string{"hookscript", "local:snippets/hook.sh"}, status: 500, msg: "only root can set 'hookscript' config\n"},
	})
}

// cmd/envelope_guard's code as the template's hookscript, against the simulator: a tenant's
// clones, a bigger VM, a VM made without the template and a snippet, each refused at start
// naming the envelope; starts inside it go through.
func TestEnvelopeGuardAtStart(t *testing.T) {
	s, a, b, snippets := hookSim(t)
	installGuard(t, snippets)
	env, _ := json.Marshal(map[string]any{"tenants": map[string]any{
		"tdemo":  map[string]any{"pool": a.pool, "envelope": map[string]int{"vms": 2, "cores": 4, "memory": 4096, "disk": 64}},
		"tother": map[string]any{"pool": b.pool, "envelope": map[string]int{"vms": 8, "cores": 16, "memory": 32768, "disk": 256}},
	}})
	writeScript(t, filepath.Join(snippets, hookcli.EnvelopeFile), string(env), 0o644)
	guardVol := "local:snippets/" + guardName
	guard := filepath.Join(snippets, guardName)
	sweep := func(args ...string) string { t.Helper(); return sweepOut(t, s, guard, append(args, "sweep")...) }
	// The substrate's install (roles/substrate tasks/guard.yml): the sweep sets the guard on the
	// shared template, once.
	if out, want := sweep("-template", "9000"), "template 9000: hookscript "+guardVol+", was none\n"; out != want {
		t.Fatalf("sweep -template 9000: %q, want %q", out, want)
	}
	if out := sweep("-template", "9000"); out != "" {
		t.Fatalf("a second sweep -template 9000: %q, want nothing", out)
	}
	if out, err := sweepErr(s, guard, "-template", "9001", "sweep"); err == nil || out != "-template 9001: no template with that vmid in /cluster/resources\n" {
		t.Fatalf("sweep -template 9001 (no such template): %q %v, want the refusal", out, err)
	}

	cfg := func(vmid string) string { return "/nodes/" + node + "/qemu/" + vmid + "/config" }
	for _, vmid := range []string{"10101", "10102", "10103"} {
		if _, exit := a.tenant.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", vmid, "name", "tdemo-"+vmid, "pool", a.pool)); exit != "OK" {
			t.Fatalf("clone %s: %s", vmid, exit)
		}
	}
	// A clone carries the template's hookscript: qemu-server's clone_vm copies every option but
	// snapshot data, unusedN, NICs (new MAC) and drives ("copy everything else", API2/Qemu.pm), so
	// the substrate sets the guard on the template once and every clone is guarded from its creation.
	var cloned map[string]any
	a.tenant.ok("GET", cfg("10101"), nil, &cloned)
	if cloned["hookscript"] != guardVol {
		t.Fatalf("clone 10101's hookscript is %v, want the template's %s", cloned["hookscript"], guardVol)
	}
	refused := func(vmid string) string {
		return "hookscript error for " + vmid + " on pre-start: command '/var/lib/vz/snippets/" + guardName + " " + vmid + " pre-start' failed: exit code 1 "
	}
	start := func(c *client, vmid, wantExit, wantLog string) {
		t.Helper()
		upid, exit := c.task("POST", "/nodes/"+node+"/qemu/"+vmid+"/status/start", nil)
		log := taskLog(t, c, node, upid)
		if exit != wantExit || !strings.Contains(log, wantLog) {
			t.Fatalf("start %s: exit %q, want %q; log:\n%s\nwant in it %q", vmid, exit, wantExit, log, wantLog)
		}
		want := "stopped"
		if wantExit == "OK" {
			want = "running"
		}
		if st := vmStatus(t, c, vmid); st != want {
			t.Fatalf("VM %s is %s, want %s", vmid, st, want)
		}
	}
	// A bigger VM: the template's 2 vCPUs and 2048 MiB each would be fine; 3 vCPUs are over
	// once 10101 runs.
	a.tenant.ok("PUT", cfg("10102"), vals("cores", "3"), nil)
	// 10101 runs with vcpus 1 of its 2 cores: /cluster/resources says maxcpu 1, but it may
	// hotplug to 2, so the guard counts 2 from its running configuration (2 + 3 = 5, not 4).
	a.tenant.ok("PUT", cfg("10101"), vals("vcpus", "1"), nil)
	// In the envelope: post-start cannot place a QEMU that pvesim does not run, and says so.
	start(a.tenant, "10101", "OK", "hookscript error for 10101 on post-start: command '/var/lib/vz/snippets/"+guardName+" 10101 post-start' failed: exit code 1")
	start(a.tenant, "10102", refused("10102"), "tenant tdemo: starting 10102 makes 5 vCPUs running, over its envelope of 4 vCPUs (envelope.cores)")
	a.tenant.ok("PUT", cfg("10102"), vals("cores", "1", "memory", "2560"), nil)
	start(a.tenant, "10102", refused("10102"), "tenant tdemo: starting 10102 makes 4608 MiB running, over its envelope of 4096 MiB (envelope.memory)")
	a.tenant.ok("PUT", cfg("10102"), vals("memory", "2048"), nil)
	start(a.tenant, "10102", "OK", "TASK OK")
	// More clones than vms.
	start(a.tenant, "10103", refused("10103"), "tenant tdemo: starting 10103 makes 3 VMs running, over its envelope of 2 VMs (envelope.vms)")
	// tother's envelope is its own: tdemo's running VMs do not count against it.
	if _, exit := b.root.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10201", "name", "tother-1", "pool", b.pool)); exit != "OK" {
		t.Fatalf("tother clone: %s", exit)
	}
	start(b.tenant, "10201", "OK", "TASK OK")
	// A snippet, on a stopped VM in the envelope.
	a.tenant.task("POST", "/nodes/"+node+"/qemu/10102/status/stop", nil)
	a.tenant.ok("PUT", cfg("10103"), vals("cicustom", "user="+guardVol), nil)
	start(a.tenant, "10103", refused("10103"), `tenant tdemo: VM 10103's cicustom "user=`+guardVol+`" names a snippet`)

	// A VM made without the template has no hookscript; the sweep, as root on the node, sets it.
	a.tenant.ok("POST", "/nodes/"+node+"/qemu", vals("vmid", "10104", "pool", a.pool, "cores", "8", "memory", "1024"), nil)
	want := "tenant tdemo: VM 10104: hookscript " + guardVol + ", was none\n"
	if out := sweep("-check"); out != want {
		t.Fatalf("sweep -check: %q, want %q", out, want)
	}
	var c map[string]any
	a.root.ok("GET", cfg("10104"), nil, &c)
	if c["hookscript"] != nil {
		t.Fatalf("sweep -check set the hookscript: %v", c["hookscript"])
	}
	if out := sweep(); out != want {
		t.Fatalf("sweep: %q, want %q", out, want)
	}
	if out := sweep(); out != "" {
		t.Fatalf("a second sweep: %q, want nothing", out)
	}
	start(a.tenant, "10104", refused("10104"), "tenant tdemo: starting 10104 makes 10 vCPUs running, over its envelope of 4 vCPUs (envelope.cores)")

	// place: what post-start does on a node, here into a directory laid out like cgroupfs and
	// qemu-server's pid file of running 10101.
	cg, run := t.TempDir(), t.TempDir()
	writeScript(t, filepath.Join(cg, "cgroup.controllers"), "cpuset cpu io memory pids", 0o644)
	writeScript(t, filepath.Join(run, "10101.pid"), "4242\n", 0o644)
	out := sweepOut(t, s, guard, "-cgroup-root", cg, "-run-dir", run, "place", "10101")
	slice := filepath.Join(cg, "deevnet.slice", "tenant-tdemo.slice")
	if want := "tenant tdemo: VM 10101 (pid 4242) placed in " + slice + "\n"; out != want {
		t.Fatalf("place: %q, want %q", out, want)
	}
	// memory.max: the 4096 MiB share and 10101's QEMU itself (128 MiB + 2048/128)
	for file, want := range map[string]string{"memory.max": "4445962240", "cpu.max": "400000 100000", "cgroup.procs": "4242"} {
		if b, err := os.ReadFile(filepath.Join(slice, file)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", file, b, err, want)
		}
	}
	// The gap ADR-0014 names: until a sweep, a VM made without the template starts unguarded,
	// over the envelope; the sweep names it and stops nothing.
	a.tenant.ok("POST", "/nodes/"+node+"/qemu", vals("vmid", "10105", "pool", a.pool, "cores", "8"), nil)
	start(a.tenant, "10105", "OK", "TASK OK")
	want = "tenant tdemo: VM 10105: hookscript " + guardVol + ", was none; it runs unguarded until its next start (not stopped)\n"
	if out := sweep(); out != want {
		t.Fatalf("sweep: %q, want %q", out, want)
	}
	if st := vmStatus(t, a.tenant, "10105"); st != "running" {
		t.Fatalf("the sweep left 10105 %s", st)
	}
	// contain, on each node: the unguarded 10105 (its QEMU pid 5151) is put into tdemo's group,
	// where memory.max and cpu.max cap it with tdemo's other VMs; it keeps running. 10101 is
	// already there (placed above); a running VM without a pid file here is left, named. tdemo now
	// runs 10 vCPUs, over its envelope of 4: the group's share is what runs here as configured
	// (max(envelope less the other nodes' use, what runs here)), so cpu.max rises to 10 vCPUs
	// rather than starve what runs, and caps any growth beyond it.
	run2 := t.TempDir()
	writeScript(t, filepath.Join(run2, "10101.pid"), "4242\n", 0o644)
	writeScript(t, filepath.Join(run2, "10105.pid"), "5151\n", 0o644)
	contain := func(args ...string) string {
		t.Helper()
		return sweepOut(t, s, guard, append([]string{"-cgroup-root", cg, "-run-dir", run2, "-node", node}, append(args, "contain")...)...)
	}
	placed := "tenant tdemo: VM 10105 (pid 5151) ran outside its tenant's group: placed in " + slice + ", its envelope caps it (not stopped)\n"
	noPid := "tenant tother: VM 10201 reads running on " + node + " but has no QEMU pid file in " + run2 + ": left alone\n"
	procs := func() string { b, _ := os.ReadFile(filepath.Join(slice, "cgroup.procs")); return string(b) }
	cpuMax := func() string { b, _ := os.ReadFile(filepath.Join(slice, "cpu.max")); return string(b) }
	// memory.max grows by 10105's QEMU itself (128 MiB + 512/128)
	raised := "tenant tdemo: " + slice + " on " + node + ": memory.max 4445962240 -> 4584374272, cpu.max 400000 100000 -> 1000000 100000 (its share here: 4096 MiB, 10 vCPUs: envelope 4096 MiB, 4 vCPUs less 0 MiB, 0 vCPUs running on other nodes; 2560 MiB, 10 vCPUs run here; memory.max 4372 MiB: 276 MiB more for QEMU itself, its VM(s) here 2)\n"
	if out := contain("-check"); out != raised+placed+noPid || procs() != "4242" || cpuMax() != "400000 100000" {
		t.Fatalf("contain -check: %q (cgroup.procs %q, cpu.max %q), want %q and nothing moved or written", out, procs(), cpuMax(), raised+placed+noPid)
	}
	if out := contain(); out != raised+placed+noPid || procs() != "5151" || cpuMax() != "1000000 100000" {
		t.Fatalf("contain: %q (cgroup.procs %q, cpu.max %q), want %q and 5151 moved", out, procs(), cpuMax(), raised+placed+noPid)
	}
	if st := vmStatus(t, a.tenant, "10105"); st != "running" {
		t.Fatalf("contain left 10105 %s", st)
	}
	// On another node (its own cgroupfs, here run2's pid files) nothing of this one is touched.
	if out := sweepOut(t, s, guard, "-cgroup-root", t.TempDir(), "-run-dir", run2, "-node", "dv02hyp002p09", "contain"); out != "" {
		t.Fatalf("contain -node dv02hyp002p09: %q, want nothing", out)
	}
	// A node in the substrate's maintenance list is left alone (and said so, on stderr).
	a.tenant.ok("POST", "/nodes/"+node+"/qemu", vals("vmid", "10106", "pool", a.pool), nil)
	if out, want := sweep("-away", "dv02hyp002p09,"+node), "node "+node+" is away: its 7 tenant guest(s) not swept\n"; out != want {
		t.Fatalf("sweep -away: %q, want %q", out, want)
	}
	a.root.ok("GET", cfg("10106"), nil, &c)
	if c["hookscript"] != nil {
		t.Fatalf("sweep -away %s set 10106's hookscript: %v", node, c["hookscript"])
	}
}

// installGuard copies this test binary into snippets as the guard (TestMain runs it as such).
func installGuard(t *testing.T, snippets string) {
	t.Helper()
	exe, _ := os.Executable()
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = src.Close() }()
	dst, err := os.OpenFile(filepath.Join(snippets, guardName), os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// A tenant running on two nodes (ADR-0014, decision 3, the share): tdemo's token makes a VM on
// each node with POST /qemu (no hookscript) and starts both, unguarded. contain on each node puts
// each VM into tdemo's group there with the node's share of the envelope (the envelope less what
// tdemo's VMs on the other node are configured with), not the whole envelope per node, which let a
// tenant on n nodes use n envelopes. Memory hotplugged into the VM on p03 shrinks p02's cap at
// p02's next contain (-check reports it first and changes nothing); a second run changes nothing.
func TestEnvelopeGuardShareAcrossNodes(t *testing.T) {
	const p03 = "dv02hyp002p03"
	s, a, _, snippets := hookSim(t, func(c *Config) {
		c.Nodes = append(c.Nodes, NodeConfig{Name: p03, MaxCPU: 16, MaxMem: 1 << 36})
	})
	installGuard(t, snippets)
	env, _ := json.Marshal(map[string]any{"tenants": map[string]any{
		"tdemo": map[string]any{"pool": a.pool, "envelope": map[string]int{"vms": 4, "cores": 8, "memory": 8192, "disk": 64}},
	}})
	writeScript(t, filepath.Join(snippets, hookcli.EnvelopeFile), string(env), 0o644)
	guard := filepath.Join(snippets, guardName)
	for _, v := range []struct{ node, vmid, cores, memory string }{{node, "10111", "2", "2048"}, {p03, "10112", "4", "4096"}} {
		a.tenant.ok("POST", "/nodes/"+v.node+"/qemu", vals("vmid", v.vmid, "pool", a.pool, "cores", v.cores, "memory", v.memory), nil)
		if _, exit := a.tenant.task("POST", "/nodes/"+v.node+"/qemu/"+v.vmid+"/status/start", nil); exit != "OK" {
			t.Fatalf("start %s on %s: %s", v.vmid, v.node, exit)
		}
	}
	type side struct{ node, cg, run, slice string }
	sides := map[string]side{}
	for n, vm := range map[string]string{node: "10111", p03: "10112"} {
		sd := side{n, t.TempDir(), t.TempDir(), ""}
		sd.slice = filepath.Join(sd.cg, "deevnet.slice", "tenant-tdemo.slice")
		writeScript(t, filepath.Join(sd.cg, "cgroup.controllers"), "cpuset cpu io memory pids", 0o644)
		writeScript(t, filepath.Join(sd.run, vm+".pid"), "4"+vm[2:]+"\n", 0o644)
		sides[n] = sd
	}
	contain := func(n string, args ...string) string {
		t.Helper()
		sd := sides[n]
		return sweepOut(t, s, guard, append([]string{"-cgroup-root", sd.cg, "-run-dir", sd.run, "-node", n}, append(args, "contain")...)...)
	}
	limits := func(n string) string {
		t.Helper()
		var got []string
		for _, f := range []string{"memory.max", "cpu.max", "cgroup.procs"} {
			b, err := os.ReadFile(filepath.Join(sides[n].slice, f))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(b))
		}
		return strings.Join(got, " / ")
	}
	for n, vm := range map[string]string{node: "10111", p03: "10112"} {
		want := "tenant tdemo: VM " + vm + " (pid 4" + vm[2:] + ") ran outside its tenant's group: placed in " + sides[n].slice + ", its envelope caps it (not stopped)\n"
		if out := contain(n); out != want {
			t.Fatalf("contain on %s: %q, want %q", n, out, want)
		}
	}
	// p02: 8192 - 4096 MiB on p03, 8 - 4 vCPUs; p03: 8192 - 2048, 8 - 2. Not 8192 MiB and 8 vCPUs each.
	// memory.max adds each VM's QEMU itself (128 MiB + RAM/128): 144 MiB on p02, 160 on p03.
	if got, want := limits(node), "4445962240 / 400000 100000 / 4111"; got != want {
		t.Fatalf("%s: %s, want %s (its share)", node, got, want)
	}
	if got, want := limits(p03), "6610223104 / 600000 100000 / 4112"; got != want {
		t.Fatalf("%s: %s, want %s (its share)", p03, got, want)
	}
	for n := range sides {
		if out := contain(n); out != "" {
			t.Fatalf("contain again on %s: %q, want nothing", n, out)
		}
	}
	// Memory hotplug into the running 10112 (pvesim applies it at once, as PVE's hotplug does for
	// memory within its limits): no pre-start sees it; p02's next contain shrinks p02's cap.
	a.tenant.ok("PUT", "/nodes/"+p03+"/qemu/10112/config", vals("memory", "6144"), nil)
	want := "tenant tdemo: " + sides[node].slice + " on " + node + ": memory.max 4445962240 -> 2298478592 (its share here: 2048 MiB, 4 vCPUs: envelope 8192 MiB, 8 vCPUs less 6144 MiB, 4 vCPUs running on other nodes; 2048 MiB, 2 vCPUs run here; memory.max 2192 MiB: 144 MiB more for QEMU itself, its VM(s) here 1)\n"
	if out := contain(node, "-check"); out != want || limits(node) != "4445962240 / 400000 100000 / 4111" {
		t.Fatalf("contain -check after the hotplug: %q (%s), want %q and nothing written", out, limits(node), want)
	}
	if out := contain(node); out != want || limits(node) != "2298478592 / 400000 100000 / 4111" {
		t.Fatalf("contain after the hotplug: %q (%s), want %q", out, limits(node), want)
	}
	// p03 keeps its share (what runs there, 6144 MiB), and its memory.max follows 10112's QEMU.
	want = "tenant tdemo: " + sides[p03].slice + " on " + p03 + ": memory.max 6610223104 -> 6627000320 (its share here: 6144 MiB, 6 vCPUs: envelope 8192 MiB, 8 vCPUs less 2048 MiB, 2 vCPUs running on other nodes; 6144 MiB, 4 vCPUs run here; memory.max 6320 MiB: 176 MiB more for QEMU itself, its VM(s) here 1)\n"
	if out := contain(p03); out != want {
		t.Fatalf("contain on %s after the hotplug: %q, want %q", p03, out, want)
	}
	for n := range sides {
		if out := contain(n); out != "" {
			t.Fatalf("contain again on %s: %q, want nothing", n, out)
		}
	}
	if got := limits(p03); got != "6627000320 / 600000 100000 / 4112" {
		t.Fatalf("%s: %s: what runs there (6144 MiB) stays under its cap", p03, got)
	}
}

// sweepErr runs the guard at path with args as root on the node would: its output and exit.
func sweepErr(s *Server, path string, args ...string) (string, error) {
	s.mu.Lock()
	env, err := s.hookEnv()
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(path, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// sweepOut runs the guard at path with args as root on the node would, returning its output.
func sweepOut(t *testing.T, s *Server, path string, args ...string) string {
	t.Helper()
	s.mu.Lock()
	env, err := s.hookEnv()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v: %s", args, err, out)
	}
	return string(out)
}

// nodeRoot is root@pam on the node (qm set, pvesh): the one who may set a hookscript.
func nodeRoot(t *testing.T, s *Server) *client {
	return &client{t: t, base: s.URL() + "/api2/json", auth: s.NodeRootAuth(), hc: httpClientFor(t, s)}
}
