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
