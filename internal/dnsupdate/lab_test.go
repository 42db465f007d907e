package dnsupdate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/dnslab"
	"github.com/miekg/dns"
)

func client(port int, k dnslab.Key) *Client {
	return &Client{Server: "127.0.0.1", Port: port, Timeout: 3 * time.Second,
		Key: &Key{Name: k.Name, Algorithm: k.Algorithm, Secret: k.Secret}}
}

func mustSet(t *testing.T, name, typ string, ttl uint32, zone string, values ...string) RRSet {
	t.Helper()
	ty, err := ParseType(typ)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSet(Fqdn(name, zone), ty, ttl, values, zone)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lookup asks server addr (never the system resolver) and returns the answer's RDATA sorted.
func lookup(t *testing.T, addr, name string, qt uint16) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qt)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 3 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("lookup %s %s at %s: %v", name, dns.TypeToString[qt], addr, err)
	}
	s := RRSet{}
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == qt {
			s.RRs = append(s.RRs, rr)
		}
	}
	return s.Values()
}

func converge(t *testing.T, req Request) *Result {
	t.Helper()
	res, err := Converge(context.Background(), req)
	if err != nil {
		t.Fatalf("converge: %v", err)
	}
	return res
}

func TestPowerDNSForwardAndReverseThroughUnbound(t *testing.T) {
	lab := dnslab.StartLab(t)
	ctx := context.Background()
	fc := client(lab.Port, lab.Keys["tdemo"])
	a := mustSet(t, "tdemo-1", "A", 300, dnslab.ZoneTdemo, "10.20.129.10")
	req := Request{Forward: fc, Zone: dnslab.ZoneTdemo, Sets: []Desired{{Set: a, TTLSet: true, State: Present}},
		PTR: map[string]bool{a.Key(): true}}
	res := converge(t, req)
	if !res.Changed || len(res.Applied) != 2 || res.Sent.Updates != 2 {
		t.Fatalf("first run: changed=%v applied=%v sent=%+v", res.Changed, res.Applied, res.Sent)
	}
	u := dnslab.StartUnbound(t, []dnslab.Stub{{Zone: "mobile.deevnet.net", Port: lab.Port}, {Zone: "20.10.in-addr.arpa", Port: lab.Port}}, lab.Port)
	if got := lookup(t, u.Addr(), "tdemo-1.tdemo.mobile.deevnet.net", dns.TypeA); strings.Join(got, ",") != "10.20.129.10" {
		t.Errorf("A via unbound = %v", got)
	}
	if got := lookup(t, u.Addr(), "10.129.20.10.in-addr.arpa", dns.TypePTR); strings.Join(got, ",") != "tdemo-1.tdemo.mobile.deevnet.net." {
		t.Errorf("PTR via unbound = %v", got)
	}

	// Second run: only reads on the wire, counted on both sides.
	st0, err := lab.Stats()
	if err != nil {
		t.Fatal(err)
	}
	fc2 := client(lab.Port, lab.Keys["tdemo"])
	req.Forward = fc2
	res = converge(t, req)
	st1, _ := lab.Stats()
	if res.Changed || res.Sent.Updates != 0 {
		t.Fatalf("second run changed=%v sent=%+v", res.Changed, res.Sent)
	}
	if d := st1["dnsupdate-queries"] - st0["dnsupdate-queries"]; d != 0 {
		t.Errorf("server saw %d updates on the second run", d)
	}
	if got, want := dnslab.Messages(st1)-dnslab.Messages(st0), int64(res.Sent.Queries); got != want {
		t.Errorf("server saw %d messages, client counted %d queries", got, want)
	}

	// tdemo's key on another tenant's zone: REFUSED, in words.
	o := mustSet(t, "evil", "A", 300, dnslab.ZoneTother, "10.20.130.66")
	_, err = Converge(ctx, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: dnslab.ZoneTother, Sets: []Desired{{Set: o, State: Present}}})
	var ue *UpdateError
	if !errors.As(err, &ue) || ue.Rcode != dns.RcodeRefused || !strings.Contains(err.Error(), "not allowed on the zone") {
		t.Fatalf("cross-tenant update: %v", err)
	}
	if got := lookup(t, lab.Addr(), "evil.tother.mobile.deevnet.net", dns.TypeA); len(got) != 0 {
		t.Errorf("evil record exists: %v", got)
	}
	// A wrong secret is REFUSED too (PowerDNS does not say BADSIG); the secret is not in the error.
	bad := lab.Keys["tdemo"]
	bad.Secret = lab.Keys["tother"].Secret
	_, err = Converge(ctx, Request{Forward: client(lab.Port, bad), Zone: dnslab.ZoneTdemo, Sets: []Desired{{Set: mustSet(t, "b", "A", 300, dnslab.ZoneTdemo, "10.20.129.98"), State: Present}}})
	if !errors.As(err, &ue) || ue.Rcode != dns.RcodeRefused || strings.Contains(err.Error(), bad.Secret) {
		t.Fatalf("wrong secret: %v", err)
	}
}

