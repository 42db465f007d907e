package dnsupdate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/dnslab"
	"github.com/miekg/dns"
)

// tenantSets is a normal tenant converge: n A records with owner registry records, the first
// two with PTRs in the reverse zone.
func tenantSets(t *testing.T, zone string, n int) ([]Desired, map[string]bool) {
	t.Helper()
	var sets []Desired
	ptr := map[string]bool{}
	for i := range n {
		s := mustSet(t, fmt.Sprintf("auto-%d", i), "A", 300, zone, fmt.Sprintf("10.20.129.%d", 100+i))
		sets = append(sets, Desired{Set: s, State: Present, TTLSet: true})
		if i < 2 {
			ptr[s.Key()] = true
		}
	}
	return sets, ptr
}

// ReadAuto against PowerDNS: a normal converge costs at most 2 messages per zone (one AXFR and
// one UPDATE), and a no-op one per zone, counted by the server's own statistics.
func TestAutoReadPowerDNSMessagesPerZone(t *testing.T) {
	lab := dnslab.StartLab(t)
	sets, ptr := tenantSets(t, dnslab.ZoneTdemo, 40)
	for _, run := range []struct {
		name          string
		msgs, updates int64
	}{{"first", 4, 2}, {"no-op", 2, 0}} {
		before, err := lab.Stats()
		if err != nil {
			t.Fatal(err)
		}
		c := client(lab.Port, lab.Keys["tdemo"])
		res := converge(t, Request{Forward: c, Zone: dnslab.ZoneTdemo, ReverseZone: dnslab.ZoneReverse, Read: ReadAuto,
			Sets: sets, PTR: ptr, Ownership: Ownership{Owner: "tdemo"}})
		_ = c.Close()
		after, err := lab.Stats()
		if err != nil {
			t.Fatal(err)
		}
		msgs := dnslab.Messages(after) - dnslab.Messages(before)
		updates := after["dnsupdate-queries"] - before["dnsupdate-queries"]
		zones := int64(len(res.Plans))
		if zones != 2 || msgs > 2*zones || msgs != run.msgs || updates != run.updates {
			t.Fatalf("%s: %d zones, server counted %d messages (%d updates); want 2 zones, %d messages, %d updates (sent %+v)",
				run.name, zones, msgs, updates, run.msgs, run.updates, res.Sent)
		}
		for _, p := range res.Plans {
			if p.ReadBy != "axfr" {
				t.Fatalf("%s: zone %s read by %q, want axfr", run.name, p.Zone, p.ReadBy)
			}
		}
		if run.name == "no-op" && res.Changed {
			t.Fatal("no-op changed")
		}
	}
	// One set alone is read by one query: a transfer would bring the whole zone for nothing.
	c := client(lab.Port, lab.Keys["tdemo"])
	res := converge(t, Request{Forward: c, Zone: dnslab.ZoneTdemo, Read: ReadAuto, Sets: sets[2:3]})
	if res.Sent.AXFRs != 0 || res.Sent.Queries != 1 || res.Plans[0].ReadBy != "query" {
		t.Fatalf("one set: sent %+v, read by %q", res.Sent, res.Plans[0].ReadBy)
	}
}

// A key that may update but not transfer: ReadAuto falls back to queries, says so, and still
// converges; read=axfr fails naming the refusal.
func TestAutoReadFallsBackWhenPowerDNSRefusesAXFR(t *testing.T) {
	lab := dnslab.StartLab(t)
	// Only the reverse zone's own key may transfer tdemo's zone now.
	if err := lab.AllowAXFR(dnslab.ZoneTdemo, "rev-10-20-129"); err != nil {
		t.Fatal(err)
	}
	sets, _ := tenantSets(t, dnslab.ZoneTdemo, 5)
	c := client(lab.Port, lab.Keys["tdemo"])
	res := converge(t, Request{Forward: c, Zone: dnslab.ZoneTdemo, Read: ReadAuto, Sets: sets})
	_ = c.Close()
	if !res.Changed || res.Sent.AXFRs != 1 || res.Sent.Queries != 5 || !strings.Contains(res.Plans[0].ReadBy, "refused") {
		t.Fatalf("fallback: changed=%v sent=%+v read by %q", res.Changed, res.Sent, res.Plans[0].ReadBy)
	}
	if got := lookup(t, lab.Addr(), "auto-4."+dnslab.ZoneTdemo, dns.TypeA); len(got) != 1 {
		t.Fatalf("record not written after the fallback: %v", got)
	}
	c = client(lab.Port, lab.Keys["tdemo"])
	_, err := Converge(context.Background(), Request{Forward: c, Zone: dnslab.ZoneTdemo, Read: ReadAXFR, Sets: sets})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("read=axfr with a refused transfer: %v", err)
	}
}

