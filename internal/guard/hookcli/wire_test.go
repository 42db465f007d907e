package hookcli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/deevnet/tenant/internal/testenv"
)

// wireCluster answers what the guard's wire reads: tdemo with 10101 running on p02 (net0 on its
// VNet tn01v0), 10102 stopped there, and 10103 running on p02 with a NIC on tother's VNet.
func wireCluster(t *testing.T) (answer func(string, any), envelopes string) {
	t.Helper()
	answer = fakePvesh(t)
	envelopes = filepath.Join(t.TempDir(), EnvelopeFile)
	if err := os.WriteFile(envelopes, []byte(`{"tenants": {
		"tdemo": {"pool": "tenant-tdemo", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256, "bandwidth": 20, "broadcast": 100}},
		"tother": {"pool": "tenant-tother", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	answer("/cluster/resources", []map[string]any{
		{"type": "qemu", "vmid": 10101, "node": "p02", "pool": "tenant-tdemo", "status": "running"},
		{"type": "qemu", "vmid": 10102, "node": "p02", "pool": "tenant-tdemo", "status": "stopped"},
		{"type": "qemu", "vmid": 10103, "node": "p02", "pool": "tenant-tdemo", "status": "running"},
		{"type": "qemu", "vmid": 500, "node": "p02", "status": "running"},
	})
	answer("/cluster/sdn/vnets", []map[string]any{
		{"vnet": "tn01v0", "zone": "tn01", "alias": "tenant-tdemo"},
		{"vnet": "tn02v0", "zone": "tn02", "alias": "tenant-tother"},
		{"vnet": "sitenet", "zone": "site"},
	})
	answer("/cluster/sdn/vnets/tn01v0/subnets", []map[string]any{{"subnet": "tn01-10.20.129.0-24", "cidr": "10.20.129.0/24"}})
	answer("/cluster/sdn/vnets/tn02v0/subnets", []map[string]any{{"subnet": "tn02-10.20.130.0-24", "cidr": "10.20.130.0/24"}})
	answer("/nodes/p02/qemu/10101/config", map[string]any{"net0": "virtio=BC:24:11:00:01:01,bridge=tn01v0", "ipconfig0": "ip=10.20.129.11/24,gw=10.20.129.1"})
	answer("/nodes/p02/qemu/10102/config", map[string]any{"net0": "virtio=BC:24:11:00:01:02,bridge=tn01v0", "ipconfig0": "ip=10.20.129.12/24,gw=10.20.129.1"})
	answer("/nodes/p02/qemu/10103/config", map[string]any{"net0": "virtio=BC:24:11:00:01:03,bridge=tn02v0", "ipconfig0": "ip=10.20.130.66/24"})
	return answer, envelopes
}

const (
	admitted10101 = "tenant tdemo: VM 10101 net0 on tn01v0 (tap10101i0, fwpr10101p0) sends as bc:24:11:00:01:01 10.20.129.11 only"
	refused10103  = "tenant tdemo: VM 10103 net0: bridge tn02v0 is not one of the tenant's VNets: its frames are dropped"
)

// The hypervisor play's and the timer's wire: the table written (here not loaded: an empty -nft),
// one line per change, the refused NIC named, nothing on a second run; a MAC changed through the
// API is reported first by -check, which writes nothing, then replaces the port.
func TestWireSaysWhatItAdmitsAndChangesNothingTwice(t *testing.T) {
	answer, envelopes := wireCluster(t)
	p02 := newNode(t, "p02", nil)
	file := filepath.Join(t.TempDir(), "wire.nft")
	wire := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, rc := p02.guard(t, envelopes, append([]string{"-nft=", "-wire-file", file}, args...)...)
		if rc != 0 {
			t.Fatalf("wire %v: exit %d: %s", args, rc, errOut)
		}
		return out, errOut
	}
	out, errOut := wire("wire")
	want := "wire on p02: + tenant tdemo: 20 Mbit/s, 100 broadcast frames/s\nwire on p02: + " + admitted10101 + "\n"
	if out != want || strings.TrimSpace(errOut) != refused10103 {
		t.Fatalf("first run: stdout %q stderr %q; want %q and %q", out, errOut, want, refused10103)
	}
	table, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(table), `"tap10101i0" . bc:24:11:00:01:01 . 10.20.129.11`) ||
		strings.Contains(string(table), "10102") || strings.Contains(string(table), "tap500") {
		t.Fatalf("the table (%v):\n%s", err, table)
	}
	if out, _ := wire("wire"); out != "" {
		t.Fatalf("second run changed: %q", out)
	}
	answer("/nodes/p02/qemu/10101/config", map[string]any{"net0": "virtio=BC:24:11:00:01:99,bridge=tn01v0", "ipconfig0": "ip=10.20.129.11/24"})
	moved := strings.Replace(admitted10101, "bc:24:11:00:01:01", "bc:24:11:00:01:99", 1)
	want = "wire on p02: + " + moved + "\nwire on p02: - " + admitted10101 + "\n"
	if out, _ := wire("-check", "wire"); out != want {
		t.Fatalf("-check after a MAC change: %q, want %q", out, want)
	}
	if after, _ := os.ReadFile(file); string(after) != string(table) {
		t.Fatal("-check wrote the table")
	}
	if out, _ := wire("wire"); out != want {
		t.Fatalf("after a MAC change: %q, want %q", out, want)
	}
}

// A VM port that appears on the node (here a veth named as qemu-server names 10102's tap, in a
// namespace of the test's) is admitted by the watch, and its QEMU put into its tenant's group,
// although /cluster/resources still says the VM is stopped: the window between the port's link and
// the table that admits it is measured.
func TestWatchAdmitsAPortWhenItAppears(t *testing.T) {
	testenv.Root(t)
	testenv.Binary(t, "ip")
	_, envelopes := wireCluster(t)
	p02 := newNode(t, "p02", map[string]string{"10102": "4102"})
	file := filepath.Join(t.TempDir(), "wire.nft")
	name := "dvtwatch" + strings.TrimPrefix(filepath.Base(t.TempDir()), "00")
	name = name[:min(len(name), 15)]
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ns.Close() }()
	var stdout, stderr strings.Builder
	o := options{envelopes: envelopes, cgroupRoot: p02.cgroup, runDir: p02.run, node: "p02", nft: "", wireFile: file,
		stdout: &stdout, stderr: &stderr}
	stop, synced, done := make(chan struct{}), make(chan []int, 8), make(chan error, 1)
	go func() { done <- watchUntil(o, &ns, stop, synced) }()
	defer func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("watch: %v", err)
		}
	}()
	<-synced // the first run, before any event
	start := time.Now()
	if out, err := exec.Command("ip", "-n", name, "link", "add", "tap10102i0", "type", "veth", "peer", "name", "eth0").CombinedOutput(); err != nil {
		t.Fatalf("ip link add: %v: %s", err, out)
	}
	select {
	case ids := <-synced:
		window := time.Since(start)
		t.Logf("the port's link to its admission (wire and placement): %v", window)
		if len(ids) != 1 || ids[0] != 10102 {
			t.Fatalf("the watch ran for %v, want [10102]", ids)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no run 10 s after the port appeared: %s", stderr.String())
	}
	table, _ := os.ReadFile(file)
	if !strings.Contains(string(table), `"tap10102i0" . bc:24:11:00:01:02 . 10.20.129.12`) {
		t.Fatalf("10102's port not admitted:\n%s\nstderr: %s", table, stderr.String())
	}
	if procs := p02.slice("cgroup.procs"); procs != "4102" {
		t.Fatalf("10102's QEMU (pid 4102) not placed in tdemo's group: cgroup.procs %q; stdout %q stderr %q", procs, stdout.String(), stderr.String())
	}
}

// A node's first table with no tenant port on it (a fabric before its first VM) is still a write:
// -check says so, naming the file, and writes nothing; the run writes it; the next run says nothing.
func TestWireNamesTheFirstTableWithNoPort(t *testing.T) {
	answer := fakePvesh(t)
	envelopes := filepath.Join(t.TempDir(), EnvelopeFile)
	if err := os.WriteFile(envelopes, []byte(`{"tenants": {"tdemo": {"pool": "tenant-tdemo", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	answer("/cluster/resources", []map[string]any{})
	answer("/cluster/sdn/vnets", []map[string]any{})
	p02 := newNode(t, "p02", nil)
	file := filepath.Join(t.TempDir(), "wire.nft")
	wire := func(args ...string) string {
		t.Helper()
		out, errOut, rc := p02.guard(t, envelopes, append([]string{"-nft=", "-wire-file", file}, args...)...)
		if rc != 0 {
			t.Fatalf("wire %v: exit %d: %s", args, rc, errOut)
		}
		return out
	}
	want := "wire on p02: table " + file + " rewritten (it was absent)\n"
	if out := wire("-check", "wire"); out != want {
		t.Fatalf("-check: %q, want %q", out, want)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("-check wrote the table: %v", err)
	}
	if out := wire("wire"); out != want {
		t.Fatalf("first run: %q, want %q", out, want)
	}
	if out := wire("wire"); out != "" {
		t.Fatalf("second run: %q", out)
	}
}