func TestPowerDNSMultiValueExactTTLAndTXT(t *testing.T) {
	lab := dnslab.StartLab(t)
	z := dnslab.ZoneTdemo
	run := func(d ...Desired) *Result {
		return converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Sets: d})
	}
	run(Desired{Set: mustSet(t, "web", "A", 300, z, "10.20.129.20"), State: Present})
	run(Desired{Set: mustSet(t, "web", "A", 300, z, "10.20.129.21"), State: Present})
	if got := lookup(t, lab.Addr(), "web."+z, dns.TypeA); strings.Join(got, ",") != "10.20.129.20,10.20.129.21" {
		t.Fatalf("two separate present calls: %v", got)
	}
	// TTL not given: an existing set keeps its TTL, so this is a no-op.
	if r := run(Desired{Set: mustSet(t, "web", "A", 0, z, "10.20.129.21"), State: Present}); r.Changed {
		t.Fatal("present of an existing value without ttl changed something")
	}
	run(Desired{Set: mustSet(t, "web", "A", 300, z, "10.20.129.22", "10.20.129.21"), TTLSet: true, State: Exact})
	if got := lookup(t, lab.Addr(), "web."+z, dns.TypeA); strings.Join(got, ",") != "10.20.129.21,10.20.129.22" {
		t.Fatalf("exact: %v", got)
	}
	r := run(Desired{Set: mustSet(t, "web", "A", 60, z, "10.20.129.22"), TTLSet: true, State: Present})
	if !r.Changed {
		t.Fatal("ttl change not applied")
	}
	s, err := client(lab.Port, lab.Keys["tdemo"]).Query(context.Background(), "web."+z, dns.TypeA)
	if err != nil || s.TTL != 60 || len(s.RRs) != 2 {
		t.Fatalf("after ttl change: %+v %v", s, err)
	}
	long := strings.Repeat("0123456789", 60) + `with "quotes" and \ backslash`
	txt := Desired{Set: mustSet(t, "@", "TXT", 300, z, long, "v=spf1 -all"), State: Exact, TTLSet: true}
	run(txt)
	got := lookup(t, lab.Addr(), z, dns.TypeTXT)
	if len(got) != 2 {
		t.Fatalf("txt: %v", got)
	}
	if r := run(txt); r.Changed {
		t.Fatalf("long TXT not idempotent: %+v", r.Plans[0].Changes)
	}
	// Replacing it sends the long TXT as a value-dependent prerequisite, which the server must match.
	run(Desired{Set: mustSet(t, "@", "TXT", 300, z, long+"!"), State: Exact, TTLSet: true})
	if got := lookup(t, lab.Addr(), z, dns.TypeTXT); len(got) != 1 || !strings.HasSuffix(got[0], `!"`) {
		t.Fatalf("txt replaced: %v", got)
	}
	run(Desired{Set: mustSet(t, "web", "A", 0, z, "10.20.129.21"), State: Absent})
	if got := lookup(t, lab.Addr(), "web."+z, dns.TypeA); strings.Join(got, ",") != "10.20.129.22" {
		t.Fatalf("absent one value: %v", got)
	}
	run(Desired{Set: mustSet(t, "web", "A", 0, z), State: Absent})
	if got := lookup(t, lab.Addr(), "web."+z, dns.TypeA); len(got) != 0 {
		t.Fatalf("absent set: %v", got)
	}
}

