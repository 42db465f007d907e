package dnsupdate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/dnslab"
	"github.com/deevnet/tenant/internal/module/moduletest"
)

func run(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	res, _ := moduletest.Execute(t, Module(), args)
	raw, _ := json.Marshal(res)
	for _, k := range []string{"key_secret"} {
		if s, ok := args[k].(string); ok && strings.Contains(string(raw), s) {
			t.Fatalf("secret in result: %s", raw)
		}
	}
	if rev, ok := args["reverse"].(map[string]any); ok {
		if s, ok := rev["key_secret"].(string); ok && strings.Contains(string(raw), s) {
			t.Fatalf("reverse secret in result: %s", raw)
		}
	}
	return res
}

func base(lab *dnslab.Lab, key string) map[string]any {
	k := lab.Keys[key]
	return map[string]any{
		"server": "127.0.0.1", "port": lab.Port, "key_name": k.Name, "key_secret": k.Secret,
		"key_algorithm": k.Algorithm, "timeout": 3,
	}
}

// updates is the number of UPDATE messages the module reports it sent.
func updates(res map[string]any) string {
	return fmt.Sprint(res["dns_messages"].(map[string]any)["updates"])
}

func TestModuleConvergeCheckDiffNoop(t *testing.T) {
	lab := dnslab.StartLab(t)
	args := moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTdemo, "owner", "tdemo",
		"records", []any{
			map[string]any{"record": "tdemo-1", "values": []any{"10.20.129.10"}, "ptr": true, "ttl": 300},
			map[string]any{"record": "www", "type": "CNAME", "values": "tdemo-1"},
			map[string]any{"record": "@", "type": "TXT", "values": "v=spf1 -all", "state": "exact"},
		},
		"reverse", map[string]any{"zone": dnslab.ZoneReverse, "key_name": "rev-10-20-129", "key_secret": lab.Keys["rev-10-20-129"].Secret},
		"_ansible_check_mode", true, "_ansible_diff", true)

	res := run(t, args)
	if res["failed"] != false || res["changed"] != true || updates(res) != "0" {
		t.Fatalf("check mode: %v", res)
	}
	diff := res["diff"].(map[string]any)
	after := diff["after"].(map[string]any)
	if _, ok := after["tdemo-1.tdemo.mobile.deevnet.net A"]; !ok {
		t.Fatalf("diff after: %v", after)
	}
	if _, ok := after["10.129.20.10.in-addr.arpa PTR"]; !ok {
		t.Fatalf("diff lacks PTR: %v", after)
	}
	st, _ := lab.Stats()
	if st["dnsupdate-queries"] != 0 {
		t.Fatalf("check mode sent %d updates", st["dnsupdate-queries"])
	}

	delete(args, "_ansible_check_mode")
	res = run(t, args)
	if res["failed"] != false || res["changed"] != true || updates(res) != "2" {
		t.Fatalf("converge: %v", res)
	}
	res = run(t, args)
	if res["failed"] != false || res["changed"] != false || updates(res) != "0" {
		t.Fatalf("second run: %v", res)
	}
	if d := res["diff"].(map[string]any); len(d["before"].(map[string]any)) != 0 || len(d["after"].(map[string]any)) != 0 {
		t.Fatalf("no-op diff not empty: %v", d)
	}
	st2, _ := lab.Stats()
	if st2["dnsupdate-queries"] != 2 {
		t.Fatalf("server saw %d updates, want 2", st2["dnsupdate-queries"])
	}
}

func TestModuleErrorsInWords(t *testing.T) {
	lab := dnslab.StartLab(t)
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"other tenant's zone", moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTother, "record", "evil", "values", "10.20.130.66"), "REFUSED"},
		{"bad value", moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTdemo, "record", "x", "values", "10.20.129"), "A value \"10.20.129\""},
		{"no values", moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTdemo, "record", "x"), "state=present needs at least one value"},
		{"ptr on txt", moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTdemo, "record", "x", "type", "TXT", "values", "a", "ptr", true), "ptr: only A and AAAA"},
		{"both forms", moduletest.With(base(lab, "tdemo"), "record", "x", "records", []any{}), "mutually exclusive"},
		{"no server", moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTdemo, "record", "x", "values", "10.20.129.1", "port", 1), "refused the connection"},
		{"axfr needs zone", moduletest.With(base(lab, "tdemo"), "record", "x.tdemo.mobile.deevnet.net.", "values", "10.20.129.1", "read", "axfr"), "read=axfr needs zone"},
		{"bad algorithm", moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTdemo, "record", "x", "values", "10.20.129.1", "key_algorithm", "hmac-md5"), "key_algorithm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, c.args)
			msg, _ := res["msg"].(string)
			if res["failed"] != true || !strings.Contains(msg, c.want) {
				t.Fatalf("got %v", res)
			}
		})
	}
}

// dns_records (the tenant's envelope): a task whose sets would hold more records than the quota
// fails naming it, and sends no UPDATE; within the quota it converges.
func TestModuleQuotaBeforeSending(t *testing.T) {
	lab := dnslab.StartLab(t)
	var values []any
	for i := range 6 {
		values = append(values, fmt.Sprintf("10.20.129.%d", i+1))
	}
	args := moduletest.With(base(lab, "tdemo"), "zone", dnslab.ZoneTdemo, "record", "many", "values", values, "owner", "tdemo", "dns_records", 6)
	res := run(t, args)
	msg, _ := res["msg"].(string)
	// 6 A records and the set's registry TXT
	if res["failed"] != true || !strings.Contains(msg, "zone tdemo.mobile.deevnet.net: the record sets of this task would hold 7 records, over the tenant's quota of 6 (envelope.dns_records") {
		t.Fatalf("over the quota: %v", res)
	}
	if st, _ := lab.Stats(); st["dnsupdate-queries"] != 0 {
		t.Fatalf("%d updates sent over the quota", st["dnsupdate-queries"])
	}
	res = run(t, moduletest.With(args, "dns_records", 7))
	if res["failed"] != false || res["changed"] != true {
		t.Fatalf("at the quota: %v", res)
	}
	res = run(t, moduletest.With(args, "dns_records", -1))
	if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, "dns_records must be at least 1") {
		t.Fatalf("negative quota: %v", res)
	}
}
