package pvesim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// twoNodes is a cluster of n1 (serving the API) and n2, the template 9000 on n2, one EVPN zone
// applied on both.
func twoNodes(t *testing.T) (*Server, *client) {
	t.Helper()
	s := startSim(t, func(c *Config) {
		c.Nodes = []NodeConfig{{Name: "n1", MaxCPU: 8, MaxMem: 1 << 34}, {Name: "n2", MaxCPU: 8, MaxMem: 1 << 34}}
		c.Templates[0].Node = "n2"
		// a QDevice keeps n1 quorate while n2 is away, as on a real two-node cluster (quorum.go)
		c.Quorum.QDevice = &QDeviceConfig{Host: "qnetd.test"}
	})
	c := rootClient(t, s)
	c.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpnctl", "type", "evpn", "asn", "65000", "peers", "192.168.0.1,192.168.0.2"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "za", "type", "evpn", "controller", "evpnctl", "vrf-vxlan", "1000"), nil)
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "OK" {
		t.Fatal(st)
	}
	return s, c
}

// simAdmin posts to a /_sim/ endpoint and returns the status and the reply's data.
func simAdmin(t *testing.T, s *Server, path, body string) (int, json.RawMessage) {
	t.Helper()
	res, err := httpClientFor(t, s).Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	var env struct{ Data json.RawMessage }
	_ = json.Unmarshal(b, &env)
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, b
	}
	return res.StatusCode, env.Data
}

func nodeByName(t *testing.T, c *client, path, node string) map[string]any {
	t.Helper()
	var l []map[string]any
	c.ok("GET", path, nil, &l)
	for _, e := range l {
		if e["node"] == node && (e["type"] == nil || e["type"] == "node") {
			return e
		}
	}
	t.Fatalf("%s lists no node %s: %v", path, node, l)
	return nil
}

// TestNodeOffline: a node out of the membership is offline in /nodes, /cluster/resources and
// /cluster/status, answers every proxied call with 595, is skipped by reloadnetworkall (logged,
// task OK), keeps its files and its last zone broadcast, and gets the files at the next apply
// after it returns (a boot without pending changes renders nothing).
func TestNodeOffline(t *testing.T) {
	s, c := twoNodes(t)
	_, before := simFile(t, s, "n2", fileInterfaces)
	if st, body := simAdmin(t, s, "/_sim/nodes/n2/offline", `{}`); st != 200 {
		t.Fatalf("offline: %d %s", st, body)
	}
	for _, path := range []string{"/nodes", "/cluster/resources"} {
		n2, n1 := nodeByName(t, c, path, "n2"), nodeByName(t, c, path, "n1")
		if n2["status"] != "offline" || n2["uptime"] != nil || n2["cpu"] != nil || n2["mem"] != nil || n2["maxcpu"] != float64(8) {
			t.Errorf("%s n2 = %v, want offline without uptime/cpu/mem, maxcpu kept while its RRD data lasts", path, n2)
		}
		if n1["status"] != "online" || n1["uptime"] == nil {
			t.Errorf("%s n1 = %v", path, n1)
		}
	}
	var cs []map[string]any
	c.ok("GET", "/cluster/status", nil, &cs)
	for _, e := range cs {
		if e["name"] == "n2" && e["online"] != float64(0) {
			t.Errorf("/cluster/status n2 = %v", e)
		}
	}
	for _, path := range []string{"/nodes/n2/status", "/nodes/n2/sdn/zones", "/nodes/n2/qemu/9000/config"} {
		if r := c.do("GET", path, nil); r.Status != 595 || r.Reason != "No route to host" || r.Message != "" || r.Data != nil {
			t.Errorf("GET %s: %d %q %q %s, want 595 No route to host with an empty body", path, r.Status, r.Reason, r.Message, r.Data)
		}
	}
	// the permission check comes before the proxy
	if r := tokenClient(t, s, "root@pam!nosuch", "x").do("GET", "/nodes/n2/status", nil); r.Status != 401 {
		t.Errorf("unauthenticated: %d", r.Status)
	}
	// /cluster/resources keeps the zones n2 last broadcast
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "zb", "type", "evpn", "controller", "evpnctl", "vrf-vxlan", "1001"), nil)
	upid, st := c.task("PUT", "/cluster/sdn", nil)
	if st != "OK" {
		t.Fatalf("apply with n2 offline: %s, want OK as pve-network ends it", st)
	}
	log := taskLog(t, c, "n1", upid)
	for _, want := range []string{
		"n2: reloading network config\nproxy handler failed: ssh: connect to host 127.0.0.2 port 22: No route to host\n" +
			"command 'pvesh set /nodes/n2/network --regenerate-frr 1' failed: exit code 255\n",
		"n1: reloading network config\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("task log lacks %q:\n%s", want, log)
		}
	}
	if _, after := simFile(t, s, "n2", fileInterfaces); after != before {
		t.Errorf("n2's files changed while it was offline:\n%s", after)
	}
	if got := zoneStatus(t, c, "n1"); got["za"] != "available" || got["zb"] != "available" {
		t.Errorf("n1 zones %v", got)
	}
	var sdn []map[string]any
	c.ok("GET", "/cluster/resources", vals("type", "sdn"), &sdn)
	var n2zones []string
	for _, e := range sdn {
		if e["node"] == "n2" {
			n2zones = append(n2zones, e["sdn"].(string))
		}
	}
	if strings.Join(n2zones, ",") != "za" {
		t.Errorf("n2's sdn resources %v, want its last broadcast [za]", n2zones)
	}

	// back without a reboot, then rebooted: nothing pending, so pve-sdn-commit renders nothing
	if st, body := simAdmin(t, s, "/_sim/nodes/n2/online", `{"boot":false}`); st != 200 {
		t.Fatalf("online: %d %s", st, body)
	}
	if got := zoneStatus(t, c, "n2"); got["za"] != "pending" || got["zb"] != "pending" {
		t.Errorf("n2 back: %v, want both pending (its files are older than the running config)", got)
	}
	_, out := simAdmin(t, s, "/_sim/nodes/n2/online", `{"boot":true}`)
	if !strings.Contains(string(out), "No changes to SDN configuration detected, skipping reload") {
		t.Errorf("boot printed %s", out)
	}
	if _, after := simFile(t, s, "n2", fileInterfaces); after != before {
		t.Error("a boot without pending changes rendered n2's files")
	}
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "OK" {
		t.Fatal(st)
	}
	if got := zoneStatus(t, c, "n2"); got["za"] != "available" || got["zb"] != "available" {
		t.Errorf("n2 after the next apply: %v", got)
	}
	if _, after := simFile(t, s, "n2", fileInterfaces); !strings.Contains(after, "#version:3") {
		t.Errorf("n2's files after the next apply:\n%s", after)
	}
}

