package hookcli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePvesh puts on PATH a pvesh that answers `pvesh get <path> ... --output-format json` from
// dir/<path with / as _>.json (current=1 or not: the same file) and refuses anything else, and
// returns a function writing such an answer.
func fakePvesh(t *testing.T) func(path string, v any) {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
[ "$1" = get ] || { echo "fake pvesh: only get" >&2; exit 2; }
f="` + dir + `/$(echo "$2" | tr / _).json"
[ -f "$f" ] || { echo "fake pvesh: no $f" >&2; exit 2; }
cat "$f"
`
	if err := os.WriteFile(filepath.Join(dir, "pvesh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return func(path string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, strings.ReplaceAll(path, "/", "_")+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// node is one node's side of the guard: a directory laid out like its cgroupfs and qemu-server's
// run directory.
type node struct{ name, cgroup, run string }

func newNode(t *testing.T, name string, pids map[string]string) node {
	t.Helper()
	n := node{name, t.TempDir(), t.TempDir()}
	if err := os.WriteFile(filepath.Join(n.cgroup, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for vmid, pid := range pids {
		if err := os.WriteFile(filepath.Join(n.run, vmid+".pid"), []byte(pid+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func (n node) slice(file string) string {
	b, err := os.ReadFile(filepath.Join(n.cgroup, "deevnet.slice", "tenant-tdemo.slice", file))
	if err != nil {
		return "none"
	}
	return strings.TrimSpace(string(b))
}

// guard runs the guard on n as PVE or the substrate would, returning stdout, stderr and the exit.
func (n node) guard(t *testing.T, envelopes string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	rc := Run(append([]string{"-envelopes", envelopes, "-cgroup-root", n.cgroup, "-run-dir", n.run, "-node", n.name}, args...), &out, &errOut)
	return out.String(), errOut.String(), rc
}

// tdemo (32768 MiB, 16 vCPUs) runs 10101 (4096 MiB, 2 vCPUs) on p02 and 10102 (16384 MiB, 2 x 4
// vCPUs) on p03, both started unguarded: contain on each node puts each into tdemo's group there
// with its share, not the whole envelope; a change elsewhere (memory hotplugged into 10102) moves
// p02's cap at its next contain, reported first with -check; a start on p02 (pre-start) and its
// placement (post-start) set the share counting the new VM. Each run again changes nothing.
func TestShareAcrossNodes(t *testing.T) {
	answer := fakePvesh(t)
	envelopes := filepath.Join(t.TempDir(), EnvelopeFile)
	if err := os.WriteFile(envelopes, []byte(`{"tenants": {"tdemo": {"pool": "tenant-tdemo", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := []map[string]any{
		{"type": "qemu", "vmid": 10101, "node": "p02", "pool": "tenant-tdemo", "status": "running"},
		{"type": "qemu", "vmid": 10102, "node": "p03", "pool": "tenant-tdemo", "status": "running"},
		{"type": "qemu", "vmid": 10103, "node": "p02", "pool": "tenant-tdemo", "status": "stopped"},
	}
	answer("/cluster/resources", res)
	answer("/nodes/p02/qemu/10101/config", map[string]any{"cores": 2, "memory": "4096"})
	answer("/nodes/p03/qemu/10102/config", map[string]any{"sockets": 2, "cores": 4, "memory": "16384"})
	answer("/nodes/p02/qemu/10103/config", map[string]any{"cores": 4, "memory": "8192"})
	p02 := newNode(t, "p02", map[string]string{"10101": "4101"})
	p03 := newNode(t, "p03", map[string]string{"10102": "4102"})

	run := func(n node, want string, args ...string) {
		t.Helper()
		out, errOut, rc := n.guard(t, envelopes, args...)
		if rc != 0 || out != want {
			t.Fatalf("%s %v: exit %d, stdout %q, stderr %q; want stdout %q", n.name, args, rc, out, errOut, want)
		}
	}
	limits := func(n node, mem, cpu string) {
		t.Helper()
		if got := n.slice("memory.max") + " / " + n.slice("cpu.max"); got != mem+" / "+cpu {
			t.Fatalf("%s: memory.max / cpu.max %s, want %s / %s", n.name, got, mem, cpu)
		}
	}
	placed := func(n node, vmid, pid string) string {
		return "tenant tdemo: VM " + vmid + " (pid " + pid + ") ran outside its tenant's group: placed in " +
			filepath.Join(n.cgroup, "deevnet.slice", "tenant-tdemo.slice") + ", its envelope caps it (not stopped)\n"
	}
	run(p02, placed(p02, "10101", "4101"), "-check", "contain")
	limits(p02, "none", "none")
	run(p02, placed(p02, "10101", "4101"), "contain")
	run(p03, placed(p03, "10102", "4102"), "contain")
	// p02: 32768 - 16384 MiB on p03, 16 - 8 vCPUs; p03: 32768 - 4096, 16 - 2. Not 32768 / 16 each.
	// memory.max adds QEMU's own memory for each VM running there (128 MiB + RAM/128): 10101's
	// 160 MiB on p02, 10102's 256 on p03.
	limits(p02, "17347641344", "800000 100000")
	limits(p03, "30333206528", "1400000 100000")
	run(p02, "", "contain")
	run(p03, "", "contain")

	// 10102 gets 8192 MiB more (memory hotplug, which no pre-start sees): p02's cap shrinks at
	// its next contain; p03 keeps what runs there (24576 MiB, under its 28672), and its memory.max
	// follows 10102's QEMU, now 320 MiB.
	answer("/nodes/p03/qemu/10102/config", map[string]any{"sockets": 2, "cores": 4, "memory": "24576"})
	slice02 := filepath.Join(p02.cgroup, "deevnet.slice", "tenant-tdemo.slice")
	shrink := "tenant tdemo: " + slice02 + " on p02: memory.max 17347641344 -> 8757706752 (its share here: 8192 MiB, 8 vCPUs: envelope 32768 MiB, 16 vCPUs less 24576 MiB, 8 vCPUs running on other nodes; 4096 MiB, 2 vCPUs run here; memory.max 8352 MiB: 160 MiB more for QEMU itself, its VM(s) here 1)\n"
	run(p02, shrink, "-check", "contain")
	limits(p02, "17347641344", "800000 100000")
	run(p02, shrink, "contain")
	limits(p02, "8757706752", "800000 100000")
	run(p02, "", "contain")
	slice03 := filepath.Join(p03.cgroup, "deevnet.slice", "tenant-tdemo.slice")
	run(p03, "tenant tdemo: "+slice03+" on p03: memory.max 30333206528 -> 30400315392 (its share here: 28672 MiB, 14 vCPUs: envelope 32768 MiB, 16 vCPUs less 4096 MiB, 2 vCPUs running on other nodes; 24576 MiB, 8 vCPUs run here; memory.max 28992 MiB: 320 MiB more for QEMU itself, its VM(s) here 1)\n", "contain")
	run(p03, "", "contain")
	limits(p03, "30400315392", "1400000 100000")

	// 10102 stops; 10103 starts on p02: pre-start gives p02's group the whole envelope (nothing
	// runs elsewhere) before QEMU runs, post-start places it there.
	res[1]["status"] = "stopped"
	answer("/cluster/resources", res)
	run(p02, "tenant tdemo: "+slice02+" on p02: memory.max 8757706752 -> 34728837120, cpu.max 800000 100000 -> 1600000 100000 (its share here: 32768 MiB, 16 vCPUs: envelope 32768 MiB, 16 vCPUs less 0 MiB, 0 vCPUs running on other nodes; 12288 MiB, 6 vCPUs run here; memory.max 33120 MiB: 352 MiB more for QEMU itself, its VM(s) here 2)\n",
		"10103", "pre-start")
	limits(p02, "34728837120", "1600000 100000")
	run(p02, "", "10103", "pre-start")
	if err := os.WriteFile(filepath.Join(p02.run, "10103.pid"), []byte("4103\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(p02, "tenant tdemo: VM 10103 (pid 4103) placed in "+slice02+"\n", "10103", "post-start")
	if got := p02.slice("cgroup.procs"); got != "4103" {
		t.Fatalf("cgroup.procs %q", got)
	}
	limits(p02, "34728837120", "1600000 100000")
}

// A share that cannot be computed (a running VM's configuration unreadable) is an error naming
// the tenant, the node and the read; contain goes on with the other tenants.
func TestShareUnreadable(t *testing.T) {
	answer := fakePvesh(t)
	envelopes := filepath.Join(t.TempDir(), EnvelopeFile)
	if err := os.WriteFile(envelopes, []byte(`{"tenants": {"tdemo": {"pool": "tenant-tdemo", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	answer("/cluster/resources", []map[string]any{
		{"type": "qemu", "vmid": 10101, "node": "p02", "pool": "tenant-tdemo", "status": "running"},
		{"type": "qemu", "vmid": 10102, "node": "p03", "pool": "tenant-tdemo", "status": "running"},
	})
	answer("/nodes/p02/qemu/10101/config", map[string]any{"cores": 2, "memory": "4096"})
	p02 := newNode(t, "p02", map[string]string{"10101": "4101"})
	out, errOut, rc := p02.guard(t, envelopes, "contain")
	if rc != 1 || out != "" || !strings.HasPrefix(errOut, "tenant tdemo: its share on p02: pvesh get /nodes/p03/qemu/10102/config: exit status 2: fake pvesh: no ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", rc, out, errOut)
	}
	if got := p02.slice("memory.max"); got != "none" {
		t.Fatalf("a group made without its share: memory.max %s", got)
	}
}

// The envelope's disk I/O rates: place gives tdemo's group on p02 an io.max on each whole disk
// under its thin pool's data device there (sysfs, -sys-root: sda3 a partition of sda, and
// nvme0n1), whatever the VM's own disk options; a disk added under the pool reaches the group at
// the next contain, reported first with -check.
func TestIOMaxOnTheDevicesUnderTheThinPool(t *testing.T) {
	answer := fakePvesh(t)
	envelopes := filepath.Join(t.TempDir(), EnvelopeFile)
	if err := os.WriteFile(envelopes, []byte(`{"tenants": {"tdemo": {"pool": "tenant-tdemo", "vg": "pve", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256, "disk_write_mbps": 100, "disk_read_iops": 2000}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	answer("/cluster/resources", []map[string]any{{"type": "qemu", "vmid": 10101, "node": "p02", "pool": "tenant-tdemo", "status": "running"}})
	answer("/nodes/p02/qemu/10101/config", map[string]any{"cores": 2, "memory": "4096", "scsi0": "tenant-tdemo:vm-10101-disk-0,mbps_wr=5000,size=8G"})
	p02 := newNode(t, "p02", map[string]string{"10101": "4101"})
	sys := t.TempDir()
	mk := func(path, dev string, dm string, slaves ...string) {
		t.Helper()
		d := filepath.Join(sys, "devices", path)
		files := map[string]string{"dev": dev}
		if dm != "" {
			files["dm/name"] = dm
		}
		if strings.Contains(path, "/") && dm == "" {
			files["partition"] = "1"
		}
		for _, s := range slaves {
			files["slaves/"+s] = ""
		}
		for f, body := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(d, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, f), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_ = os.MkdirAll(filepath.Join(sys, "class", "block"), 0o755)
		if err := os.Symlink(d, filepath.Join(sys, "class", "block", filepath.Base(path))); err != nil {
			t.Fatal(err)
		}
	}
	mk("sda", "8:0", "")
	mk("sda/sda3", "8:3", "")
	mk("nvme0n1", "259:0", "")
	mk("virtual-dm-7", "254:7", "pve-tenant--tdemo_tdata", "sda3")
	guard := func(args ...string) string {
		t.Helper()
		out, errOut, rc := p02.guard(t, envelopes, append([]string{"-sys-root", sys}, args...)...)
		if rc != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, rc, errOut)
		}
		return out
	}
	guard("place", "10101")
	if got, want := p02.slice("io.max"), "8:0 rbps=max wbps=104857600 riops=2000 wiops=max"; got != want {
		t.Fatalf("io.max %q, want %q", got, want)
	}
	if got := guard("contain"); got != "" {
		t.Fatalf("contain again: %q", got)
	}
	// the pool's data extended onto nvme0n1
	if err := os.WriteFile(filepath.Join(sys, "devices", "virtual-dm-7", "slaves", "nvme0n1"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	slice := filepath.Join(p02.cgroup, "deevnet.slice", "tenant-tdemo.slice")
	want := "tenant tdemo: " + slice + " on p02: io.max none -> 259:0 rbps=max wbps=104857600 riops=2000 wiops=max (its share here: 32768 MiB, 16 vCPUs: envelope 32768 MiB, 16 vCPUs less 0 MiB, 0 vCPUs running on other nodes; 4096 MiB, 2 vCPUs run here; memory.max 32928 MiB: 160 MiB more for QEMU itself, its VM(s) here 1; disk I/O write 100 MiB/s, read 2000 IOPS on the devices under pve-tenant--tdemo_tdata)\n"
	if got := guard("-check", "contain"); got != want {
		t.Fatalf("contain -check: %q, want %q", got, want)
	}
	if got := guard("contain"); got != want {
		t.Fatalf("contain: %q, want %q", got, want)
	}
	if got, want := p02.slice("io.max"), "259:0 rbps=max wbps=104857600 riops=2000 wiops=max\n8:0 rbps=max wbps=104857600 riops=2000 wiops=max"; got != want {
		t.Fatalf("io.max %q, want %q", got, want)
	}
	// a bad rate in the envelope file: refused naming it, nothing written
	if err := os.WriteFile(envelopes, []byte(`{"tenants": {"tdemo": {"pool": "tenant-tdemo", "vg": "pve", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256, "disk_write_mbps": 0}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, rc := p02.guard(t, envelopes, "-sys-root", sys, "contain")
	if rc != 1 || out != "" || !strings.Contains(errOut, "tenants.tdemo.envelope.disk_write_mbps 0 must be at least 1") {
		t.Fatalf("bad rate: exit %d, stdout %q, stderr %q", rc, out, errOut)
	}
}