func TestPowerDNSOwnershipCheckModeAndConcurrency(t *testing.T) {
	lab := dnslab.StartLab(t)
	z := dnslab.ZoneTdemo
	ctx := context.Background()
	own := func(o string) Ownership { return Ownership{Owner: o} }
	// Someone else (team "ops") owns api.
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: own("ops"),
		Sets: []Desired{{Set: mustSet(t, "api", "A", 300, z, "10.20.129.50"), State: Present}}})
	// An unregistered record written by hand.
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z,
		Sets: []Desired{{Set: mustSet(t, "hand", "A", 300, z, "10.20.129.51"), State: Present}}})
	for _, name := range []string{"api", "hand"} {
		for _, st := range []State{Absent, Exact} {
			vals := []string{"10.20.129.99"}
			if st == Absent {
				vals = nil // the whole set
			}
			_, err := Converge(ctx, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: own("tdemo"),
				Sets: []Desired{{Set: mustSet(t, name, "A", 300, z, vals...), State: st}}})
			if err == nil || !strings.Contains(err.Error(), "refusing") {
				t.Errorf("%s %s by tdemo: err=%v", st, name, err)
			}
		}
	}
	if got := lookup(t, lab.Addr(), "api."+z, dns.TypeA); len(got) != 1 {
		t.Fatalf("foreign record touched: %v", got)
	}
	// Our own record: created with its registry, removed with it.
	mine := Desired{Set: mustSet(t, "mine", "A", 300, z, "10.20.129.52"), State: Exact}
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: own("tdemo"), Sets: []Desired{mine}})
	if got := lookup(t, lab.Addr(), "_dvt-a.mine."+z, dns.TypeTXT); len(got) != 1 || !strings.Contains(got[0], "owner=tdemo") {
		t.Fatalf("registry: %v", got)
	}
	// Check mode: plans the removal, sends nothing.
	st0, _ := lab.Stats()
	gone := Desired{Set: mustSet(t, "mine", "A", 0, z), State: Absent}
	c := client(lab.Port, lab.Keys["tdemo"])
	res := converge(t, Request{Forward: c, Zone: z, Ownership: own("tdemo"), Sets: []Desired{gone}, CheckMode: true})
	st1, _ := lab.Stats()
	if !res.Changed || c.Sent.Updates != 0 || st1["dnsupdate-queries"] != st0["dnsupdate-queries"] {
		t.Fatalf("check mode: changed=%v sent=%+v", res.Changed, c.Sent)
	}
	// A concurrent writer between read and update: the prerequisite makes the server refuse.
	p := &Planner{Client: client(lab.Port, lab.Keys["tdemo"]), Ownership: own("tdemo")}
	plan, err := p.Plan(ctx, z, []Desired{{Set: mustSet(t, "mine", "A", 300, z, "10.20.129.53"), State: Exact}})
	if err != nil {
		t.Fatal(err)
	}
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: own("tdemo"),
		Sets: []Desired{{Set: mustSet(t, "mine", "A", 300, z, "10.20.129.54"), State: Present}}})
	err = p.Client.Update(ctx, plan.Update)
	var ue *UpdateError
	if !errors.As(err, &ue) || ue.Rcode != dns.RcodeNXRrset {
		t.Fatalf("stale plan: %v", err)
	}
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: own("tdemo"), Sets: []Desired{gone}})
	for _, n := range []string{"mine." + z, "_dvt-a.mine." + z} {
		if got := lookup(t, lab.Addr(), n, dns.TypeANY); len(got) != 0 {
			t.Errorf("%s left: %v", n, got)
		}
	}
}

