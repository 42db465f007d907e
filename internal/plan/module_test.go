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
