package dnslab

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Stub sends queries for Zone to the authoritative server on 127.0.0.1:Port. Forward makes it
// a forward-zone: Unbound then takes the server's answers and never follows a referral (a
// tenant's delegation) to the addresses it names (docs/adr/0017-dns-quota.md).
type Stub struct {
	Zone    string
	Port    int
	Forward bool
}

// Unbound is a running resolver that never leaves loopback: stubs to the lab's authoritative
// servers, and forward-zone "." to a loopback server so nothing recurses to the Internet.
type Unbound struct {
	Dir  string
	Port int
	proc *proc
}

// UnboundPackages are the Debian packages StartUnbound needs.
const UnboundPackages = "unbound"

// StartUnbound starts unbound for the test and stops it at cleanup. forwardPort receives every
// query outside the stubs (use the authoritative server's port). Each include is a file of
// Unbound configuration read after the stubs (a snippet onboarding writes).
func StartUnbound(t testing.TB, stubs []Stub, forwardPort int, includes ...string) *Unbound {
	t.Helper()
	return startForTest(t, "Unbound", UnboundPackages, []string{"unbound"}, func(dir string) (*Unbound, error) {
		return startUnbound(dir, 0, stubs, forwardPort, includes...)
	})
}

// startUnbound starts unbound on port (0: a free one).
func startUnbound(dir string, port int, stubs []Stub, forwardPort int, includes ...string) (*Unbound, error) {
	err := freePorts(&port)
	if err != nil {
		return nil, err
	}
	u := &Unbound{Dir: dir, Port: port}
	var c bytes.Buffer
	fmt.Fprintf(&c, `server:
    interface: 127.0.0.1
    port: %d
    do-ip6: no
    do-daemonize: no
    chroot: ""
    username: ""
    directory: %q
    pidfile: ""
    use-syslog: no
    logfile: ""
    access-control: 127.0.0.0/8 allow
    do-not-query-localhost: no
    module-config: "iterator"
    cache-max-ttl: 0
    cache-max-negative-ttl: 0
    local-zone: "10.in-addr.arpa." nodefault
`, port, dir)
	for _, s := range stubs {
		fmt.Fprintf(&c, "    domain-insecure: %q\n", s.Zone)
	}
	for _, s := range stubs {
		if s.Forward {
			fmt.Fprintf(&c, "forward-zone:\n    name: %q\n    forward-addr: 127.0.0.1@%d\n", s.Zone, s.Port)
			continue
		}
		fmt.Fprintf(&c, "stub-zone:\n    name: %q\n    stub-addr: 127.0.0.1@%d\n", s.Zone, s.Port)
	}
	fmt.Fprintf(&c, "forward-zone:\n    name: \".\"\n    forward-addr: 127.0.0.1@%d\n", forwardPort)
	for _, f := range includes {
		fmt.Fprintf(&c, "include: %q\n", f)
	}
	cf := filepath.Join(dir, "unbound.conf")
	if err := os.WriteFile(cf, c.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("unbound config: %w", err)
	}
	bin, _ := lookPath("unbound")
	u.proc, err = start("unbound", bin, []string{"-d", "-c", cf}, filepath.Join(dir, "unbound.log"))
	if err != nil {
		return nil, err
	}
	if err := waitDNS(u.proc, port, "."); err != nil {
		u.Stop()
		return nil, err
	}
	return u, nil
}

// Stop ends unbound (by its PID).
func (u *Unbound) Stop() {
	if u.proc != nil {
		u.proc.stop()
	}
}

// Addr is "127.0.0.1:port".
func (u *Unbound) Addr() string { return "127.0.0.1:" + strconv.Itoa(u.Port) }
