package dnslab

import (
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// What BIND offers for the DNS quota (docs/adr/0017-dns-quota.md), measured: update-policy
// grants name the record types a key may publish, and max-records caps a zone (SOA and NS
// included), an update over it refused whole.
func TestBINDQuotaAndTypes(t *testing.T) {
	k := Key{Name: "tdemo", Algorithm: "hmac-sha256", Secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ="}
	b := StartBIND(t, []Key{k}, []BINDZone{{
		Name:    ZoneTdemo,
		Grants:  []string{"grant tdemo zonesub A AAAA CNAME TXT MX SRV;"},
		Options: "max-records 12;", // SOA, NS, ns1's A and 9 more
	}})
	send := func(rrs ...string) int {
		t.Helper()
		m := new(dns.Msg)
		m.SetUpdate(fqdn(ZoneTdemo))
		for _, s := range rrs {
			rr, err := dns.NewRR(s)
			if err != nil {
				t.Fatal(err)
			}
			m.Insert([]dns.RR{rr})
		}
		m.SetTsig(fqdn(k.Name), dns.HmacSHA256, 300, time.Now().Unix())
		c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: map[string]string{fqdn(k.Name): k.Secret}}
		r, _, err := c.Exchange(m, b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return r.Rcode
	}
	many := func(from, n int) []string {
		var rrs []string
		for i := from; i < from+n; i++ {
			rrs = append(rrs, fmt.Sprintf("f%d.%s 300 IN A 10.20.129.%d", i, fqdn(ZoneTdemo), i%250+1))
		}
		return rrs
	}
	if rc := send("sub." + fqdn(ZoneTdemo) + " 300 IN NS ns.example."); rc != dns.RcodeRefused {
		t.Errorf("NS below the apex: %s, want REFUSED (not in the grant)", dns.RcodeToString[rc])
	}
	if rc := send("alias." + fqdn(ZoneTdemo) + " 300 IN DNAME example."); rc != dns.RcodeRefused {
		t.Errorf("DNAME: %s, want REFUSED", dns.RcodeToString[rc])
	}
	if rc := send(many(0, 9)...); rc != dns.RcodeSuccess {
		t.Fatalf("9 records, up to max-records: %s", dns.RcodeToString[rc])
	}
	rc := send(many(9, 5)...)
	t.Logf("5 more records past max-records 12: %s", dns.RcodeToString[rc])
	if rc == dns.RcodeSuccess {
		t.Errorf("an update past max-records was accepted")
	}
	m := new(dns.Msg)
	m.SetQuestion("f9."+fqdn(ZoneTdemo), dns.TypeA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, b.Addr())
	if err != nil || len(r.Answer) != 0 {
		t.Errorf("a record of the refused update is served: %v %v", r, err)
	}
}
