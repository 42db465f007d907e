package guard

import (
	"strings"
	"testing"
)

const gib = int64(1) << 30

func file(t *testing.T) File {
	t.Helper()
	f, err := Parse([]byte(`{"tenants": {
		"tdemo":  {"pool": "tenant-tdemo",  "envelope": {"vms": 3, "cores": 16, "memory": 32768, "disk": 256}},
		"tother": {"pool": "tenant-tother", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Two of tdemo's VMs run (2 + 8 vCPUs, 4 + 16 GiB); tother runs a big one; 10103 is stopped.
var cluster = []Resource{
	{VMID: 10101, Pool: "tenant-tdemo", Status: "running", MaxCPU: 2, MaxMem: 4 * gib},
	{VMID: 10102, Pool: "tenant-tdemo", Status: "running", MaxCPU: 8, MaxMem: 16 * gib},
	{VMID: 10103, Pool: "tenant-tdemo", Status: "stopped", MaxCPU: 64, MaxMem: 256 * gib},
	{VMID: 10104, Pool: "tenant-tdemo", Status: "stopped"},
	{VMID: 10201, Pool: "tenant-tother", Status: "running", MaxCPU: 14, MaxMem: 30 * gib},
	{VMID: 10202, Pool: "tenant-tother", Status: "stopped"},
	{VMID: 9000, Status: "stopped"},
	{VMID: 10301, Pool: "tenant-tnew", Status: "stopped"},
}

// configsOf is each running guest's running configuration, as the cluster's figures say (the
// tests' clusters run guests whose maxcpu PVE did not cap).
func configsOf(resources []Resource) map[int]map[string]any {
	out := map[int]map[string]any{}
	for _, r := range resources {
		if r.Status == "running" {
			out[r.VMID] = map[string]any{"cores": float64(r.MaxCPU), "memory": float64(r.MaxMem >> 20)}
		}
	}
	return out
}

func TestCheckStart(t *testing.T) {
	f := file(t)
	for _, c := range []struct {
		name   string
		vmid   int
		config map[string]any
		tenant string
		want   string // "": allowed
	}{
		{"inside the envelope", 10103, map[string]any{"cores": 4.0, "memory": "8192"}, "tdemo", ""},
		{"exactly the envelope", 10103, map[string]any{"cores": 3.0, "sockets": 2.0, "memory": "current=12288"}, "tdemo", ""},
		{"defaults: 1 vCPU, 512 MiB", 10104, map[string]any{}, "tdemo", ""},
		{"a bigger VM: vCPUs", 10103, map[string]any{"cores": 10.0, "memory": 1024.0}, "tdemo",
			"tenant tdemo: starting 10103 makes 20 vCPUs running, over its envelope of 16 vCPUs (envelope.cores)"},
		{"sockets count", 10103, map[string]any{"cores": 4.0, "sockets": 2.0}, "tdemo", "makes 18 vCPUs running"},
		{"a bigger VM: memory", 10103, map[string]any{"memory": "current=16385"}, "tdemo",
			"tenant tdemo: starting 10103 makes 36865 MiB running, over its envelope of 32768 MiB (envelope.memory)"},
		{"all three at once", 10103, map[string]any{"cores": 64.0, "memory": "262144"}, "tdemo",
			"makes 74 vCPUs running, over its envelope of 16 vCPUs (envelope.cores); makes 282624 MiB running"},
		{"a snippet", 10104, map[string]any{"cicustom": "user=local:snippets/deevnet-envelopes.json"}, "tdemo",
			`tenant tdemo: VM 10104's cicustom "user=local:snippets/deevnet-envelopes.json" names a snippet; a tenant's VM may use none`},
		{"another tenant's running VMs are not tdemo's", 10202, map[string]any{}, "tother", ""},
		{"tother's own running VMs count", 10202, map[string]any{"cores": 3.0}, "tother", "tenant tother: starting 10202 makes 17 vCPUs running"},
		{"the template is no tenant's", 9000, map[string]any{"cores": 128.0}, "", ""},
		{"a tenant pool without an envelope", 10301, map[string]any{}, "",
			"VM 10301 is in pool tenant-tnew, a tenant's pool with no envelope in the envelope file"},
		{"a vmid the cluster does not have", 4242, map[string]any{}, "", "VM 4242 is not in /cluster/resources"},
		{"bad cores", 10104, map[string]any{"cores": "x"}, "tdemo", `VM 10104: config cores "x" is not a whole number of at least 1`},
		{"bad memory", 10104, map[string]any{"memory": "current=lots"}, "tdemo", `VM 10104: config memory "current=lots" has no whole number of MiB`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tenant, err := f.CheckStart(cluster, c.vmid, c.config, configsOf(cluster))
			if tenant != c.tenant {
				t.Errorf("tenant %q, want %q", tenant, c.tenant)
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("more than one line: %q", err)
			}
		})
	}
}

func TestVMCount(t *testing.T) {
	f := file(t)
	running := append([]Resource{}, cluster...)
	running[2].Status, running[2].MaxCPU, running[2].MaxMem = "running", 1, gib // tdemo: 3 running
	_, err := f.CheckStart(running, 10104, map[string]any{}, configsOf(running))
	if want := "tenant tdemo: starting 10104 makes 4 VMs running, over its envelope of 3 VMs (envelope.vms)"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	// The target start of a live migration: 10103 runs on the source and is not counted twice.
	if _, err := f.CheckStart(running, 10103, map[string]any{}, configsOf(running)); err != nil {
		t.Fatalf("refused: %v", err)
	}
}

// A running peer is counted by what it runs with, not by /cluster/resources' maxcpu, which PVE
// caps at the node's CPU count and replaces with vcpus (QemuServer.pm vmstatus): 10101 runs 2
// sockets x 16 cores on a node of 16 CPUs (maxcpu 16) with vcpus 2 (maxcpu 2).
func TestRunningPeerCountedByItsConfig(t *testing.T) {
	f := file(t)
	capped := []Resource{
		{VMID: 10101, Pool: "tenant-tdemo", Status: "running", MaxCPU: 2, MaxMem: gib},
		{VMID: 10103, Pool: "tenant-tdemo", Status: "stopped"},
	}
	peers := map[int]map[string]any{10101: {"sockets": "2", "cores": "16", "vcpus": "2", "memory": "1024"}}
	_, err := f.CheckStart(capped, 10103, map[string]any{}, peers)
	if want := "tenant tdemo: starting 10103 makes 33 vCPUs running, over its envelope of 16 vCPUs (envelope.cores)"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	peers[10101]["cores"] = "1"
	if _, err := f.CheckStart(capped, 10103, map[string]any{}, peers); err != nil {
		t.Fatalf("refused: %v", err)
	}
	// A running peer whose configuration was not read is not guessed.
	_, err = f.CheckStart(capped, 10103, map[string]any{}, nil)
	if want := "tenant tdemo: VM 10101 runs in pool tenant-tdemo and its configuration was not read; refusing to start 10103 without counting it"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if got, err := f.RunningPeers(capped, 10103); err != nil || len(got) != 1 || got[0].VMID != 10101 {
		t.Fatalf("RunningPeers: %v, %v", got, err)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"tenants": {"tdemo": {"envelope": {"vms": 1, "cores": 1, "memory": 1, "disk": 1}}}}`, "tenants.tdemo.pool: missing"},
		{`{"tenants": {"tdemo": {"pool": "tenant-tdemo", "envelope": {"vms": 1, "cores": 0, "memory": 1, "disk": 1}}}}`, "tenants.tdemo.envelope.cores 0 must be at least 1 vCPUs"},
		{`[]`, "not an envelope file"},
	} {
		if _, err := Parse([]byte(c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
	}
}

// tdemo (envelope 16 vCPUs, 32768 MiB) runs on two nodes: 10101 (2 vCPUs, 4 GiB) on p02 and
// 10102 (8 vCPUs, 16 GiB) on p03; 10103 is stopped on p02; tother runs 14 vCPUs on p02.
var twoNodes = []Resource{
	{VMID: 10101, Node: "p02", Pool: "tenant-tdemo", Status: "running"},
	{VMID: 10102, Node: "p03", Pool: "tenant-tdemo", Status: "running"},
	{VMID: 10103, Node: "p02", Pool: "tenant-tdemo", Status: "stopped"},
	{VMID: 10201, Node: "p02", Pool: "tenant-tother", Status: "running"},
}

func twoNodeConfigs() map[int]map[string]any {
	return map[int]map[string]any{
		10101: {"cores": 2.0, "memory": "4096"},
		10102: {"sockets": "2", "cores": "4", "vcpus": "1", "memory": "current=16384"},
		10201: {"cores": 14.0, "memory": 30720.0},
	}
}

// The share: each node's cap is the envelope less what runs elsewhere, never below what runs
// here, so the caps add up to the envelope while the tenant runs within it.
func TestNodeShare(t *testing.T) {
	f := file(t)
	for _, c := range []struct {
		name, tenant, node string
		resources          []Resource
		starting           int
		config             map[string]any // starting's configuration
		mem, cores         int
		qemu               int // QEMU's own memory of the VMs counted here: 128 MiB + RAM/128 each
	}{
		{"p02: the envelope less p03's 10102", "tdemo", "p02", twoNodes, 0, nil, 32768 - 16384, 16 - 8, 128 + 32},
		{"p03: the envelope less p02's 10101", "tdemo", "p03", twoNodes, 0, nil, 32768 - 4096, 16 - 2, 128 + 128},
		{"a node where nothing of tdemo runs: less both", "tdemo", "p04", twoNodes, 0, nil, 32768 - 4096 - 16384, 16 - 2 - 8, 0},
		{"tother's own, on one node: the whole envelope", "tother", "p02", twoNodes, 0, nil, 32768, 16, 128 + 240},
		// 10103 starts on p03 (resources still say p02, as at a migration's target start): here, not elsewhere
		{"starting counts where it starts", "tdemo", "p03", twoNodes, 10103, map[string]any{"cores": 4.0, "memory": 8192.0}, 32768 - 4096, 16 - 2, 128 + 128 + 128 + 64},
		{"starting: its node's share grows past the envelope's rest to hold it", "tdemo", "p03", twoNodes, 10103, map[string]any{"cores": 8.0, "memory": 16384.0}, 32768, 16, 128 + 128 + 128 + 128},
		{"over the envelope (a VM started before a sweep): each node keeps what runs there", "tdemo", "p02",
			append([]Resource{{VMID: 10104, Node: "p03", Pool: "tenant-tdemo", Status: "running"}}, twoNodes...), 0, nil, 4096, 2, 128 + 32},
		{"nothing left for a node: 1 MiB and 1 vCPU (cpu.max takes no quota of 0)", "tdemo", "p04",
			append([]Resource{{VMID: 10104, Node: "p03", Pool: "tenant-tdemo", Status: "running"}}, twoNodes...), 0, nil, 1, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			configs := twoNodeConfigs()
			configs[10104] = map[string]any{"cores": 16.0, "memory": 32768.0}
			if c.starting != 0 {
				configs[c.starting] = c.config
			}
			s, err := f.NodeShare(c.resources, c.tenant, c.node, configs, c.starting)
			if err != nil {
				t.Fatal(err)
			}
			if s.MemoryMiB != c.mem || s.Cores != c.cores {
				t.Fatalf("share %d MiB, %d vCPUs, want %d MiB, %d vCPUs (%s)", s.MemoryMiB, s.Cores, c.mem, c.cores, s)
			}
			if s.MemoryMaxMiB() != c.mem+c.qemu {
				t.Fatalf("memory.max %d MiB, want the share %d + %d MiB for the QEMU of the VMs here (%s)", s.MemoryMaxMiB(), c.mem, c.qemu, s)
			}
		})
	}
	// Within the envelope, a node's cap plus what runs on the other nodes is the envelope: n nodes
	// no longer give n envelopes.
	p02, _ := f.NodeShare(twoNodes, "tdemo", "p02", twoNodeConfigs(), 0)
	p03, _ := f.NodeShare(twoNodes, "tdemo", "p03", twoNodeConfigs(), 0)
	if p02.MemoryMiB+16384 != 32768 || p03.MemoryMiB+4096 != 32768 || p02.Cores+8 != 16 || p03.Cores+2 != 16 {
		t.Fatalf("p02 %s; p03 %s", p02, p03)
	}
	if want := "28672 MiB, 14 vCPUs: envelope 32768 MiB, 16 vCPUs less 4096 MiB, 2 vCPUs running on other nodes; 16384 MiB, 8 vCPUs run here; memory.max 28928 MiB: 256 MiB more for QEMU itself, its VM(s) here 1"; p03.String() != want {
		t.Fatalf("String: %q, want %q", p03, want)
	}
}

func TestNodeShareRefusals(t *testing.T) {
	f := file(t)
	configs := twoNodeConfigs()
	delete(configs, 10102)
	_, err := f.NodeShare(twoNodes, "tdemo", "p02", configs, 0)
	if want := "tenant tdemo: VM 10102 runs in pool tenant-tdemo and its configuration was not read; its share on node p02 is not computed without it"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	configs = twoNodeConfigs()
	configs[10102]["memory"] = "lots"
	if _, err := f.NodeShare(twoNodes, "tdemo", "p02", configs, 0); err == nil || !strings.Contains(err.Error(), `VM 10102 (running): config memory "lots"`) {
		t.Fatalf("error %v, want the bad memory named", err)
	}
	if _, err := f.NodeShare(twoNodes, "tnope", "p02", configs, 0); err == nil || err.Error() != "tenant tnope: not in the envelope file" {
		t.Fatalf("error %v", err)
	}
	if got := f.Running(twoNodes, "tdemo"); len(got) != 2 || got[0].VMID != 10101 || got[1].VMID != 10102 {
		t.Fatalf("Running: %v", got)
	}
}

// QEMU's own memory: 128 MiB and 1/128 of the guest RAM (rounded up) per VM, and TCG's code
// buffer (1 GiB) for a VM with kvm: 0.
func TestQEMUOverhead(t *testing.T) {
	for _, c := range []struct {
		mem    int
		config map[string]any
		want   int
	}{
		{512, nil, 128 + 4}, {2048, nil, 128 + 16}, {4096, map[string]any{"kvm": 1.0}, 128 + 32},
		{256, nil, 128 + 2}, {100, nil, 128 + 1}, {32768, nil, 128 + 256},
		{2048, map[string]any{"kvm": 0.0}, 128 + 16 + 1024}, {2048, map[string]any{"kvm": "0"}, 128 + 16 + 1024},
	} {
		if got := QEMUOverheadMiB(c.mem, c.config); got != c.want {
			t.Errorf("QEMUOverheadMiB(%d, %v) = %d, want %d", c.mem, c.config, got, c.want)
		}
	}
}

// The envelope's disk I/O rates: the group's cap on every node (each node's disks are its own),
// on the devices under the tenant's thin pool data device, named from the file's vg; none
// without a rate or a vg.
func TestNodeShareIO(t *testing.T) {
	f, err := Parse([]byte(`{"tenants": {
		"tdemo":  {"pool": "tenant-tdemo", "vg": "pve", "envelope": {"vms": 3, "cores": 16, "memory": 32768, "disk": 256,
			"disk_read_mbps": 400, "disk_write_mbps": 200, "disk_write_iops": 4000}},
		"tother": {"pool": "tenant-tother", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256, "disk_write_mbps": 100}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"p02", "p03"} {
		s, err := f.NodeShare(twoNodes, "tdemo", node, twoNodeConfigs(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !s.CapsIO() || s.ReadBps != 400<<20 || s.WriteBps != 200<<20 || s.ReadIOPS != 0 || s.WriteIOPS != 4000 || s.ThinData != "pve-tenant--tdemo_tdata" {
			t.Fatalf("%s: %+v", node, s)
		}
		if want := "; disk I/O read 400 MiB/s, write 200 MiB/s, write 4000 IOPS on the devices under pve-tenant--tdemo_tdata"; !strings.HasSuffix(s.String(), want) {
			t.Fatalf("String %q, want it to end %q", s, want)
		}
	}
	// tother: a rate but no vg (a file from before it): no io.max, and String says none
	s, err := f.NodeShare(twoNodes, "tother", "p02", twoNodeConfigs(), 0)
	if err != nil || s.CapsIO() || strings.Contains(s.String(), "disk I/O") {
		t.Fatalf("tother: %+v %v", s, err)
	}
}

// A rate given as 0 or below is refused by its key before the guard writes anything; not given,
// it is no cap (an attachment from before the rates).
func TestParseRates(t *testing.T) {
	for rate, want := range map[string]string{
		`"disk_write_mbps": 0`:  "tenants.tdemo.envelope.disk_write_mbps 0 must be at least 1 (or not given: no cap)",
		`"disk_read_iops": -3`:  "tenants.tdemo.envelope.disk_read_iops -3 must be at least 1 (or not given: no cap)",
		`"disk_read_mbps": 1`:   "",
		`"disk_write_iops": 99`: "",
	} {
		_, err := Parse([]byte(`{"tenants": {"tdemo": {"pool": "tenant-tdemo", "vg": "pve", "envelope": {"vms": 3, "cores": 16, "memory": 32768, "disk": 256, ` + rate + `}}}}`))
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("%s: error %v, want %q", rate, err, want)
		}
	}
}