// TestNodeOfflineGuests: five minutes after its node left, a guest's RRD data is gone: status
// unknown, no name, sizes or template flag; the node keeps only id, node, type and status.
func TestNodeOfflineGuests(t *testing.T) {
	s, c := twoNodes(t)
	if st, body := simAdmin(t, s, "/_sim/nodes/n2/offline", `{"since_seconds": 301}`); st != 200 {
		t.Fatalf("offline: %d %s", st, body)
	}
	var vms []map[string]any
	c.ok("GET", "/cluster/resources", vals("type", "vm"), &vms)
	if len(vms) != 1 || vms[0]["status"] != "unknown" || vms[0]["name"] != nil || vms[0]["template"] != nil || vms[0]["node"] != "n2" {
		t.Errorf("guest on n2: %v", vms)
	}
	if n2 := nodeByName(t, c, "/nodes", "n2"); n2["maxcpu"] != nil || n2["status"] != "offline" {
		t.Errorf("n2 without RRD data: %v", n2)
	}
}

// TestNodeBootCommitsPending: pve-sdn-commit at boot commits pending changes and renders the
// booting node alone; the others are then pending until the next apply.
func TestNodeBootCommitsPending(t *testing.T) {
	s, c := twoNodes(t)
	simAdmin(t, s, "/_sim/nodes/n2/offline", `{}`)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "zb", "type", "evpn", "controller", "evpnctl", "vrf-vxlan", "1001"), nil)
	if st, body := simAdmin(t, s, "/_sim/nodes/n2/online", `{}`); st != 200 || strings.Contains(string(body), "No changes") {
		t.Fatalf("boot: %d %s", st, body)
	}
	var zones []map[string]any
	c.ok("GET", "/cluster/sdn/zones", vals("pending", "1"), &zones)
	for _, z := range zones {
		if z["state"] != nil {
			t.Errorf("after the boot commit, still pending: %v", z)
		}
	}
	if got := zoneStatus(t, c, "n2"); got["zb"] != "available" {
		t.Errorf("n2 after boot: %v", got)
	}
	if got := zoneStatus(t, c, "n1"); got["za"] != "pending" || got["zb"] != "pending" {
		t.Errorf("n1 after n2's boot commit: %v, want pending", got)
	}
}

// TestNodeStateAdmin: the admin endpoint refuses the API's own node, an unknown node and an
// unknown reason, naming them.
func TestNodeStateAdmin(t *testing.T) {
	s, _ := twoNodes(t)
	for path, want := range map[string]string{
		"/_sim/nodes/n1/offline":  "node n1 serves the API",
		"/_sim/nodes/nx/offline":  "no such cluster node 'nx'",
		"/_sim/nodes/nx/online":   "no such cluster node 'nx'",
		"/_sim/nodes/n2/sideways": "unknown pvesim admin endpoint",
	} {
		if st, body := simAdmin(t, s, path, `{}`); st == 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %s, want %q", path, st, body, want)
		}
	}
	if st, body := simAdmin(t, s, "/_sim/nodes/n2/offline", `{"reason":"tired"}`); st != 400 || !strings.Contains(string(body), `reason "tired"`) {
		t.Errorf("bad reason: %d %s", st, body)
	}
	if st, _ := simAdmin(t, s, "/_sim/nodes/n2/offline", `{"reason":"Connection timed out"}`); st != 200 {
		t.Fatal(st)
	}
	c := rootClient(t, s)
	if r := c.do("GET", "/nodes/n2/status", nil); r.Status != 595 || r.Reason != "Connection timed out" {
		t.Errorf("%d %q", r.Status, r.Reason)
	}
	// a reset brings every node back
	simAdmin(t, s, "/_sim/reset", "")
	if r := c.do("GET", "/nodes/n2/status", nil); r.Status != 200 {
		t.Errorf("after reset: %d", r.Status)
	}
}
