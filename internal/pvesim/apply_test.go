package pvesim

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workedExample builds NODE-RENDERING §4 through the API: fabric tfab with
// node dv02hyp002p02, EVPN controller on the fabric, zone tn01, vnet tn01v0
// and its subnet.
func workedExample(t *testing.T, c *client) {
	t.Helper()
	c.ok("POST", "/cluster/sdn/fabrics/fabric", vals("id", "tfab", "protocol", "openfabric", "ip_prefix", "10.20.255.0/24"), nil)
	c.ok("POST", "/cluster/sdn/fabrics/node/tfab", vals("node_id", "dv02hyp002p02", "protocol", "openfabric", "ip", "10.20.255.2", "interfaces", "name=vmbr0.51"), nil)
	c.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpn", "type", "evpn", "asn", "65000", "fabric", "tfab"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "tn01", "type", "evpn", "controller", "evpn", "vrf-vxlan", "10001", "mtu", "1450", "mac", "BC:24:11:5A:3C:01"), nil)
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "tn01v0", "zone", "tn01", "tag", "20016"), nil)
	c.ok("POST", "/cluster/sdn/vnets/tn01v0/subnets", vals("subnet", "10.20.129.0/24", "type", "subnet", "gateway", "10.20.129.1"), nil)
}

func zoneStatus(t *testing.T, c *client, node string) map[string]string {
	t.Helper()
	var l []map[string]any
	c.ok("GET", "/nodes/"+node+"/sdn/zones", nil, &l)
	out := map[string]string{}
	for _, z := range l {
		out[z["zone"].(string)] = z["status"].(string)
	}
	return out
}

func simFile(t *testing.T, s *Server, node, path string) (int, string) {
	t.Helper()
	res, err := httpClientFor(t, s).Get(s.URL() + "/_sim/nodes/" + node + "/files" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestApplyRendersNodeFiles: PUT /cluster/sdn renders §4's files for the
// node, serves them on /_sim/nodes/{node}/files/ and writes them under the
// render dir; the node's zones go from pending to available.
func TestApplyRendersNodeFiles(t *testing.T) {
	dir := t.TempDir()
	s := startSim(t, func(c *Config) { c.RenderDir = dir })
	c := rootClient(t, s)
	const node = "dv02hyp002p02"
	if code, _ := simFile(t, s, node, fileFRR); code != http.StatusNotFound {
		t.Fatalf("before any apply: file status %d, want 404", code)
	}
	workedExample(t, c)
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "OK" {
		t.Fatalf("apply: %s", st)
	}
	for name, path := range map[string]string{"interfaces": fileInterfaces, "frr.conf": fileFRR} {
		want, err := os.ReadFile(filepath.Join("testdata/worked_example", name))
		if err != nil {
			t.Fatal(err)
		}
		code, got := simFile(t, s, node, path)
		if code != 200 || got != string(want) {
			t.Errorf("%s: status %d, content differs from NODE-RENDERING §4:\n%s", path, code, got)
		}
		disk, err := os.ReadFile(filepath.Join(dir, node, path))
		if err != nil || string(disk) != string(want) {
			t.Errorf("render dir %s: %v, content differs:\n%s", path, err, disk)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, node, fileDaemons)); err != nil || string(b) != "fabricd=yes\nospfd=no\n" {
		t.Errorf("daemons.pve = %q, %v", b, err)
	}
	if st := zoneStatus(t, c, node); st["tn01"] != "available" {
		t.Errorf("after apply: zone status %v, want available", st)
	}
	// an apply whose task dies before the nodes reload leaves them pending
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "tn01v1", "zone", "tn01", "tag", "20017"), nil)
	s.FailTask(TaskFault{Type: "reloadnetworkall", Nth: 1, ExitStatus: "reload failed"})
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "reload failed" {
		t.Fatalf("apply: %s", st)
	}
	if st := zoneStatus(t, c, node); st["tn01"] != "pending" {
		t.Errorf("node behind the running config: zone status %v, want pending", st)
	}
	if _, got := simFile(t, s, node, fileInterfaces); strings.Contains(got, "tn01v1") || !strings.HasPrefix(got, "#version:1\n") {
		t.Errorf("node files changed although it never reloaded:\n%s", got)
	}
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "OK" {
		t.Fatalf("apply: %s", st)
	}
	if _, got := simFile(t, s, node, fileInterfaces); !strings.Contains(got, "auto vxlan_tn01v1\n") || !strings.HasPrefix(got, "#version:3\n") {
		t.Errorf("second apply not rendered:\n%s", got)
	}
}