func TestPowerDNSZoneDiscoveryAndAXFR(t *testing.T) {
	lab := dnslab.StartLab(t)
	c := client(lab.Port, lab.Keys["tdemo"])
	a := mustSet(t, "disc.tdemo.mobile.deevnet.net.", "A", 300, "", "10.20.129.60")
	res := converge(t, Request{Forward: c, Sets: []Desired{{Set: a, State: Present}}, PTR: map[string]bool{a.Key(): true}})
	if len(res.Plans) != 2 || res.Plans[0].Zone != "tdemo.mobile.deevnet.net." || res.Plans[1].Zone != "129.20.10.in-addr.arpa." {
		t.Fatalf("zones: %v %v", res.Plans[0].Zone, res.Plans[len(res.Plans)-1].Zone)
	}
	c2 := client(lab.Port, lab.Keys["tdemo"])
	res = converge(t, Request{Forward: c2, Zone: dnslab.ZoneTdemo, Read: ReadAXFR, Sets: []Desired{{Set: a, State: Present}}})
	if res.Changed || c2.Sent.AXFRs != 1 || c2.Sent.Queries != 0 {
		t.Fatalf("axfr read: changed=%v sent=%+v", res.Changed, c2.Sent)
	}
}

func TestBINDPolicyAndTSIGErrors(t *testing.T) {
	keys := []dnslab.Key{
		{Name: "tdemo", Algorithm: "hmac-sha256", Secret: "c2VjcmV0LXRkZW1vLTAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWI="},
		{Name: "tother", Algorithm: "hmac-sha512", Secret: "c2VjcmV0LXRvdGhlci0wMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFi"},
	}
	b := dnslab.StartBIND(t, keys, []dnslab.BINDZone{
		{Name: dnslab.ZoneTdemo, Grants: []string{"grant tdemo zonesub ANY;"}},
		{Name: dnslab.ZoneTother, Grants: []string{"grant tother zonesub ANY;"}},
		{Name: dnslab.ZoneReverse, Grants: []string{"grant tdemo zonesub PTR;"}},
	})
	ctx := context.Background()
	a := mustSet(t, "tdemo-1", "A", 300, dnslab.ZoneTdemo, "10.20.129.10")
	req := Request{Forward: client(b.Port, keys[0]), Zone: dnslab.ZoneTdemo, Sets: []Desired{{Set: a, State: Present}}, PTR: map[string]bool{a.Key(): true}}
	converge(t, req)
	if got := lookup(t, b.Addr(), "10.129.20.10.in-addr.arpa", dns.TypePTR); len(got) != 1 {
		t.Fatalf("bind PTR: %v", got)
	}
	req.Forward = client(b.Port, keys[0])
	if res := converge(t, req); res.Changed {
		t.Fatal("bind second run changed")
	}
	// sha512 key of tother on its own zone works.
	converge(t, Request{Forward: client(b.Port, keys[1]), Zone: dnslab.ZoneTother, Sets: []Desired{{Set: mustSet(t, "ok", "A", 300, dnslab.ZoneTother, "10.20.130.10"), State: Present}}})

	cases := []struct {
		name  string
		key   dnslab.Key
		zone  string
		rcode int
		tsig  uint16
		words string
	}{
		{"other tenant's zone", keys[0], dnslab.ZoneTother, dns.RcodeRefused, 0, "not allowed on the zone"},
		{"wrong secret", dnslab.Key{Name: "tdemo", Algorithm: "hmac-sha256", Secret: keys[1].Secret}, dnslab.ZoneTdemo, dns.RcodeNotAuth, dns.RcodeBadSig, "key_secret is wrong"},
		{"unknown key", dnslab.Key{Name: "nosuch", Algorithm: "hmac-sha256", Secret: keys[0].Secret}, dnslab.ZoneTdemo, dns.RcodeNotAuth, dns.RcodeBadKey, "does not know key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Converge(ctx, Request{Forward: client(b.Port, tc.key), Zone: tc.zone,
				Sets: []Desired{{Set: mustSet(t, "x", "A", 300, tc.zone, "10.20.129.97"), State: Present}}})
			var ue *UpdateError
			if !errors.As(err, &ue) || ue.Rcode != tc.rcode || ue.TSIGCode != tc.tsig || !strings.Contains(err.Error(), tc.words) {
				t.Fatalf("got %v", err)
			}
			if strings.Contains(err.Error(), tc.key.Secret) {
				t.Fatal("secret in error")
			}
		})
	}
	// An A record in the reverse zone is outside tdemo's PTR-only grant.
	_, err := Converge(ctx, Request{Forward: client(b.Port, keys[0]), Zone: dnslab.ZoneReverse,
		Sets: []Desired{{Set: mustSet(t, "12", "A", 300, dnslab.ZoneReverse, "10.1.1.1"), State: Present}}})
	var ue *UpdateError
	if !errors.As(err, &ue) || ue.Rcode != dns.RcodeRefused {
		t.Fatalf("A in reverse zone: %v", err)
	}
	// NOTZONE: a record outside the zone is caught before sending.
	_, err = Converge(ctx, Request{Forward: client(b.Port, keys[0]), Zone: dnslab.ZoneTdemo,
		Sets: []Desired{{Set: mustSet(t, "x.tother.mobile.deevnet.net.", "A", 300, "", "10.20.129.97"), State: Present}}})
	if err == nil || !strings.Contains(err.Error(), "not inside zone") {
		t.Fatalf("outside zone: %v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	port, err := dnslab.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{Server: "127.0.0.1", Port: port, Timeout: 300 * time.Millisecond}
	_, err = c.Query(context.Background(), "x.example.", dns.TypeA)
	if err == nil || !strings.Contains(err.Error(), "refused the connection") {
		t.Fatalf("tcp: %v", err)
	}
	c = &Client{Server: "127.0.0.1", Port: port, Protocol: "udp", Timeout: 300 * time.Millisecond}
	_, err = c.Query(context.Background(), "x.example.", dns.TypeA)
	if err == nil || !strings.Contains(err.Error(), "did not answer") && !strings.Contains(err.Error(), "refused") {
		t.Fatalf("udp: %v", err)
	}
}

// A server that takes the message and never answers: a timeout, in words, over UDP and TCP.
func TestSilentServer(t *testing.T) {
	u, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = u.Close() }()
	port := u.LocalAddr().(*net.UDPAddr).Port
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Skipf("tcp port %d taken: %v", port, err)
	}
	defer func() { _ = l.Close() }()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer func() { _ = conn.Close() }() // held open, never answered
		}
	}()
	for _, proto := range []string{"udp", "tcp"} {
		c := &Client{Server: "127.0.0.1", Port: port, Protocol: proto, Timeout: 200 * time.Millisecond,
			Key: &Key{Name: "k", Algorithm: "hmac-sha256", Secret: "c2VjcmV0"}}
		_, err := Converge(context.Background(), Request{Forward: c, Zone: "example.",
			Sets: []Desired{{Set: RRSet{Name: "a.example.", Type: dns.TypeA}, State: Absent}}})
		if err == nil || !strings.Contains(err.Error(), "did not answer within 200ms") {
			t.Errorf("%s: %v", proto, err)
		}
	}
}

