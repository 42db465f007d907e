package dnsgate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/deevnet/tenant/internal/dnsgate"
	"github.com/deevnet/tenant/internal/dnslab"
	"github.com/deevnet/tenant/internal/dnsupdate"
)

// lab is PowerDNS as the gateway expects it (the tenant zones updatable by the gateway's key
// alone) with the gateway in front on loopback.
type lab struct {
	*dnslab.Lab
	gate *dnsgate.Gate
	addr string      // the gateway, 127.0.0.1:port
	sub  dnsgate.Key // the substrate's key
	log  *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func startLab(t *testing.T, quotas map[string][2]int) *lab {
	t.Helper()
	l := dnslab.StartLab(t)
	fwd, err := l.CreateKey("dnsgate", "hmac-sha256")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := l.CreateKey("substrate", "hmac-sha256")
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range []string{dnslab.ZoneTdemo, dnslab.ZoneTother, dnslab.ZoneReverse} {
		// the tenant keys lose their grant: only the gateway's reaches the server
		if err := l.AllowUpdate(z, "dnsgate", "substrate"); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	tenants := map[string][]string{"tdemo": {dnslab.ZoneTdemo, dnslab.ZoneReverse}, "tother": {dnslab.ZoneTother}}
	for name, zones := range tenants {
		q, ok := quotas[name]
		if !ok {
			q = [2]int{1000, 600}
		}
		k := l.Keys[name]
		f := fmt.Sprintf("tenant: %s\nkey: {name: %s, algorithm: %s, secret: %q}\nzones: [%s]\ndns_records: %d\ndns_updates: %d\n",
			name, k.Name, k.Algorithm, k.Secret, strings.Join(zones, ", "), q[0], q[1])
		if err := os.WriteFile(filepath.Join(dir, name+".yml"), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port, err := dnslab.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	lg := &syncBuf{}
	g := &dnsgate.Gate{
		Upstream:  l.Addr(),
		Forward:   dnsgate.Key{Name: fwd.Name, Algorithm: fwd.Algorithm, Secret: fwd.Secret},
		Substrate: []dnsgate.Key{{Name: sub.Name, Algorithm: sub.Algorithm, Secret: sub.Secret}},
		Reader:    &dnsgate.PowerDNSAPI{URL: fmt.Sprintf("http://127.0.0.1:%d/api/v1/servers/localhost", l.APIPort), APIKey: l.APIKey},
		TenantDir: dir,
		Log:       lg,
	}
	if err := g.Load(); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for _, n := range []string{"tcp", "udp"} {
		s := g.Server(addr, n)
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go func() { _ = s.ListenAndServe() }()
		<-started
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	return &lab{Lab: l, gate: g, addr: addr, sub: dnsgate.Key{Name: sub.Name, Algorithm: sub.Algorithm, Secret: sub.Secret}, log: lg}
}

// client is nsupdate_tsig's client with the key k, to addr.
func client(addr string, k dnslab.Key) *dnsupdate.Client {
	host, port, _ := strings.Cut(addr, ":")
	var p int
	_, _ = fmt.Sscan(port, &p)
	return &dnsupdate.Client{Server: host, Port: p, Timeout: 10 * time.Second,
		Key: &dnsupdate.Key{Name: k.Name, Algorithm: k.Algorithm, Secret: k.Secret}}
}

// send adds rrs (presentation format) to zone through c and returns the rcode.
func send(t *testing.T, c *dnsupdate.Client, zone string, rrs ...string) (int, error) {
	t.Helper()
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		m.Insert([]dns.RR{rr})
	}
	err := c.Update(context.Background(), m)
	var ue *dnsupdate.UpdateError
	if errors.As(err, &ue) {
		return ue.Rcode, err
	}
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	return dns.RcodeSuccess, nil
}

// held is the number of records the server holds in zone, its SOA and apex NS aside.
func (l *lab) held(t *testing.T, zone string) int {
	t.Helper()
	rrs, err := l.gate.Reader.Records(context.Background(), zone)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rr := range rrs {
		h := rr.Header()
		if dns.CanonicalName(h.Name) == dns.CanonicalName(zone) && (h.Rrtype == dns.TypeSOA || h.Rrtype == dns.TypeNS) {
			continue
		}
		n++
	}
	return n
}

// answer asks addr (a loopback server, never the system's resolver) for name and type.
func answer(t *testing.T, addr, name string, qt uint16) (int, []dns.RR) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qt)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("query %s at %s: %v", name, addr, err)
	}
	return r.Rcode, r.Answer
}

// The flood: 40 UPDATEs of 500 A records. With a quota of 1000 the first two fit, the
// third is refused whole and so is every one after; tother's updates and lookups go on.
func TestFloodRefusedPastQuota(t *testing.T) {
	l := startLab(t, map[string][2]int{"tdemo": {1000, 600}})
	demo, other := client(l.addr, l.Keys["tdemo"]), client(l.addr, l.Keys["tother"])
	accepted, refused := 0, 0
	t0 := time.Now()
	for u := range 40 {
		var rrs []string
		for i := range 500 {
			n := u*500 + i
			rrs = append(rrs, fmt.Sprintf("f%d.%s 300 IN A 10.%d.%d.%d", n, dnslab.ZoneTdemo, n>>16&255, n>>8&255, n&255))
		}
		rc, err := send(t, demo, dnslab.ZoneTdemo, rrs...)
		switch rc {
		case dns.RcodeSuccess:
			accepted++
		case dns.RcodeRefused:
			refused++
			if u == 2 && !strings.Contains(err.Error(), "over the tenant's quota of 1000 (envelope.dns_records") {
				t.Errorf("refusal does not name the quota: %v", err)
			}
		default:
			t.Fatalf("update %d answered %s", u, dns.RcodeToString[rc])
		}
		// the other tenant is unaffected while the flood goes on
		if rc, _ := send(t, other, dnslab.ZoneTother, fmt.Sprintf("o%d.%s 300 IN A 10.20.130.%d", u, dnslab.ZoneTother, u+10)); rc != dns.RcodeSuccess {
			t.Fatalf("tother's update %d answered %s during tdemo's flood", u, dns.RcodeToString[rc])
		}
		if rc, ans := answer(t, l.Addr(), fmt.Sprintf("o%d.%s", u, dnslab.ZoneTother), dns.TypeA); rc != dns.RcodeSuccess || len(ans) != 1 {
			t.Fatalf("tother's lookup %d: %s %v", u, dns.RcodeToString[rc], ans)
		}
	}
	t.Logf("40 UPDATEs of 500 A records (and 40 of tother's, with lookups): %d accepted, %d refused in %v", accepted, refused, time.Since(t0).Round(time.Millisecond))
	if accepted != 2 || refused != 38 {
		t.Errorf("accepted %d, refused %d; want 2 and 38 (1000 records fit the quota)", accepted, refused)
	}
	if n := l.held(t, dnslab.ZoneTdemo); n != 1000 {
		t.Errorf("tdemo's zone holds %d records, want 1000: a refused update was applied in part", n)
	}
	if n := l.held(t, dnslab.ZoneTother); n != 40 {
		t.Errorf("tother's zone holds %d records, want 40", n)
	}
	// at the quota, replacing and deleting still work: neither grows the zone
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(dnslab.ZoneTdemo))
	rr, _ := dns.NewRR("f0." + dnslab.ZoneTdemo + " 300 IN A 10.0.0.0")
	m.RemoveRRset([]dns.RR{rr})
	if err := demo.Update(context.Background(), m); err != nil {
		t.Errorf("deleting at the quota: %v", err)
	}
}

