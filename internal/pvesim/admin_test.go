package pvesim

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAdminEndpoints(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	hc := httpClientFor(t, s)
	post := func(path, body string) {
		t.Helper()
		res, err := hc.Post(s.URL()+path, "application/json", strings.NewReader(body))
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("POST %s: %v %v", path, res, err)
		}
		_ = res.Body.Close()
	}
	stats := func() Stats {
		t.Helper()
		res, err := hc.Get(s.URL() + "/_sim/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		var env struct{ Data Stats }
		if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
			t.Fatal(err)
		}
		return env.Data
	}
	c.ok("GET", "/cluster/sdn/zones", nil, nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "z1", "type", "simple"), nil)
	c.do("POST", "/cluster/sdn/zones", vals("zone", "z1", "type", "simple")) // refused duplicate
	st := stats()
	if st.Requests["GET /cluster/sdn/zones"] != 1 || st.Requests["POST /cluster/sdn/zones"] != 2 || st.Writes != 2 || st.WritesAccepted != 1 ||
		len(st.AcceptedWrites) != 1 || st.AcceptedWrites["POST /cluster/sdn/zones"] != 1 {
		t.Fatalf("stats = %+v", st)
	}
	post("/_sim/stats/reset", "")
	if st = stats(); len(st.Requests) != 0 || st.Writes != 0 || len(st.AcceptedWrites) != 0 {
		t.Fatalf("after reset = %+v", st)
	}
	post("/_sim/faults", `{"faults":[{"method":"GET","path":"/cluster/sdn/zones","nth":2,"status":503,"message":"busy"}],"hold_sdn_lock_seconds":600}`)
	c.ok("GET", "/cluster/sdn/zones", nil, nil)
	if r := c.do("GET", "/cluster/sdn/zones", nil); r.Status != 503 || r.Reason != "busy" {
		t.Fatalf("2nd request fault: %d %q", r.Status, r.Reason)
	}
	c.ok("GET", "/cluster/sdn/zones", nil, nil)
	// another client holds the SDN lock
	if r := c.do("POST", "/cluster/sdn/zones", vals("zone", "z2", "type", "simple")); r.Status != 500 || !strings.Contains(r.Message, "invalid lock token provided!") {
		t.Fatalf("write under foreign lock: %d %q", r.Status, r.Message)
	}
	if r := c.do("POST", "/cluster/sdn/lock", vals("allow-pending", "1")); r.Status != 500 || !strings.HasPrefix(r.Message, "could not acquire lock for SDN config") {
		t.Fatalf("lock under foreign lock: %d %q", r.Status, r.Message)
	}
	if r := c.do("DELETE", "/cluster/sdn/lock", nil); r.Status != 500 || !strings.HasPrefix(r.Message, "could not release lock") {
		t.Fatalf("unlock without token: %d %q", r.Status, r.Message)
	}
	c.ok("DELETE", "/cluster/sdn/lock", vals("force", "1"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "z2", "type", "simple"), nil)
	post("/_sim/reset", "")
	var zones []map[string]any
	c.ok("GET", "/cluster/sdn/zones", nil, &zones)
	if len(zones) != 0 {
		t.Fatalf("after reset zones = %v", zones)
	}
	res, err := http.Get(strings.Replace(s.URL(), "https", "http", 1) + "/_sim/stats")
	if err == nil {
		_ = res.Body.Close()
		if res.StatusCode == 200 {
			t.Fatal("plain HTTP must not be served on the HTTPS port")
		}
	}
}

func TestLatencyAndDeterminism(t *testing.T) {
	macs := func() string {
		s := startSim(t, func(c *Config) { c.Templates[0].Config["net0"] = "virtio=BC:24:11:00:90:00,bridge=vmbr0" })
		c := rootClient(t, s)
		c.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "100"))
		var cfg map[string]any
		c.ok("GET", "/nodes/"+node+"/qemu/100/config", nil, &cfg)
		return cfg["net0"].(string)
	}
	if a, b := macs(), macs(); a != b {
		t.Fatalf("same seed, different MACs: %s vs %s", a, b)
	}
	s := startSim(t)
	s.SetLatency(50 * time.Millisecond)
	c := rootClient(t, s)
	start := time.Now()
	c.ok("GET", "/version", nil, nil)
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("latency not applied: %v", d)
	}
}

func TestConfigFileMultiNode(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "sim.yaml")
	yaml := `nodes:
  - {name: pve1, maxcpu: 8, maxmem: 34359738368}
  - {name: pve2, maxcpu: 8, maxmem: 34359738368}
storages:
  - {id: ceph, type: rbd, content: [images], shared: true, clone: true}
templates:
  - vmid: 9001
    node: pve1
    name: tmpl
    template: true
    config: {cores: "1", memory: "1024", scsi0: "ceph:base-9001-disk-0,size=4G", net0: "virtio=BC:24:11:00:00:09,bridge=vmbr0"}
task_duration: 0s
`
	if err := os.WriteFile(f, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	c := rootClient(t, s)
	var nodes []map[string]any
	c.ok("GET", "/nodes", nil, &nodes)
	if len(nodes) != 2 {
		t.Fatalf("nodes = %v", nodes)
	}
	// shared storage: cloning to the other node is allowed
	if _, exit := c.task("POST", "/nodes/pve1/qemu/9001/clone", vals("newid", "101", "target", "pve2")); exit != "OK" {
		t.Fatalf("clone to pve2: %s", exit)
	}
	c.ok("GET", "/nodes/pve2/qemu/101/config", nil, nil)
	var res []map[string]any
	c.ok("GET", "/cluster/resources", vals("type", "node"), &res)
	if len(res) != 2 {
		t.Fatalf("node resources = %v", res)
	}
	if _, err := Start(Config{Listen: "0.0.0.0:0", Nodes: cfg.Nodes}); err == nil {
		t.Fatal("a non-loopback listen address must be refused")
	}
}

func TestInsecureHTTPOnlyWhenAsked(t *testing.T) {
	s := startSim(t, func(c *Config) { c.InsecureHTTP = true })
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || s.CAFile() != "" {
		t.Fatalf("url %s ca %q", s.URL(), s.CAFile())
	}
	c := rootClient(t, s)
	c.ok("GET", "/version", nil, nil)
	d := startSim(t)
	if !strings.HasPrefix(d.URL(), "https://127.0.0.1:") || d.CAFile() == "" {
		t.Fatalf("default must be HTTPS with a CA file: %s %q", d.URL(), d.CAFile())
	}
}
