package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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
	// PVESIM_BIN tests the binary that playbooks use (make test-pvesim sets it).
	bin := os.Getenv("PVESIM_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "pvesim")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
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
