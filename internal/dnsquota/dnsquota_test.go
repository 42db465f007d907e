package dnsquota

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

const zone = "tdemo.mobile.deevnet.net."

func rr(t testing.TB, s string) dns.RR {
	t.Helper()
	r, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func update(t testing.TB, build func(m *dns.Msg)) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(zone)
	build(m)
	return m
}

func TestCountFollowsRFC2136(t *testing.T) {
	z := NewZone(zone, []dns.RR{
		rr(t, zone+" 3600 IN SOA ns1.mobile.deevnet.net. hostmaster. 1 2 3 4 5"),
		rr(t, zone+" 3600 IN NS ns1.mobile.deevnet.net."),
		rr(t, "a."+zone+" 300 IN A 10.20.129.1"),
		rr(t, "a."+zone+" 300 IN A 10.20.129.2"),
		rr(t, "b."+zone+" 300 IN TXT \"x\""),
	})
	if z.Count() != 3 {
		t.Fatalf("count %d, want 3 (SOA and apex NS are the substrate's)", z.Count())
	}
	steps := []struct {
		what  string
		build func(m *dns.Msg)
		want  int
	}{
		{"a duplicate with another TTL and case", func(m *dns.Msg) { m.Insert([]dns.RR{rr(t, "A."+zone+" 60 IN A 10.20.129.1")}) }, 3},
		{"TXT differing in case is a new record", func(m *dns.Msg) { m.Insert([]dns.RR{rr(t, "b."+zone+" 300 IN TXT \"X\"")}) }, 4},
		{"delete one record", func(m *dns.Msg) { m.Remove([]dns.RR{rr(t, "a."+zone+" 300 IN A 10.20.129.2")}) }, 3},
		{"delete an RRset", func(m *dns.Msg) { m.RemoveRRset([]dns.RR{rr(t, "b."+zone+" 300 IN TXT \"x\"")}) }, 1},
		{"delete every set at a name", func(m *dns.Msg) { m.RemoveName([]dns.RR{rr(t, "a."+zone+" 300 IN A 10.20.129.2")}) }, 0},
		{"deleting the apex's sets keeps its SOA and NS uncounted", func(m *dns.Msg) { m.RemoveName([]dns.RR{rr(t, zone+" 300 IN A 10.20.129.2")}) }, 0},
	}
	for _, s := range steps {
		z.Apply(update(t, s.build))
		if z.Count() != s.want {
			t.Fatalf("%s: count %d, want %d", s.what, z.Count(), s.want)
		}
	}
}

func TestCheckRecords(t *testing.T) {
	if err := CheckRecords(zone, 999, 1001, 1000); err == nil || !strings.Contains(err.Error(), "would hold 1001 records (999 now), over the tenant's quota of 1000 (envelope.dns_records") {
		t.Errorf("over the quota: %v", err)
	}
	if err := CheckRecords(zone, 999, 1000, 1000); err != nil {
		t.Errorf("at the quota: %v", err)
	}
	if err := CheckRecords(zone, 1500, 1400, 1000); err != nil {
		t.Errorf("shrinking above the quota: %v", err)
	}
}

func TestQuotaValidate(t *testing.T) {
	err := Quota{Records: 0, Updates: -1}.Validate("envelope")
	if err == nil || !strings.Contains(err.Error(), "envelope.dns_records 0 must be at least 1") || !strings.Contains(err.Error(), "envelope.dns_updates -1 must be at least 1") {
		t.Errorf("%v", err)
	}
	if err := (Quota{Records: 1, Updates: 1}).Validate("envelope"); err != nil {
		t.Error(err)
	}
}

func TestRateRefills(t *testing.T) {
	now := time.Unix(0, 0)
	r := NewRate(func() time.Time { return now })
	for i := range 3 {
		if err := r.Take("tdemo", 3); err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
	}
	if err := r.Take("tdemo", 3); err == nil || !strings.Contains(err.Error(), "quota of 3 updates a minute") {
		t.Fatalf("fourth in the minute: %v", err)
	}
	if err := r.Take("tother", 3); err != nil {
		t.Errorf("another tenant's bucket: %v", err)
	}
	now = now.Add(20 * time.Second) // a third of a minute: one update back
	if err := r.Take("tdemo", 3); err != nil {
		t.Errorf("after 20 s: %v", err)
	}
	if err := r.Take("tdemo", 3); err == nil {
		t.Error("second after 20 s accepted")
	}
}

func TestCheckUpdateDeletesBelowTheApex(t *testing.T) {
	// a delegation published before the rule can be removed; the apex's NS cannot
	del := update(t, func(m *dns.Msg) { m.RemoveRRset([]dns.RR{rr(t, "sub."+zone+" 300 IN NS ns.example.")}) })
	if err := CheckUpdate(zone, del); err != nil {
		t.Errorf("deleting a delegation: %v", err)
	}
	apex := update(t, func(m *dns.Msg) { m.RemoveRRset([]dns.RR{rr(t, zone+" 300 IN NS ns.example.")}) })
	if err := CheckUpdate(zone, apex); err == nil || !strings.Contains(err.Error(), "SOA and NS are the substrate's") {
		t.Errorf("deleting the apex NS: %v", err)
	}
}

// FuzzUpdate: any message the gateway unpacks is checked and counted without a panic, and the
// count never goes below zero nor grows by more than the records the message adds.
func FuzzUpdate(f *testing.F) {
	m := update(f, func(m *dns.Msg) {
		m.Insert([]dns.RR{rr(f, "a."+zone+" 300 IN A 10.20.129.1"), rr(f, "sub."+zone+" 300 IN NS ns.x.")})
		m.RemoveRRset([]dns.RR{rr(f, "b."+zone+" 300 IN TXT \"x\"")})
		m.Remove([]dns.RR{rr(f, "a."+zone+" 300 IN A 10.20.129.1")})
	})
	b, _ := m.Pack()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		m := new(dns.Msg)
		if m.Unpack(b) != nil {
			return
		}
		_ = CheckUpdate(zone, m)
		z := NewZone(zone, []dns.RR{rr(t, "a."+zone+" 300 IN A 10.20.129.1")})
		before := z.Count()
		z.Apply(m)
		if z.Count() < 0 || z.Count() > before+len(m.Ns) {
			t.Fatalf("count %d from %d with %d updates", z.Count(), before, len(m.Ns))
		}
	})
}