// What sends the resolver elsewhere, and what the contract bounds, is refused whole.
func TestContractRefused(t *testing.T) {
	l := startLab(t, nil)
	demo := client(l.addr, l.Keys["tdemo"])
	z := dnslab.ZoneTdemo
	big := strings.Repeat("x", 250)
	cases := []struct {
		name string
		rrs  []string
		want string
	}{
		{"delegation with glue", []string{"sub." + z + " 300 IN NS ns.sub." + z, "ns.sub." + z + " 300 IN A 127.0.0.9"}, "type NS is not one a tenant may publish"},
		{"DNAME", []string{"alias." + z + " 300 IN DNAME mobile.deevnet.net."}, "type DNAME is not one"},
		{"2 KB TXT", []string{fmt.Sprintf("big.%s 300 IN TXT %q %q %q %q %q %q %q %q", z, big, big, big, big, big, big, big, big)}, "over the 1024 a record may take"},
		{"TTL 1", []string{"short." + z + " 1 IN A 10.20.129.99"}, "TTL 1 is outside 60..86400"},
		{"CNAME at the apex", []string{z + " 300 IN CNAME elsewhere.example."}, "CNAME at the zone's apex"},
		{"A in the reverse zone", []string{"99." + dnslab.ZoneReverse + " 300 IN A 10.20.129.99"}, "type A is not one"},
		{"the other tenant's zone", []string{"x." + dnslab.ZoneTother + " 300 IN A 10.20.130.9"}, "may not update zone " + dnslab.ZoneTother},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			zone := z
			if strings.Contains(c.rrs[0], "in-addr") {
				zone = dnslab.ZoneReverse
			}
			if strings.Contains(c.rrs[0], dnslab.ZoneTother) {
				zone = dnslab.ZoneTother
			}
			// a good record in the same message: nothing of a refused message is applied
			rrs := append([]string{"good." + zone + " 300 IN " + map[bool]string{true: "PTR good.invalid.", false: "A 10.20.129.98"}[zone == dnslab.ZoneReverse]}, c.rrs...)
			rc, err := send(t, demo, zone, rrs...)
			if rc != dns.RcodeRefused || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("answered %s (%v), want REFUSED naming %q", dns.RcodeToString[rc], err, c.want)
			}
			if n := l.held(t, zone); n != 0 {
				t.Errorf("zone %s holds %d records after a refused update", zone, n)
			}
		})
	}
}

