package pvesim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// loadTenants creates n tenants the way the collection does: zone, vnet,
// subnet, pool, user+token+ACLs and vms clones configured on the vnet.
func loadTenants(t testing.TB, s *Server, c *client, n, vms int) {
	t.Helper()
	c.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpnctl", "type", "evpn", "asn", "65020", "peers", "10.20.255.1"), nil)
	for i := 1; i <= n; i++ {
		z := fmt.Sprintf("tn%02d", i)
		v := z + "v0"
		pool := "tenant-" + z
		user := pool + "@pve"
		c.ok("POST", "/cluster/sdn/zones", vals("zone", z, "type", "evpn", "controller", "evpnctl", "vrf-vxlan", strconv.Itoa(10000+i), "mtu", "1450"), nil)
		c.ok("POST", "/cluster/sdn/vnets", vals("vnet", v, "zone", z, "tag", strconv.Itoa(20000+16*i)), nil)
		c.ok("POST", "/cluster/sdn/vnets/"+v+"/subnets", vals("subnet", fmt.Sprintf("10.20.%d.0/24", 128+i), "type", "subnet", "gateway", fmt.Sprintf("10.20.%d.1", 128+i)), nil)
		c.ok("POST", "/pools", vals("poolid", pool), nil)
		c.ok("POST", "/access/users", vals("userid", user), nil)
		c.ok("POST", "/access/users/"+user+"/token/iac", nil, nil)
		for _, g := range [][2]string{{"/pool/" + pool, "PVEVMAdmin"}, {"/sdn/zones/" + z, "PVESDNUser"}, {"/vms/9000", "PVETemplateUser"}} {
			c.ok("PUT", "/access/acl", vals("path", g[0], "roles", g[1], "users", user, "tokens", user+"!iac"), nil)
		}
		for k := 1; k <= vms; k++ {
			id := strconv.Itoa(10000 + 100*i + k)
			c.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", id, "name", fmt.Sprintf("%s-%d", z, k), "pool", pool))
			c.task("POST", "/nodes/"+node+"/qemu/"+id+"/config", vals("net0", "virtio,bridge="+v,
				"ipconfig0", fmt.Sprintf("ip=10.20.%d.%d/24,gw=10.20.%d.1", 128+i, 9+k, 128+i), "nameserver", "10.20.99.1", "cores", "2", "memory", "2048"))
		}
	}
	c.task("PUT", "/cluster/sdn", nil)
}

// BenchmarkZonesList measures GET /cluster/sdn/zones over HTTPS with
// keep-alive; run with -cpu 1 for the one-core figure.
func BenchmarkZonesList(b *testing.B) { benchGet(b, "/cluster/sdn/zones") }

// BenchmarkNodeZoneStatus measures the node's zone status, which pve_sdn_apply polls after every
// apply: pvesim reads the zones from the running config as the node's renderer does.
func BenchmarkNodeZoneStatus(b *testing.B) { benchGet(b, "/nodes/"+node+"/sdn/zones") }

// benchGet measures GETs of path with 1 and 63 tenants loaded and applied.
func benchGet(b *testing.B, path string) {
	for _, zones := range []int{1, 63} {
		b.Run(fmt.Sprintf("zones=%d", zones), func(b *testing.B) {
			s := startSim(b)
			c := rootClient(b, s)
			loadTenants(b, s, c, zones, 0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := c.do("GET", path, nil); r.Status != 200 {
					b.Fatalf("status %d", r.Status)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

func rssKB() int { return procRSS(os.Getpid()) }

// TestMemory63Tenants loads 63 tenants of 3 VMs and reports the heap in use
// and the process RSS; it fails if the heap grows past a generous bound.
func TestMemory63Tenants(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 63 tenants")
	}
	s := startSim(t)
	c := rootClient(t, s)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	loadTenants(t, s, c, 63, 3)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	st := s.Stats()
	heapMB := float64(after.HeapInuse) / (1 << 20)
	deltaMB := (float64(after.HeapInuse) - float64(before.HeapInuse)) / (1 << 20)
	t.Logf("63 tenants x 3 VMs: %d VMs, %d tasks, %d requests; heap in use %.1f MiB (+%.1f MiB for the tenants), process RSS %d KiB",
		len(s.st.VMs), len(s.st.Tasks), totalRequests(st), heapMB, deltaMB, rssKB())
	if len(s.st.VMs) != 63*3+1 {
		t.Fatalf("VMs = %d", len(s.st.VMs))
	}
	if heapMB > 256 {
		t.Fatalf("heap %.1f MiB is far above expectations", heapMB)
	}
}

func totalRequests(s Stats) int {
	n := 0
	for _, v := range s.Requests {
		n += v
	}
	return n
}

// TestMemoryCLI63Tenants measures the resident memory of the pvesim binary
// itself (PVESIM_BIN, or built here) with 63 tenants of 3 VMs loaded over HTTPS.
func TestMemoryCLI63Tenants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and loads the CLI")
	}
	dir := t.TempDir()
	bin := os.Getenv("PVESIM_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "pvesim")
		if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/pvesim").CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	tokFile := filepath.Join(dir, "token.json")
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--ca-out", filepath.Join(dir, "ca.pem"), "--token-out", tokFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	if !bufio.NewScanner(out).Scan() {
		t.Fatal("no ready line")
	}
	var tok map[string]any
	b, _ := os.ReadFile(tokFile)
	if err := json.Unmarshal(b, &tok); err != nil {
		t.Fatal(err)
	}
	s := &Server{url: tok["url"].(string), caFile: tok["ca_path"].(string), rootSecret: tok["api_token_secret"].(string)}
	c := rootClient(t, s)
	idle := procRSS(cmd.Process.Pid)
	loadTenants(t, s, c, 63, 3)
	var vms []map[string]any
	c.ok("GET", "/cluster/resources", vals("type", "vm"), &vms)
	if len(vms) != 63*3+1 {
		t.Fatalf("VMs = %d", len(vms))
	}
	t.Logf("pvesim binary RSS: %d KiB idle, %d KiB with 63 tenants x 3 VMs (%d VMs)", idle, procRSS(cmd.Process.Pid), len(vms))
}

func procRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "kB")))
			return n
		}
	}
	return -1
}

// BenchmarkStart is what every Go test of a PVE module pays per simulator.
func BenchmarkStart(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, err := Start(DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Close()
	}
}
