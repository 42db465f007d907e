package dnsupdate

import (
	"context"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/deevnet/tenant/internal/dnslab"
)

// Records Terraform's DNS provider published over RFC 2136, one with its own key and one with
// the tenant's, without any ownership registry: adopt takes them over as record sets, writing
// only the registry records, and leaves a set registered to another owner alone.
func TestAdoptRecordsAnotherToolPublished(t *testing.T) {
	lab := dnslab.StartLab(t)
	z := dnslab.ZoneTdemo
	ctx := context.Background()
	tf, err := lab.CreateKey("terraform", "hmac-sha256")
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.AllowUpdate(z, "tdemo", "terraform"); err != nil {
		t.Fatal(err)
	}
	a := mustSet(t, "tdemo-1", "A", 300, z, "10.20.129.10")
	www := mustSet(t, "www", "CNAME", 300, z, "tdemo-1."+z)
	converge(t, Request{Forward: client(lab.Port, tf), Zone: z, Sets: []Desired{{Set: a, State: Exact}}})
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Sets: []Desired{{Set: www, State: Exact}}})
	// Team ops owns api.
	api := mustSet(t, "api", "A", 300, z, "10.20.129.50")
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: Ownership{Owner: "ops"}, Sets: []Desired{{Set: api, State: Exact}}})

	own := Ownership{Owner: "tdemo"}
	sets := []Desired{{Set: a, State: Exact}, {Set: www, State: Exact}}
	changed := []Desired{{Set: mustSet(t, "tdemo-1", "A", 300, z, "10.20.129.11"), State: Exact}}
	if _, err := Converge(ctx, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: own, Sets: changed}); err == nil || !strings.Contains(err.Error(), "no ownership record") {
		t.Fatalf("without adopt: %v", err)
	}

	own.Adopt = true
	c := client(lab.Port, lab.Keys["tdemo"])
	res := converge(t, Request{Forward: c, Zone: z, Ownership: own, Sets: sets, CheckMode: true})
	if !res.Changed || c.Sent.Updates != 0 || len(res.Plans) != 1 || len(res.Plans[0].Changes) != 2 {
		t.Fatalf("check mode: changed %v, sent %+v, plans %+v", res.Changed, c.Sent, res.Plans)
	}
	for _, ch := range res.Plans[0].Changes {
		if !strings.HasPrefix(ch.Key, "_dvt-") {
			t.Errorf("adopt would change %s, not only a registry record", ch.Key)
		}
	}
	res = converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: own, Sets: sets})
	if !res.Changed || res.Sent.Updates != 1 {
		t.Fatalf("adopt: changed %v, sent %+v", res.Changed, res.Sent)
	}
	if got := lookup(t, lab.Addr(), "tdemo-1."+z, dns.TypeA); strings.Join(got, ",") != "10.20.129.10" {
		t.Errorf("tdemo-1 after adopt: %v", got)
	}
	for _, n := range []string{"_dvt-a.tdemo-1." + z, "_dvt-cname.www." + z} {
		if got := lookup(t, lab.Addr(), n, dns.TypeTXT); len(got) != 1 || !strings.Contains(got[0], "owner=tdemo") {
			t.Errorf("registry %s: %v", n, got)
		}
	}
	for _, adopt := range []bool{true, false} {
		res = converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: Ownership{Owner: "tdemo", Adopt: adopt}, Sets: sets})
		if res.Changed || res.Sent.Updates != 0 {
			t.Fatalf("second run (adopt %v): changed %v, sent %+v", adopt, res.Changed, res.Sent)
		}
	}
	// Owned now: an ordinary run changes it.
	converge(t, Request{Forward: client(lab.Port, lab.Keys["tdemo"]), Zone: z, Ownership: Ownership{Owner: "tdemo"}, Sets: changed})

	// Another owner's set stays refused, and nothing is sent.
	c = client(lab.Port, lab.Keys["tdemo"])
	_, err = Converge(ctx, Request{Forward: c, Zone: z, Ownership: own, Sets: []Desired{{Set: api, State: Exact}}})
	if err == nil || !strings.Contains(err.Error(), `owned by "ops"`) || c.Sent.Updates != 0 {
		t.Fatalf("another owner's set: %v, sent %+v", err, c.Sent)
	}
}