// TestReloadFault: a failed reload leaves the apply task OK (as PVE) with
// the failure in its log, and the node's zones in status error.
func TestReloadFault(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	const node = "dv02hyp002p02"
	workedExample(t, c)
	s.FailReload(ReloadFault{Node: node, Nth: 1, Message: "ifreload: error: vmbr0.51: link not found"})
	upid, st := c.task("PUT", "/cluster/sdn", nil)
	if st != "OK" {
		t.Fatalf("apply: %s", st)
	}
	if got := zoneStatus(t, c, node); got["tn01"] != "error" {
		t.Errorf("after a failed reload: %v, want error", got)
	}
	if log := taskLog(t, c, node, upid); !strings.Contains(log, node+": network reload failed: ifreload: error") {
		t.Errorf("task log lacks the failure:\n%s", log)
	}
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "OK" {
		t.Fatalf("re-apply: %s", st)
	}
	if got := zoneStatus(t, c, node); got["tn01"] != "available" {
		t.Errorf("after a good re-apply: %v, want available", got)
	}
}

// TestReloadCommand runs --reload-command with the node and its dir; its
// exit status decides the node status and its output lands in the task log.
func TestReloadCommand(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "reload")
	// fails while the node's dir holds a marker file, so both outcomes show
	body := "#!/bin/sh\necho \"reloading $1 from $2\"\ntest -f \"$2/etc/network/interfaces.d/sdn\" || exit 9\nif [ -e \"$2/fail\" ]; then echo 'ifreload: boom' >&2; exit 3; fi\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startSim(t, func(c *Config) { c.RenderDir, c.ReloadCommand = dir, script })
	c := rootClient(t, s)
	const node = "dv02hyp002p02"
	workedExample(t, c)
	upid, st := c.task("PUT", "/cluster/sdn", nil)
	if st != "OK" {
		t.Fatalf("apply: %s", st)
	}
	if got := zoneStatus(t, c, node); got["tn01"] != "available" {
		t.Errorf("after reload exit 0: %v", got)
	}
	if log := taskLog(t, c, node, upid); !strings.Contains(log, node+": reloading "+node+" from "+filepath.Join(dir, node)) {
		t.Errorf("command output not in the task log:\n%s", log)
	}
	if err := os.WriteFile(filepath.Join(dir, node, "fail"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	upid, st = c.task("PUT", "/cluster/sdn", nil)
	if st != "OK" {
		t.Fatalf("apply: %s", st)
	}
	if got := zoneStatus(t, c, node); got["tn01"] != "error" {
		t.Errorf("after reload exit 3: %v, want error", got)
	}
	if log := taskLog(t, c, node, upid); !strings.Contains(log, node+": ifreload: boom") || !strings.Contains(log, "exit status 3") {
		t.Errorf("failure not in the task log:\n%s", log)
	}
}

func taskLog(t *testing.T, c *client, node, upid string) string {
	t.Helper()
	var l []map[string]any
	c.ok("GET", "/nodes/"+node+"/tasks/"+upid+"/log", nil, &l)
	var b strings.Builder
	for _, e := range l {
		b.WriteString(e["t"].(string) + "\n")
	}
	return b.String()
}

// TestDryRunFirstApply: before the first apply the node has no files, so the
// dry run is all "+" against an epoch-dated empty file (§5's example); after
// the apply both diffs are null.
func TestDryRunFirstApply(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	const node = "dv02hyp002p02"
	workedExample(t, c)
	var d map[string]*string
	c.ok("GET", "/cluster/sdn/dry-run", vals("node", node), &d)
	ifs := d["interfaces-diff"]
	if ifs == nil || !strings.HasPrefix(*ifs, "--- /etc/network/interfaces.d/sdn\t1970-01-01 00:00:00.000000000 +0000\n+++ /proc/") ||
		!strings.Contains(*ifs, "\n@@ -0,0 +1,53 @@\n+#version:1\n+\n+auto tn01v0\n") {
		t.Fatalf("interfaces-diff: %v", d)
	}
	if f := d["frr-diff"]; f == nil || !strings.Contains(*f, "\n@@ -0,0 +1,65 @@\n+frr version 10.4.1\n") {
		t.Fatalf("frr-diff: %v", d)
	}
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "OK" {
		t.Fatal(st)
	}
	c.ok("GET", "/cluster/sdn/dry-run", vals("node", node), &d)
	if d["interfaces-diff"] != nil || d["frr-diff"] != nil {
		t.Fatalf("after apply: %v", d)
	}
}

// TestApplyPeersMode: with an EVPN controller in peers mode, each node's VTEP
// source is its configured local_ip, and its peers are the others.
func TestApplyPeersMode(t *testing.T) {
	s := startSim(t, func(c *Config) {
		c.Nodes = []NodeConfig{{Name: "n1", LocalIP: "192.168.0.1"}, {Name: "n2", LocalIP: "192.168.0.2"}}
	})
	c := rootClient(t, s)
	c.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpnctl", "type", "evpn", "asn", "65000", "peers", "192.168.0.1,192.168.0.2"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "myzone", "type", "evpn", "controller", "evpnctl", "vrf-vxlan", "1000", "mac", "A2:1D:CB:1A:C0:8B"), nil)
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "myvnet", "zone", "myzone", "tag", "100"), nil)
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "OK" {
		t.Fatal(st)
	}
	for node, want := range map[string][]string{
		"n1": {" bgp router-id 192.168.0.1\n", " neighbor 192.168.0.2 peer-group VTEP\n"},
		"n2": {" bgp router-id 192.168.0.2\n", " neighbor 192.168.0.1 peer-group VTEP\n"},
	} {
		_, frr := simFile(t, s, node, fileFRR)
		_, ifs := simFile(t, s, node, fileInterfaces)
		for _, w := range want {
			if !strings.Contains(frr, w) {
				t.Errorf("%s frr.conf lacks %q:\n%s", node, w, frr)
			}
		}
		ip := strings.TrimSuffix(strings.TrimPrefix(want[0], " bgp router-id "), "\n")
		if !strings.Contains(ifs, "\tvxlan-local-tunnelip "+ip+"\n") {
			t.Errorf("%s interfaces lack its tunnel ip:\n%s", node, ifs)
		}
	}
}

