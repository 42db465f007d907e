package dnsupdate

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestFqdn(t *testing.T) {
	z := "tdemo.mobile.deevnet.net"
	for in, want := range map[string]string{
		"@":                                   "tdemo.mobile.deevnet.net.",
		"":                                    "tdemo.mobile.deevnet.net.",
		"tdemo-1":                             "tdemo-1.tdemo.mobile.deevnet.net.",
		"TDEMO-1.tdemo.mobile.deevnet.net":    "tdemo-1.tdemo.mobile.deevnet.net.",
		"x.example.org.":                      "x.example.org.",
		"a.b":                                 "a.b.tdemo.mobile.deevnet.net.",
		"tdemo.mobile.deevnet.net":            "tdemo.mobile.deevnet.net.",
		"_dvt-a.www.tdemo.mobile.deevnet.net": "_dvt-a.www.tdemo.mobile.deevnet.net.",
	} {
		if got := Fqdn(in, z); got != want {
			t.Errorf("Fqdn(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Fqdn("host.example.org", ""); got != "host.example.org." {
		t.Errorf("no zone: %q", got)
	}
}

func TestParseValue(t *testing.T) {
	z := "tdemo.mobile.deevnet.net"
	n := "x.tdemo.mobile.deevnet.net."
	ok := []struct{ typ, in, want string }{
		{"A", "10.20.129.10", "10.20.129.10"},
		{"AAAA", "fd00::1", "fd00::1"},
		{"CNAME", "web", "web.tdemo.mobile.deevnet.net."},
		{"CNAME", "web.example.org.", "web.example.org."},
		{"MX", "10 mail", "10 mail.tdemo.mobile.deevnet.net."},
		{"SRV", "0 5 443 web", "0 5 443 web.tdemo.mobile.deevnet.net."},
		{"TXT", "hello world", `"hello world"`},
		{"TXT", `"a" "b"`, `"a" "b"`},
		{"TXT", `say "hi"`, `"say \"hi\""`},
		{"CAA", `0 issue "letsencrypt.org"`, `0 issue "letsencrypt.org"`},
	}
	for _, c := range ok {
		ty, err := ParseType(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := ParseValue(n, ty, 300, c.in, z)
		if err != nil {
			t.Errorf("%s %q: %v", c.typ, c.in, err)
			continue
		}
		if got := RData(rr); got != c.want {
			t.Errorf("%s %q = %q, want %q", c.typ, c.in, got, c.want)
		}
	}
	bad := []struct{ typ, in string }{
		{"A", "10.20.129"},
		{"A", "fd00::1"},
		{"AAAA", "10.0.0.1"},
		{"A", ""},
		{"A", "10.0.0.1 ; comment"},
		{"CNAME", "a\nb"},
		{"MX", "mail"},
		{"A", "$INCLUDE /etc/passwd"},
	}
	for _, c := range bad {
		ty, _ := ParseType(c.typ)
		if _, err := ParseValue(n, ty, 300, c.in, z); err == nil {
			t.Errorf("%s %q: accepted", c.typ, c.in)
		}
	}
	for _, typ := range []string{"SOA", "ANY", "AXFR", "TSIG", "NOPE"} {
		if _, err := ParseType(typ); err == nil {
			t.Errorf("type %s accepted", typ)
		}
	}
}

func TestLongTXTSplitsAt255Bytes(t *testing.T) {
	long := strings.Repeat("x", 600)
	rr, err := ParseValue("t.example.", dns.TypeTXT, 60, long, "example")
	if err != nil {
		t.Fatal(err)
	}
	txt := rr.(*dns.TXT).Txt
	if len(txt) != 3 || len(txt[0]) != 255 || len(txt[1]) != 255 || len(txt[2]) != 90 {
		t.Fatalf("split: %d strings", len(txt))
	}
	// It must pack on the wire (each string <= 255 octets after unescaping) and round-trip.
	quoted := "x" + strings.Repeat(`"\`, 200) // 400 bytes that all need escaping
	rr, err = ParseValue("t.example.", dns.TypeTXT, 60, quoted, "example")
	if err != nil {
		t.Fatal(err)
	}
	m := new(dns.Msg)
	m.SetQuestion("t.example.", dns.TypeTXT)
	m.Answer = []dns.RR{rr}
	b, err := m.Pack()
	if err != nil {
		t.Fatalf("pack: %v", err)
	}
	var back dns.Msg
	if err := back.Unpack(b); err != nil || !dns.IsDuplicate(back.Answer[0], rr) {
		t.Fatalf("round trip: %v", err)
	}
}

func TestNewSetDedupAndCNAME(t *testing.T) {
	s, err := NewSet("a.example.", dns.TypeA, 60, []string{"10.0.0.1", "10.0.0.1", "10.0.0.2"}, "example")
	if err != nil || len(s.RRs) != 2 {
		t.Fatalf("dedup: %v %d", err, len(s.RRs))
	}
	if _, err := NewSet("c.example.", dns.TypeCNAME, 60, []string{"a", "b"}, "example"); err == nil {
		t.Fatal("two CNAME values accepted")
	}
}

func TestApplyStates(t *testing.T) {
	z := "example"
	cur, _ := NewSet("a.example.", dns.TypeA, 300, []string{"10.0.0.1", "10.0.0.2"}, z)
	one, _ := NewSet("a.example.", dns.TypeA, 60, []string{"10.0.0.3"}, z)
	if n := apply(cur, Desired{Set: one, State: Present}); len(n.RRs) != 3 || n.TTL != 300 {
		t.Errorf("present: %v ttl %d", n.Values(), n.TTL)
	}
	if n := apply(cur, Desired{Set: one, State: Present, TTLSet: true}); n.TTL != 60 {
		t.Errorf("present ttl: %d", n.TTL)
	}
	if n := apply(cur, Desired{Set: one, State: Exact}); strings.Join(n.Values(), ",") != "10.0.0.3" {
		t.Errorf("exact: %v", n.Values())
	}
	two, _ := NewSet("a.example.", dns.TypeA, 0, []string{"10.0.0.2"}, z)
	if n := apply(cur, Desired{Set: two, State: Absent}); strings.Join(n.Values(), ",") != "10.0.0.1" {
		t.Errorf("absent value: %v", n.Values())
	}
	all, _ := NewSet("a.example.", dns.TypeA, 0, nil, z)
	if n := apply(cur, Desired{Set: all, State: Absent}); len(n.RRs) != 0 {
		t.Errorf("absent set: %v", n.Values())
	}
	empty := RRSet{}
	if n := apply(empty, Desired{Set: one, State: Present}); n.TTL != DefaultTTL || n.Name != "a.example." {
		t.Errorf("new set: %+v", n)
	}
}

func TestBuildUpdatePrerequisites(t *testing.T) {
	z := "example."
	before, _ := NewSet("a.example.", dns.TypeA, 300, []string{"10.0.0.1"}, z)
	after, _ := NewSet("a.example.", dns.TypeA, 300, []string{"10.0.0.2"}, z)
	newset, _ := NewSet("b.example.", dns.TypeA, 300, []string{"10.0.0.3"}, z)
	m := buildUpdate(z, []SetChange{
		{Key: before.Key(), Before: before, After: after},
		{Key: newset.Key(), Before: RRSet{}, After: newset},
	})
	if len(m.Answer) != 2 || m.Answer[0].Header().Class != dns.ClassINET || m.Answer[1].Header().Class != dns.ClassNONE {
		t.Fatalf("prerequisites: %v", m.Answer)
	}
	if len(m.Ns) != 3 {
		t.Fatalf("updates: %v", m.Ns)
	}
	// The sets passed in are not modified by miekg's helpers.
	if before.RRs[0].Header().Class != dns.ClassINET || before.RRs[0].Header().Ttl != 300 {
		t.Fatal("input set mutated")
	}
	// TTL change: delete the set and insert it whole.
	slow, _ := NewSet("a.example.", dns.TypeA, 60, []string{"10.0.0.1"}, z)
	m = buildUpdate(z, []SetChange{{Key: before.Key(), Before: before, After: slow}})
	if len(m.Ns) != 2 || m.Ns[0].Header().Class != dns.ClassANY || m.Ns[1].Header().Ttl != 60 {
		t.Fatalf("ttl change: %v", m.Ns)
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "fd00::1", "web", `"a" "b"`, "10 mail", "0 5 443 web", `0 issue "x"`, strings.Repeat("y", 300), "a;b", "$ORIGIN x."} {
		f.Add(dns.TypeA, s)
		f.Add(dns.TypeTXT, s)
		f.Add(dns.TypeMX, s)
	}
	f.Fuzz(func(t *testing.T, typ uint16, value string) {
		if _, ok := dns.TypeToString[typ]; !ok {
			return
		}
		rr, err := ParseValue("f.example.", typ, 300, value, "example")
		if err != nil {
			return
		}
		// Whatever is accepted is one record of the asked type and name, and packs on the wire.
		if rr.Header().Rrtype != typ || rr.Header().Name != "f.example." {
			t.Fatalf("%q parsed into %v", value, rr)
		}
		m := new(dns.Msg)
		m.SetQuestion("f.example.", typ)
		m.Answer = []dns.RR{rr}
		if _, err := m.Pack(); err != nil && typ == dns.TypeTXT {
			t.Fatalf("TXT %q does not pack: %v", value, err)
		}
	})
}

func TestAlgorithmIDIsCaseInsensitiveAndKnowsOnlyHMACs(t *testing.T) {
	if id, ok := AlgorithmID("HMAC-SHA256"); !ok || id != dns.HmacSHA256 {
		t.Fatalf("AlgorithmID(HMAC-SHA256) = %q, %v", id, ok)
	}
	if _, ok := AlgorithmID("hmac-md5"); ok {
		t.Fatal("hmac-md5 accepted")
	}
}