// A zone that is no tenant's (the site zone) is answered NOTAUTH, as PowerDNS answers for a zone
// it does not serve; the other tenant's zone REFUSED (TestContractRefused).
func TestNoTenantsZoneNotAuth(t *testing.T) {
	l := startLab(t, nil)
	rc, err := send(t, client(l.addr, l.Keys["tdemo"]), "mobile.deevnet.net", "x.mobile.deevnet.net 300 IN A 10.20.255.1")
	if rc != dns.RcodeNotAuth || err == nil || !strings.Contains(err.Error(), "no tenant's zone at this gateway") {
		t.Fatalf("the site zone: %s (%v), want NOTAUTH", dns.RcodeToString[rc], err)
	}
}

// The tenant's key straight at the server: the server takes updates of the tenant zones from the
// gateway's key only, so going around the gateway is refused.
func TestTenantKeyAtTheServerRefused(t *testing.T) {
	l := startLab(t, nil)
	rc, _ := send(t, client(l.Addr(), l.Keys["tdemo"]), dnslab.ZoneTdemo, "sub."+dnslab.ZoneTdemo+" 300 IN NS ns.sub."+dnslab.ZoneTdemo)
	if rc != dns.RcodeRefused {
		t.Fatalf("tdemo's key at PowerDNS answered %s, want REFUSED", dns.RcodeToString[rc])
	}
	if n := l.held(t, dnslab.ZoneTdemo); n != 0 {
		t.Errorf("zone holds %d records", n)
	}
}

