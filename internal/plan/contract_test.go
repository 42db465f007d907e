package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
)

func fmtJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The messages the role's assert (roles/tenant/tasks/validate.yml before tenant_plan checked the
// contract) printed for these declarations, captured from ansible-core 2.21.5 running it: the
// contract's check must print them word for word.
func TestContractMessages(t *testing.T) {
	rec := func(name, typ string, ttl int, values ...any) map[string]any {
		r := map[string]any{"name": name, "type": typ, "values": append([]any{}, values...)}
		if ttl != 0 {
			r["ttl"] = ttl
		}
		return r
	}
	recRule := ": name must be '@' or a relative DNS name, not a VM name tdemo-<k> (those are derived), values must not be empty and ttl must be 60..86400"
	index0 := "tenant.index 0 must be 1..63: index 0 is the reference tenant (examples/tenant), which cannot be applied; ask the substrate for an index" +
		" (playbooks/onboard.yml)"
	cases := []struct {
		decl map[string]any
		want string
	}{
		{map[string]any{"name": "TDemo", "index": 1},
			`tenant.name "TDemo" must match ^[a-z][a-z0-9-]*[a-z0-9]$ and have 2..20 characters (a DNS label and PVE id)`},
		{map[string]any{"name": "t", "index": 0},
			`tenant.name "t" must match ^[a-z][a-z0-9-]*[a-z0-9]$ and have 2..20 characters (a DNS label and PVE id); ` + index0},
		{map[string]any{"name": "tdemo", "index": 64}, "tenant.index 64 must be 1..63"},
		{map[string]any{"name": "tdemo", "index": -1}, "tenant.index -1 must be 1..63"},
		{map[string]any{"name": "tdemo", "index": 1, "vms": map[string]any{"count": 100, "cores": 0, "memory": 255, "disk": 0, "template": 99}},
			"tenant.vms.count 100 is out of range: 0..99; tenant.vms.cores 0 is out of range: 1..64; tenant.vms.memory 255 is out of range: 256..262144 MiB;" +
				" tenant.vms.disk 0 is out of range: 1..4096 GiB; tenant.vms.template 99 is out of range: 100..999999999 (a vmid)"},
		{map[string]any{"name": "tdemo", "index": 1, "vms": map[string]any{"count": -1, "cores": 65, "memory": 262145, "disk": 4097, "template": 1000000000}},
			"tenant.vms.count -1 is out of range: 0..99; tenant.vms.cores 65 is out of range: 1..64; tenant.vms.memory 262145 is out of range: 256..262144 MiB;" +
				" tenant.vms.disk 4097 is out of range: 1..4096 GiB; tenant.vms.template 1000000000 is out of range: 100..999999999 (a vmid)"},
		{map[string]any{"name": "tdemo", "index": 1, "vnets": 2, "vms": map[string]any{"count": 2, "vnet": []any{0, 2}}},
			"tenant.vms.vnet [0, 2]: give one VNet number per VM (2 VMs; VM k is on VNet vnet[k-1]), or none for all on VNet 0; each must be 0..1 (tenant.vnets is 2)"},
		{map[string]any{"name": "tdemo", "index": 1, "vnets": 2, "vms": map[string]any{"count": 3, "vnet": []any{0, 1}}},
			"tenant.vms.vnet [0, 1]: give one VNet number per VM (3 VMs; VM k is on VNet vnet[k-1]), or none for all on VNet 0; each must be 0..1 (tenant.vnets is 2)"},
		{map[string]any{"name": "tdemo", "index": 1, "vnets": 2, "vms": map[string]any{"count": 2, "vnet": []any{-1, 0}}},
			"tenant.vms.vnet [-1, 0]: give one VNet number per VM (2 VMs; VM k is on VNet vnet[k-1]), or none for all on VNet 0; each must be 0..1 (tenant.vnets is 2)"},
		{map[string]any{"name": "tdemo", "index": 1, "vms": map[string]any{"count": 0, "vnet": []any{0}}},
			"tenant.vms.vnet [0]: give one VNet number per VM (0 VMs; VM k is on VNet vnet[k-1]), or none for all on VNet 0; each must be 0..0 (tenant.vnets is 1)"},
		{map[string]any{"name": "tdemo", "index": 1, "records": []any{rec("ok", "A", 0, "10.20.129.9"), rec("tdemo-1", "A", 0, "10.20.129.9")}},
			"tenant.records[1] (tdemo-1 A)" + recRule},
		{map[string]any{"name": "tdemo", "index": 1, "records": []any{rec("a b", "A", 0, "10.20.129.9"), rec("www.", "TXT", 59, "x"), rec("x", "A", 0),
			rec("y", "A", 86401, "1.2.3.4")}},
			"tenant.records[0] (a b A)" + recRule + "; tenant.records[1] (www. TXT)" + recRule + "; tenant.records[2] (x A)" + recRule +
				"; tenant.records[3] (y A)" + recRule},
		{map[string]any{"name": "t<x>&\u00e9", "index": 0, "records": []any{rec("@", "A", 0, "10.20.129.9")}},
			`tenant.name "t<x>&\u00e9" must match ^[a-z][a-z0-9-]*[a-z0-9]$ and have 2..20 characters (a DNS label and PVE id); ` + index0},
	}
	for _, c := range cases {
		t.Run(c.want[:min(len(c.want), 40)], func(t *testing.T) {
			vms, _ := c.decl["vms"].(map[string]any)
			args := map[string]any{"name": c.decl["name"], "index": c.decl["index"], "contract": c.decl}
			if n, ok := c.decl["vnets"]; ok {
				args["vnets"] = n
			}
			if vms != nil {
				args["vms"], args["vm_vnet"] = vms["count"], vms["vnet"]
			}
			res := runPlan(t, args)
			if res["failed"] != true || res["msg"] != c.want {
				t.Fatalf("msg\n %q\nwant\n %q", res["msg"], c.want)
			}
		})
	}
}

// A declaration that keeps the rules is planned like name and index alone; one that disagrees
// with the options planned is refused, naming the option.
func TestContractAccepted(t *testing.T) {
	decl := map[string]any{"name": "tdemo", "index": 1, "vnets": 2, "vms": map[string]any{"count": 2, "vnet": []any{0, 1}},
		"records": []any{map[string]any{"name": "@", "type": "TXT", "values": []any{"x"}, "ttl": 60}}}
	args := map[string]any{"name": "tdemo", "index": 1, "vnets": 2, "vms": 2, "vm_vnet": []any{0, 1}}
	plain := runPlan(t, args)
	res := runPlan(t, moduletest.With(args, "contract", decl))
	if res["failed"] != false || res["tenant"] == nil || fmtJSON(t, res["tenant"]) != fmtJSON(t, plain["tenant"]) {
		t.Fatalf("res = %v, without the contract %v", res, plain)
	}
	for opt, v := range map[string]any{"name": "tother", "index": 2, "vms": 1, "vnets": 4, "vm_vnet": []any{1, 0}} {
		res := runPlan(t, moduletest.With(args, opt, v, "contract", decl))
		if msg, _ := res["msg"].(string); res["failed"] != true || !strings.HasPrefix(msg, "contract disagrees with "+opt+":") {
			t.Fatalf("%s=%v: %v", opt, v, res)
		}
	}
}