// BenchmarkConverge200 converges 200 A records in one zone (one UPDATE), then measures the
// no-op re-run (200 reads, no UPDATE) that a second Ansible run costs.
func BenchmarkConverge200(b *testing.B) {
	lab := dnslab.StartLab(b)
	var sets []Desired
	for i := range 200 {
		s, err := NewSet(Fqdn(fmt.Sprintf("bench-%d", i), dnslab.ZoneTdemo), dns.TypeA, 300, []string{fmt.Sprintf("10.20.129.%d", i%250+1)}, dnslab.ZoneTdemo)
		if err != nil {
			b.Fatal(err)
		}
		sets = append(sets, Desired{Set: s, State: Present, TTLSet: true})
	}
	for _, axfr := range []ReadMode{ReadQuery, ReadAXFR, ReadAuto} {
		c := client(lab.Port, lab.Keys["tdemo"])
		if _, err := Converge(context.Background(), Request{Forward: c, Zone: dnslab.ZoneTdemo, Sets: sets, Read: axfr}); err != nil {
			b.Fatal(err)
		}
		_ = c.Close()
		b.Run(fmt.Sprintf("noop/read=%s", axfr), func(b *testing.B) {
			var sent Counters
			for b.Loop() {
				c := client(lab.Port, lab.Keys["tdemo"])
				res, err := Converge(context.Background(), Request{Forward: c, Zone: dnslab.ZoneTdemo, Sets: sets, Read: axfr})
				if err != nil || res.Changed {
					b.Fatalf("noop: %v changed=%v", err, res != nil && res.Changed)
				}
				_ = c.Close()
				sent = res.Sent
			}
			b.ReportMetric(float64(sent.Queries+sent.AXFRs), "msgs/op")
		})
	}
}