// The substrate's key is bound by no tenant's quota or contract.
func TestSubstrateKeyNotBound(t *testing.T) {
	l := startLab(t, map[string][2]int{"tdemo": {2, 1}})
	sub := client(l.addr, dnslab.Key{Name: l.sub.Name, Algorithm: l.sub.Algorithm, Secret: l.sub.Secret})
	for i := range 3 {
		rrs := []string{
			fmt.Sprintf("s%d.%s 300 IN A 10.20.129.%d", i, dnslab.ZoneTdemo, i+1),
			fmt.Sprintf("t%d.%s 300 IN A 10.20.129.%d", i, dnslab.ZoneTdemo, i+1),
		}
		if rc, err := send(t, sub, dnslab.ZoneTdemo, rrs...); rc != dns.RcodeSuccess {
			t.Fatalf("substrate update %d: %v", i, err)
		}
	}
	if n := l.held(t, dnslab.ZoneTdemo); n != 6 {
		t.Errorf("zone holds %d records, want 6", n)
	}
	// and the tenant, now over its quota of 2, may not add but may delete
	demo := client(l.addr, l.Keys["tdemo"])
	if rc, _ := send(t, demo, dnslab.ZoneTdemo, "x."+dnslab.ZoneTdemo+" 300 IN A 10.20.129.50"); rc != dns.RcodeRefused {
		t.Errorf("tenant over its quota added: %s", dns.RcodeToString[rc])
	}
}

// dns_updates a minute: the fourth of a quota of 3 is refused, naming the quota.
func TestRateRefused(t *testing.T) {
	l := startLab(t, map[string][2]int{"tdemo": {1000, 3}})
	demo := client(l.addr, l.Keys["tdemo"])
	for i := range 4 {
		rc, err := send(t, demo, dnslab.ZoneTdemo, fmt.Sprintf("r%d.%s 300 IN A 10.20.129.%d", i, dnslab.ZoneTdemo, i+1))
		want := dns.RcodeSuccess
		if i == 3 {
			want = dns.RcodeRefused
			if err == nil || !strings.Contains(err.Error(), "quota of 3 updates a minute (envelope.dns_updates") {
				t.Errorf("refusal does not name the rate: %v", err)
			}
		}
		if rc != want {
			t.Fatalf("update %d answered %s, want %s", i, dns.RcodeToString[rc], dns.RcodeToString[want])
		}
	}
	if n := l.held(t, dnslab.ZoneTdemo); n != 3 {
		t.Errorf("zone holds %d records, want 3", n)
	}
	if strings.Contains(l.log.String(), l.Keys["tdemo"].Secret) {
		t.Error("the gateway's log holds the tenant's secret")
	}
}

// Two updates of 600 records sent at once under a quota of 1000: the zone is counted and
// forwarded one update at a time, so exactly one fits.
func TestConcurrentUpdatesCountedOneAtATime(t *testing.T) {
	l := startLab(t, map[string][2]int{"tdemo": {1000, 600}})
	var wg sync.WaitGroup
	rcs := make([]int, 2)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rrs []string
			for i := range 600 {
				rrs = append(rrs, fmt.Sprintf("c%d-%d.%s 300 IN A 10.20.%d.%d", g, i, dnslab.ZoneTdemo, i>>8, i&255))
			}
			m := new(dns.Msg)
			m.SetUpdate(dns.Fqdn(dnslab.ZoneTdemo))
			for _, s := range rrs {
				rr, _ := dns.NewRR(s)
				m.Insert([]dns.RR{rr})
			}
			err := client(l.addr, l.Keys["tdemo"]).Update(context.Background(), m)
			var ue *dnsupdate.UpdateError
			switch {
			case err == nil:
				rcs[g] = dns.RcodeSuccess
			case errors.As(err, &ue):
				rcs[g] = ue.Rcode
			default:
				rcs[g] = -1
			}
		}()
	}
	wg.Wait()
	if n := l.held(t, dnslab.ZoneTdemo); n != 600 {
		t.Errorf("zone holds %d records after two concurrent updates of 600 (rcodes %v), want 600", n, rcs)
	}
}
