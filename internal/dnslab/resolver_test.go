package dnslab

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// tenantAddr is the address the tenant chose for its name server: loopback, so the
// test can listen there, and nothing the lab's servers are on.
const tenantAddr = "127.0.0.9"

// listenCounting answers nothing and counts every DNS message sent to tenantAddr:53 (UDP and TCP).
func listenCounting(t *testing.T) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		n.Add(1)
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeRefused)
		_ = w.WriteMsg(m)
	})
	for _, nw := range []string{"udp", "tcp"} {
		s := &dns.Server{Addr: net.JoinHostPort(tenantAddr, "53"), Net: nw, Handler: h}
		started := make(chan error, 1)
		s.NotifyStartedFunc = func() { started <- nil }
		go func() { started <- s.ListenAndServe() }()
		if err := <-started; err != nil {
			t.Skipf("cannot listen on %s:53 (%v): root is needed", tenantAddr, err)
		}
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	return &n
}

// delegate publishes, as the substrate could before the contract refused it, the issue's
// delegation: sub.<zone> NS ns.sub.<zone> with glue A 127.0.0.9.
func delegate(t *testing.T, p *PowerDNS, zone string) {
	t.Helper()
	sub, ns := "sub."+fqdn(zone), "ns.sub."+fqdn(zone)
	_, err := p.api("PATCH", "/zones/"+fqdn(zone), map[string]any{"rrsets": []map[string]any{
		{"name": sub, "type": "NS", "ttl": 300, "changetype": "REPLACE", "records": []map[string]any{{"content": ns, "disabled": false}}},
		{"name": ns, "type": "A", "ttl": 300, "changetype": "REPLACE", "records": []map[string]any{{"content": tenantAddr, "disabled": false}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// The lookup through the site resolver: a stub-zone follows the tenant's referral to
// 127.0.0.9 (the issue counted 9 queries), a forward-zone sends it nothing.
func TestResolverNeverQueriesTheTenantsServer(t *testing.T) {
	for _, c := range []struct {
		forward bool
		want    func(int64) bool
		what    string
	}{
		{false, func(n int64) bool { return n > 0 }, "stub-zone: follows the delegation"},
		{true, func(n int64) bool { return n == 0 }, "forward-zone: sends nothing to the tenant's address"},
	} {
		t.Run(fmt.Sprintf("forward=%v", c.forward), func(t *testing.T) {
			n := listenCounting(t)
			l := StartLab(t)
			delegate(t, l.PowerDNS, ZoneTdemo)
			u := StartUnbound(t, []Stub{{Zone: DefaultSite, Port: l.Port, Forward: c.forward}}, l.Port)
			m := new(dns.Msg)
			m.SetQuestion("x.sub."+fqdn(ZoneTdemo), dns.TypeA)
			r, _, err := (&dns.Client{Timeout: 10 * time.Second}).Exchange(m, u.Addr())
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // Unbound's retries after it answered
			t.Logf("%s: the resolver answered %s and sent %d queries to %s:53", c.what, dns.RcodeToString[r.Rcode], n.Load(), tenantAddr)
			if !c.want(n.Load()) {
				t.Errorf("%s: %d queries to %s", c.what, n.Load(), tenantAddr)
			}
			// the tenant's own names still resolve
			m.SetQuestion(fqdn(ZoneTdemo), dns.TypeSOA)
			if r, _, err := (&dns.Client{Timeout: 10 * time.Second}).Exchange(m, u.Addr()); err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
				t.Errorf("the zone's SOA through the resolver: %v %v", r, err)
			}
		})
	}
}

// renderSnippet renders the role tenant_dns_zone's resolver snippet with Jinja2 (as Ansible
// would) for tdemo's zones on the lab's PowerDNS.
func renderSnippet(t *testing.T, port int) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import jinja2").Run() != nil {
		t.Skip("python3 with jinja2 is needed to render the role's template")
	}
	_, self, _, _ := runtime.Caller(0)
	tmpl := filepath.Join(filepath.Dir(self), "..", "..", "roles", "tenant_dns_zone", "templates", "unbound-stub.conf.j2")
	vars := fmt.Sprintf(`{"ansible_managed": "test", "tenant_dns_zone_tenant": "tdemo", "tenant_dns_zone_zones": [%q, %q], "tenant_dns_zone_unbound_stub_addrs": ["127.0.0.1@%d"]}`,
		fqdn(ZoneTdemo), fqdn(ZoneReverse), port)
	out, err := exec.Command(py, "-c", `import jinja2, json, sys
print(jinja2.Template(open(sys.argv[1]).read()).render(**json.loads(sys.argv[2])))`, tmpl, vars).CombinedOutput()
	if err != nil {
		t.Fatalf("rendering %s: %v: %s", tmpl, err, out)
	}
	f := filepath.Join(t.TempDir(), "tenant-tdemo.conf")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// The snippet onboarding writes into the site resolver: tdemo's zones are its own there (more
// specific than the site's), and its delegation is not followed.
func TestRoleSnippetNeverQueriesTheTenantsServer(t *testing.T) {
	n := listenCounting(t)
	l := StartLab(t)
	delegate(t, l.PowerDNS, ZoneTdemo)
	u := StartUnbound(t, nil, l.Port, renderSnippet(t, l.Port))
	m := new(dns.Msg)
	m.SetQuestion("x.sub."+fqdn(ZoneTdemo), dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 10 * time.Second}).Exchange(m, u.Addr())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	t.Logf("the role's snippet: the resolver answered %s and sent %d queries to %s:53", dns.RcodeToString[r.Rcode], n.Load(), tenantAddr)
	if n.Load() != 0 {
		t.Errorf("%d queries to %s, the tenant's address", n.Load(), tenantAddr)
	}
	m.SetQuestion(fqdn(ZoneTdemo), dns.TypeSOA)
	if r, _, err := (&dns.Client{Timeout: 10 * time.Second}).Exchange(m, u.Addr()); err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		t.Errorf("the zone's SOA through the resolver: %v %v", r, err)
	}
}