// A zone larger than the limit gives way to queries after the limit, with the same result.
func TestAutoReadZoneTooLarge(t *testing.T) {
	lab := dnslab.StartLab(t)
	sets, _ := tenantSets(t, dnslab.ZoneTdemo, 12)
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: dnslab.ZoneTdemo, Read: ReadAuto, Sets: sets})
	c := client(lab.Port, lab.Keys["tdemo"])
	pl := &Planner{Client: c, Read: ReadAuto, AXFRLimit: 5}
	p, err := pl.Plan(context.Background(), dnslab.ZoneTdemo, sets[:3])
	if err != nil {
		t.Fatal(err)
	}
	if p.Changed() || c.Sent.AXFRs != 1 || c.Sent.Queries != 3 || !strings.Contains(p.ReadBy, "larger than the transfer limit") {
		t.Fatalf("limit: changed=%v sent=%+v read by %q", p.Changed(), c.Sent, p.ReadBy)
	}
}

// BIND: allowed transfer → 2 messages per zone on a first converge and 1 on a no-op (its
// statistics channel counts them); allow-transfer none → the queries, and the same records.
func TestAutoReadBIND(t *testing.T) {
	key := dnslab.Key{Name: "tdemo", Algorithm: "hmac-sha256", Secret: "c2VjcmV0LXRkZW1vLTAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWI="}
	b := dnslab.StartBIND(t, []dnslab.Key{key}, []dnslab.BINDZone{
		{Name: dnslab.ZoneTdemo, Grants: []string{"grant tdemo zonesub ANY;"}, AllowTransfer: "key tdemo;"},
		{Name: dnslab.ZoneTother, Grants: []string{"grant tdemo zonesub ANY;"}, AllowTransfer: "none;"},
	})
	count := func() int64 {
		n, err := b.Messages()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	sets, _ := tenantSets(t, dnslab.ZoneTdemo, 30)
	for _, want := range []int64{2, 1} {
		before := count()
		c := client(b.Port, key)
		res := converge(t, Request{Forward: c, Zone: dnslab.ZoneTdemo, Read: ReadAuto, Sets: sets, Ownership: Ownership{Owner: "tdemo"}})
		_ = c.Close()
		if got := count() - before; got != want || res.Plans[0].ReadBy != "axfr" {
			t.Fatalf("BIND, transfer allowed: server counted %d messages, want %d (read by %q, sent %+v)", got, want, res.Plans[0].ReadBy, res.Sent)
		}
	}
	other, _ := tenantSets(t, dnslab.ZoneTother, 4)
	c := client(b.Port, key)
	res := converge(t, Request{Forward: c, Zone: dnslab.ZoneTother, Read: ReadAuto, Sets: other})
	if res.Sent.AXFRs != 1 || res.Sent.Queries != 4 || !strings.Contains(res.Plans[0].ReadBy, "REFUSED") {
		t.Fatalf("BIND, transfer refused: sent %+v, read by %q", res.Sent, res.Plans[0].ReadBy)
	}
	if got := lookup(t, b.Addr(), "auto-3."+dnslab.ZoneTother, dns.TypeA); len(got) != 1 {
		t.Fatalf("record not written after the fallback: %v", got)
	}
}
