package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
)

func runPlan(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	res, _ := moduletest.Execute(t, Module(), args)
	return res
}

func TestTdemo(t *testing.T) {
	res := runPlan(t, map[string]any{"name": "tdemo", "index": "1", "_ansible_check_mode": true})
	if res["failed"] != false || res["changed"] != false {
		t.Fatalf("res = %v", res)
	}
	tn := res["tenant"].(map[string]any)
	vm := tn["vms"].([]any)[0].(map[string]any)
	if tn["subnet"] != "10.20.129.0/24" || tn["gateway"] != "10.20.129.1" || vm["address"] != "10.20.129.10" ||
		vm["fqdn"] != "tdemo-1.tdemo.mobile.deevnet.net" || tn["reverse_zone"] != "129.20.10.in-addr.arpa" ||
		fmt.Sprint(tn["vmid_range"]) != "[10100 10199]" {
		t.Fatalf("tenant = %v", tn)
	}
}

func TestIndexZeroAndBadSite(t *testing.T) {
	res := runPlan(t, map[string]any{"name": "tref", "index": 0})
	if res["failed"] != true || !strings.Contains(res["msg"].(string), "reserved for the reference implementation") {
		t.Fatalf("res = %v", res)
	}
	res = runPlan(t, map[string]any{"name": "tdemo", "index": 1, "site": map[string]any{"overlay": "nope"}})
	if res["failed"] != true || !strings.HasPrefix(res["msg"].(string), "site.overlay:") {
		t.Fatalf("res = %v", res)
	}
}

// The envelope the attachment carries bounds the declaration's totals: a declaration within the
// contract's per-VM ranges but over the envelope is refused, naming the field, the total and the
// envelope; without the envelope (an attachment from before it) the same declaration plans.
func TestEnvelopeRefusesADeclarationOverIt(t *testing.T) {
	contract := map[string]any{"name": "tdemo", "index": 1, "vms": map[string]any{"count": 3, "cores": 8, "memory": 4096, "disk": 8}}
	args := func(env map[string]any) map[string]any {
		a := map[string]any{"name": "tdemo", "index": 1, "vms": 3, "contract": contract}
		if env != nil {
			a["envelope"] = env
		}
		return a
	}
	env := map[string]any{"vms": 8, "cores": 16, "memory": 32768, "disk": 256}
	res := runPlan(t, args(env))
	msg, _ := res["msg"].(string)
	if res["failed"] != true || msg != "tenant tdemo: tenant.vms.count x tenant.vms.cores (3 x 8) is 24 vCPUs, over the tenant's envelope of 16 vCPUs"+
		" (envelope.cores, set by the substrate at onboarding)" {
		t.Fatalf("over the envelope: %v", res)
	}
	if res := runPlan(t, args(nil)); res["failed"] != false {
		t.Fatalf("without an envelope: %v", res)
	}
	env["cores"] = 24
	if res := runPlan(t, args(env)); res["failed"] != false {
		t.Fatalf("at the envelope: %v", res)
	}
	env["vms"] = 0
	if res := runPlan(t, args(env)); res["failed"] != true || !strings.Contains(res["msg"].(string), "envelope.vms 0 must be at least 1") {
		t.Fatalf("an envelope of no VMs: %v", res)
	}
	delete(env, "vms")
	if res := runPlan(t, args(env)); res["failed"] != true || !strings.Contains(res["msg"].(string), "vms") {
		t.Fatalf("an envelope without vms: %v", res)
	}
}
