package dnsupdate

import (
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/dnslab"
	"github.com/deevnet/tenant/internal/module/moduletest"
)

// Every refused input fails naming its field and sends no UPDATE (PowerDNS's own counter).
func TestBadInput(t *testing.T) {
	lab := dnslab.StartLab(t)
	ok := moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTdemo, "record", "tdemo-1", "values", "10.20.129.10")
	// A record already in place: a bad secret must be refused even when nothing needs changing.
	if res := run(t, ok); res["failed"] == true {
		t.Fatalf("setup: %v", res)
	}
	notB64 := "not base64 at all!"
	wrongKey := lab.Keys["tother"].Secret
	cases := []struct {
		name  string
		args  map[string]any
		field string
	}{
		// Refused by the server (its answer names the zone or the key): an UPDATE is sent, nothing changes.
		{"key_secret not base64", moduletest.With(ok, "values", "10.20.129.11", "key_secret", notB64), "key_secret"},
		{"key_secret not base64, nothing to change", moduletest.With(ok, "key_secret", notB64), "key_secret"},
		{"key_secret padding only", moduletest.With(ok, "key_secret", "===="), "key_secret"},
		{"reverse key_secret not base64", moduletest.With(ok, "ptr", true, "reverse", map[string]any{"zone": dnslab.ZoneReverse, "key_name": "rev-10-20-129", "key_secret": notB64}), "reverse.key_secret"},
		{"reverse key_name without secret", moduletest.With(ok, "reverse", map[string]any{"zone": dnslab.ZoneReverse, "key_name": "rev-10-20-129"}), "key_secret"},
		{"key_algorithm unsupported", moduletest.With(ok, "key_algorithm", "hmac-md5"), "key_algorithm"},
		{"port 0", moduletest.With(ok, "port", 0), "port"},
		{"port too high", moduletest.With(ok, "port", 70000), "port"},
		{"reverse port 0", moduletest.With(ok, "ptr", true, "reverse", map[string]any{"zone": dnslab.ZoneReverse, "port": 0}), "reverse.port"},
		{"timeout 0", moduletest.With(ok, "timeout", 0), "timeout"},
		{"unknown type", moduletest.With(ok, "type", "BOGUS"), "type"},
		{"A value not an address", moduletest.With(ok, "values", "10.20.129"), "value"},
		{"no values", moduletest.With(ok, "values", nil), "value"},
		{"ttl negative", moduletest.With(ok, "ttl", -1), "ttl"},
		{"ptr on TXT", moduletest.With(ok, "type", "TXT", "values", "x", "ptr", true), "ptr"},
		{"record and records", moduletest.With(ok, "records", []any{}), "record"},
		{"axfr without zone", moduletest.With(ok, "zone", nil, "record", "x.tdemo.mobile.deevnet.net.", "read", "axfr"), "zone"},
		{"owner with a comma", moduletest.With(ok, "owner", "a,b"), "owner"},
		{"adopt without owner", moduletest.With(ok, "adopt", true), "owner"},
		{"record not qualified without zone", moduletest.With(ok, "zone", nil, "record", "tdemo1"), "record"},
		{"state unknown", moduletest.With(ok, "state", "gone"), "state"},
		{"protocol unknown", moduletest.With(ok, "protocol", "sctp"), "protocol"},
		{"another tenant's zone", moduletest.With(ok, "values", "10.20.129.12", "zone", dnslab.ZoneTother, "record", "evil"), "zone"},
		{"wrong key for the name", moduletest.With(ok, "values", "10.20.129.13", "key_secret", wrongKey), "key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.args {
				if v == nil {
					delete(c.args, k)
				}
			}
			before, err := lab.Stats()
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, c.args)
			msg, _ := res["msg"].(string)
			if res["failed"] != true {
				t.Fatalf("accepted: %v", res)
			}
			if !strings.Contains(msg, c.field) {
				t.Fatalf("msg %q does not name %q", msg, c.field)
			}
			after, err := lab.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := after["dnsupdate-queries"]; !ok {
				t.Fatalf("PowerDNS reports no dnsupdate-queries counter: %v", after)
			}
			if n := after["dnsupdate-changes"] - before["dnsupdate-changes"]; n != 0 {
				t.Fatalf("%d change(s) by UPDATE before the refusal %q", n, msg)
			}
			byServer := strings.HasPrefix(c.name, "another tenant") || strings.HasPrefix(c.name, "wrong key")
			if n := after["dnsupdate-queries"] - before["dnsupdate-queries"]; n != 0 && !byServer {
				t.Fatalf("%d UPDATE(s) sent before the refusal %q", n, msg)
			}
		})
	}
}