// TestReloadCommandParallel: the nodes reload at the same time (PVE starts
// every node's reload at once): each run waits until both have started.
func TestReloadCommandParallel(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "reload")
	body := "#!/bin/sh\ntouch \"$2/../started-$1\"\ni=0\nwhile [ $i -lt 100 ]; do\n  [ -e \"$2/../started-n1\" ] && [ -e \"$2/../started-n2\" ] && exit 0\n  sleep 0.05; i=$((i+1))\ndone\necho 'the other node never started'; exit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startSim(t, func(c *Config) {
		c.Nodes = []NodeConfig{{Name: "n1"}, {Name: "n2"}}
		c.RenderDir, c.ReloadCommand = dir, script
	})
	c := rootClient(t, s)
	c.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpnctl", "type", "evpn", "asn", "65000", "peers", "192.168.0.1,192.168.0.2"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "myzone", "type", "evpn", "controller", "evpnctl", "vrf-vxlan", "1000"), nil)
	upid, st := c.task("PUT", "/cluster/sdn", nil)
	if st != "OK" {
		t.Fatal(st)
	}
	for _, n := range []string{"n1", "n2"} {
		if got := zoneStatus(t, c, n); got["myzone"] != "available" {
			t.Errorf("%s: %v, want available; log:\n%s", n, got, taskLog(t, c, "n1", upid))
		}
	}
}
