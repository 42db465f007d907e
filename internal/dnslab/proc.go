// Package dnslab starts real DNS servers (PowerDNS, BIND, Unbound) for tests: on free loopback
// ports, as child processes of the test, state in the test's temp directory, stopped by PID at
// cleanup. It installs nothing; a missing binary skips the test (fails in CI, via testenv).
package dnslab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/testenv"
	"github.com/miekg/dns"
)

// Key is a TSIG key as the servers know it.
type Key struct {
	Name      string // no trailing dot
	Algorithm string // hmac-sha256 ...
	Secret    string // base64
}

// FreePort returns a loopback port that is free for both TCP and UDP right now.
func FreePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		_ = l.Close()
		if err == nil {
			_ = u.Close()
			return port, nil
		}
	}
	return 0, errors.New("finding a free port: no port free for both TCP and UDP")
}

// freePorts replaces each 0 among ports by a free port.
func freePorts(ports ...*int) error {
	for _, p := range ports {
		if *p == 0 {
			n, err := FreePort()
			if err != nil {
				return err
			}
			*p = n
		}
	}
	return nil
}

// DefaultSite is the site zone of the seed: the name servers of the lab's zones are ns1.<site>.
const DefaultSite = "mobile.deevnet.net"

func siteOrDefault(site string) string {
	if site == "" {
		return DefaultSite
	}
	return site
}

// startForTest starts a server for the test in its temp directory and stops it at cleanup; a
// missing binary of bins skips the test (fails it in CI), naming the Debian packages.
func startForTest[S interface{ Stop() }](t testing.TB, what, packages string, bins []string, start func(dir string) (S, error)) S {
	t.Helper()
	missing := Have(bins...)
	testenv.Require(t, what+" ("+packages+"); missing "+strings.Join(missing, ", "), len(missing) == 0)
	srv, err := start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// proc is a server started by the lab.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// start runs bin with args in its own session, output to logFile. The caller registers stop.
func start(name, bin string, args []string, logFile string) (*proc, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // reaps the child: no zombie keeps answering kill -0
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id of the server.
func (p *proc) PID() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to this process only (by PID), then SIGKILL after a grace period.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail returns the end of the server's log, for failure messages.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	s := string(b)
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}

// waitDNS waits until the server answers any DNS message on port (any rcode counts).
func waitDNS(p *proc, port int, qname string) error {
	c := &dns.Client{Net: "udp", Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(qname), dns.TypeSOA)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited during start-up; log:\n%s", p.name, p.tail())
		}
		if _, _, err := c.Exchange(m, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer on 127.0.0.1:%d within 15s; log:\n%s", p.name, port, p.tail())
}

// waitZone waits until the server answers authoritatively for zone's SOA (the zone is loaded).
func waitZone(p *proc, port int, zone string) error {
	return waitSOA(p, port, zone, false, "load zone")
}

// waitResolve waits until a resolver answers NOERROR for zone's SOA, recursively.
func waitResolve(p *proc, port int, zone string) error {
	return waitSOA(p, port, zone, true, "resolve")
}

func waitSOA(p *proc, port int, zone string, recurse bool, what string) error {
	c := &dns.Client{Net: "udp", Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeSOA)
	m.RecursionDesired = recurse
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited during start-up; log:\n%s", p.name, p.tail())
		}
		r, _, err := c.Exchange(m, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil && r.Rcode == dns.RcodeSuccess && (recurse || r.Authoritative) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not %s %s within 15s; log:\n%s", p.name, what, zone, p.tail())
}

// lookPath finds a server binary, also in the sbin directories a non-root PATH may lack.
func lookPath(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, true
		}
	}
	return "", false
}

// Have reports whether every named binary is installed.
func Have(names ...string) (missing []string) {
	for _, n := range names {
		if _, ok := lookPath(n); !ok {
			missing = append(missing, n)
		}
	}
	return missing
}

func fqdn(s string) string { return dns.Fqdn(strings.ToLower(s)) }
