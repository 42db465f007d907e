package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startBin runs the built binary and waits for its ready line.
func startBin(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		if !strings.HasPrefix(l, "pvesim ready url=https://127.0.0.1:") {
			t.Fatalf("ready line %q", l)
		}
		return cmd, l
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("no ready line")
	}
	return nil, ""
}

// pvesimBinary is $PVESIM_BIN, the binary that playbooks use (make test-pvesim sets it), or else
// this command built into dir.
func pvesimBinary(t *testing.T, dir string) string {
	t.Helper()
	if bin := os.Getenv("PVESIM_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(dir, "pvesim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func stopBin(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

func TestCLIStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	bin := pvesimBinary(t, dir)
	ca, tokFile, state := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "token.json"), filepath.Join(dir, "state.json")
	args := []string{"--listen", "127.0.0.1:0", "--ca-out", ca, "--token-out", tokFile, "--state", state}
	cmd, _ := startBin(t, bin, args...)

	fi, err := os.Stat(tokFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v %v", fi, err)
	}
	var tok map[string]any
	b, _ := os.ReadFile(tokFile)
	if err := json.Unmarshal(b, &tok); err != nil || tok["full_token_id"] != "root@pam!sim" || tok["api_token_secret"] == "" {
		t.Fatalf("token file %s: %v", b, err)
	}
	pem, _ := os.ReadFile(ca)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("bad CA file")
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	auth := "PVEAPIToken=root@pam!sim=" + tok["api_token_secret"].(string)
	do := func(method, path string, form url.Values) int {
		req, _ := http.NewRequest(method, tok["url"].(string)+"/api2/json"+path, strings.NewReader(form.Encode()))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	if st := do("POST", "/cluster/sdn/zones", url.Values{"zone": {"keep"}, "type": {"simple"}}); st != 200 {
		t.Fatalf("create zone: %d", st)
	}
	stopBin(t, cmd)

	// restart: same secret, zone still there
	cmd, _ = startBin(t, bin, args...)
	defer stopBin(t, cmd)
	b, _ = os.ReadFile(tokFile)
	_ = json.Unmarshal(b, &tok)
	pem, _ = os.ReadFile(ca)
	pool = x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	if st := do("GET", "/cluster/sdn/zones/keep", nil); st != 200 {
		t.Fatalf("zone after restart: %d", st)
	}
}

// TestCLIRenderDirAndReloadCommand: the contract the lab uses. After an
// apply the binary writes each node's files under --render-dir and runs
// --reload-command <node> <dir>/<node>; the node's files are also served on
// /_sim/nodes/<node>/files/.
func TestCLIRenderDirAndReloadCommand(t *testing.T) {
	dir := t.TempDir()
	bin := pvesimBinary(t, dir)
	render, script := filepath.Join(dir, "render"), filepath.Join(dir, "reload.sh")
	// records its arguments next to the files it was given
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s %s\\n' \"$1\" \"$2\" > \"$2/reloaded\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ca, tokFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "token.json")
	cmd, _ := startBin(t, bin, "--listen", "127.0.0.1:0", "--ca-out", ca, "--token-out", tokFile,
		"--render-dir", render, "--reload-command", script, "--reload-timeout", "30s")
	defer stopBin(t, cmd)
	var tok map[string]any
	b, _ := os.ReadFile(tokFile)
	if err := json.Unmarshal(b, &tok); err != nil {
		t.Fatal(err)
	}
	pem, _ := os.ReadFile(ca)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("PUT", tok["url"].(string)+"/api2/json/cluster/sdn", nil)
	req.Header.Set("Authorization", "PVEAPIToken=root@pam!sim="+tok["api_token_secret"].(string))
	res, err := hc.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("apply: %v %v", res, err)
	}
	_ = res.Body.Close()
	const node = "dv02hyp002p02"
	nodeDir := filepath.Join(render, node)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(nodeDir, "reloaded")); err == nil {
			if string(b) != node+" "+nodeDir+"\n" {
				t.Fatalf("reload command args: %q", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reload command did not run")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for path, want := range map[string]string{"etc/network/interfaces.d/sdn": "#version:1\n", "etc/frr/daemons.pve": "fabricd=no\nospfd=no\n"} {
		if b, err := os.ReadFile(filepath.Join(nodeDir, path)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", path, b, err, want)
		}
		res, err := hc.Get(tok["url"].(string) + "/_sim/nodes/" + node + "/files/" + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != 200 || string(body) != want {
			t.Errorf("/_sim/nodes/%s/files/%s: %d %q", node, path, res.StatusCode, body)
		}
	}
	if b, err := os.ReadFile(filepath.Join(nodeDir, "etc/frr/frr.conf")); err != nil || !strings.HasPrefix(string(b), "frr version 10.4.1\n") {
		t.Errorf("frr.conf: %q %v", b, err)
	}
}

// TestCLIAsPvesh: the binary called as pvesh, with the token file's pvesh_env, is a node's
// pvesh: root@pam itself, which may set a hookscript (the root token may not: PVE's root-only
// options want root@pam, Qemu.pm:1037).
func TestCLIAsPvesh(t *testing.T) {
	dir := t.TempDir()
	bin := pvesimBinary(t, dir)
	tokFile := filepath.Join(dir, "token.json")
	cmd, _ := startBin(t, bin, "--listen", "127.0.0.1:0", "--ca-out", filepath.Join(dir, "ca.pem"), "--token-out", tokFile)
	defer stopBin(t, cmd)
	var tok struct {
		Env map[string]string `json:"pvesh_env"`
	}
	b, _ := os.ReadFile(tokFile)
	if err := json.Unmarshal(b, &tok); err != nil || len(tok.Env) != 3 {
		t.Fatalf("token file %s: %v", b, err)
	}
	pvesh := filepath.Join(dir, "pvesh")
	if err := os.Symlink(bin, pvesh); err != nil {
		t.Fatal(err)
	}
	run := func(env map[string]string, args ...string) (string, error) {
		c := exec.Command(pvesh, args...)
		for k, v := range env {
			c.Env = append(c.Env, k+"="+v)
		}
		out, err := c.CombinedOutput()
		return string(out), err
	}
	cfg := "/nodes/dv02hyp002p02/qemu/9000/config"
	if out, err := run(tok.Env, "set", cfg, "--hookscript", "local:snippets/deevnet-envelope-guard"); err != nil || out != "null\n" {
		t.Fatalf("pvesh set hookscript: %v %q", err, out)
	}
	out, err := run(tok.Env, "get", cfg, "--output-format", "json")
	if err != nil || !strings.Contains(out, `"hookscript":"local:snippets/deevnet-envelope-guard"`) {
		t.Fatalf("pvesh get config: %v %q", err, out)
	}
	bad := map[string]string{}
	for k, v := range tok.Env {
		bad[k] = v
	}
	bad["PVESIM_AUTH"] = "PVESimNodeRoot wrong"
	if out, err := run(bad, "get", "/version"); err == nil || out != "Authentication failed!\n" {
		t.Fatalf("a wrong node credential: %v %q", err, out)
	}
	if out, err := run(nil, "get", "/version"); err == nil || !strings.Contains(out, "PVESIM_URL and PVESIM_AUTH must be set") {
		t.Fatalf("no environment: %v %q", err, out)
	}
}

// TestCLIAsLVCreate: the binary called as lvcreate makes a thin pool in the node's volume group
// out of its free space, as lvm2 does, and refuses what lvm2 refuses (exit 5, lvm2's message); the
// pool is then what PVE's API shows of the node (GET /nodes/{node}/disks/lvmthin).
func TestCLIAsLVCreate(t *testing.T) {
	dir := t.TempDir()
	bin := pvesimBinary(t, dir)
	cfgFile := filepath.Join(dir, "cfg.yml")
	// the group: 10 GiB, of which the pool tdemo takes 4
	if err := os.WriteFile(cfgFile, []byte("disks:\n  - {vg: tvg, thinpool: tenant-tdemo, size: 4294967296}\n  - {vg: tvg, vg_size: 10737418240}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(dir, "token.json")
	cmd, _ := startBin(t, bin, "--listen", "127.0.0.1:0", "--config", cfgFile, "--ca-out", filepath.Join(dir, "ca.pem"), "--token-out", tokFile)
	defer stopBin(t, cmd)
	var tok struct {
		Env map[string]string `json:"pvesh_env"`
	}
	b, _ := os.ReadFile(tokFile)
	if err := json.Unmarshal(b, &tok); err != nil {
		t.Fatalf("token file %s: %v", b, err)
	}
	for _, name := range []string{"lvcreate", "pvesh"} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) (string, int) {
		c := exec.Command(filepath.Join(dir, name), args...)
		for k, v := range tok.Env {
			c.Env = append(c.Env, k+"="+v)
		}
		c.Env = append(c.Env, "PVESIM_NODE=dv02hyp002p02")
		out, _ := c.CombinedOutput()
		return string(out), c.ProcessState.ExitCode()
	}
	if out, rc := run("lvcreate", "--type", "thin-pool", "-L", "4G", "-n", "tenant-tblue", "tvg"); rc != 0 || out != "  Logical volume \"tenant-tblue\" created.\n" {
		t.Fatalf("lvcreate: %d %q", rc, out)
	}
	if out, rc := run("pvesh", "get", "/nodes/dv02hyp002p02/disks/lvmthin"); rc != 0 || !strings.Contains(out, `"lv":"tenant-tblue"`) {
		t.Fatalf("the new pool is not what the API shows: %d %q", rc, out)
	}
	for _, c := range []struct{ args, want string }{
		{"--type thin-pool -L 4G -n tenant-tblue tvg", `  Logical Volume "tenant-tblue" already exists in volume group "tvg"`},
		// 2 GiB are left: 512 extents of 4 MiB
		{"--type thin-pool -L 3G -n tenant-tred tvg", `  Volume group "tvg" has insufficient free space (512 extents): 768 required`},
		{"--type thin-pool -L 1G -n tenant-tred data", `  Volume group "data" not found`},
		{"-L 1G -n tenant-tred tvg", "usage: lvcreate --type thin-pool"},
		{"--type thin-pool -L 1Q -n tenant-tred tvg", `lvcreate: -L "1Q": not a size`},
	} {
		if out, rc := run("lvcreate", strings.Fields(c.args)...); rc != 5 || !strings.Contains(out, c.want) {
			t.Errorf("lvcreate %s: %d %q, want exit 5 and %q", c.args, rc, out, c.want)
		}
	}
}

// TestCLIHelpListsAdminAPI: --help lists every admin endpoint the server answers (admin.go).
func TestCLIHelpListsAdminAPI(t *testing.T) {
	bin := pvesimBinary(t, t.TempDir())
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	for _, ep := range []string{"/_sim/stats", "/_sim/stats/reset", "/_sim/reset", "/_sim/faults", "/_sim/nodes/<node>/files/<path>",
		"/_sim/nodes/<node>/offline", "/_sim/nodes/<node>/online", "/_sim/disks/<node>", "/_sim/quorum", "/_sim/qdevice/down",
		"/_sim/api-workers", "/_sim/privileges/drop", "Called as lvcreate", "-render-dir"} {
		if !strings.Contains(string(out), ep) {
			t.Errorf("pvesim --help does not list %s:\n%s", ep, out)
		}
	}
}
