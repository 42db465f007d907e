package plan

import (
	"strings"
	"testing"
)

// Every refused input fails naming its field (tenant_plan does no I/O, so nothing to count).
func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		args  map[string]any
		field string
	}{
		{"index 0", map[string]any{"index": 0}, "index"},
		{"index 64", map[string]any{"index": 64}, "index"},
		{"index negative", map[string]any{"index": -1}, "index"},
		{"index not a number", map[string]any{"index": "one"}, "index"},
		{"name upper case", map[string]any{"name": "Tdemo"}, "name"},
		{"name with underscore", map[string]any{"name": "t_demo"}, "name"},
		{"name too long", map[string]any{"name": "t" + strings.Repeat("a", 20)}, "name"},
		{"name trailing dash", map[string]any{"name": "tdemo-"}, "name"},
		{"vms negative", map[string]any{"vms": -1}, "vms"},
		{"vms 100", map[string]any{"vms": 100}, "vms"},
		{"vnets 3", map[string]any{"vnets": 3}, "vnets"},
		{"vnets 0", map[string]any{"vnets": 0}, "vnets"},
		{"vnets 32", map[string]any{"vnets": 32}, "vnets"},
		{"site unknown key", map[string]any{"site": map[string]any{"nework": "10.0.0.0/16"}}, "site.nework"},
		{"site network IPv6", map[string]any{"site": map[string]any{"network": "fd00::/48"}}, "site.network"},
		{"site overlay outside network", map[string]any{"site": map[string]any{"overlay": "192.168.0.0/18"}}, "site.overlay"},
		{"site resolver not an address", map[string]any{"site": map[string]any{"resolver": "dns"}}, "site.resolver"},
		{"site resolver in the overlay", map[string]any{"site": map[string]any{"resolver": "10.20.129.5"}}, "site.resolver"},
		{"site zone not a name", map[string]any{"site": map[string]any{"zone": "bad zone"}}, "site.zone"},
		{"site vlan out of range", map[string]any{"site": map[string]any{"transit_vlan": 5000}}, "site.transit_vlan"},
		{"site asn 0", map[string]any{"site": map[string]any{"asn": 0}}, "site.asn"},
		{"site not a dict", map[string]any{"site": "x"}, "site"},
		{"unknown option", map[string]any{"vm_count": 2}, "vm_count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"name": "tdemo", "index": 1}
			for k, v := range c.args {
				args[k] = v
			}
			res := runPlan(t, args)
			msg, _ := res["msg"].(string)
			if res["failed"] != true {
				t.Fatalf("%v accepted: %v", c.args, res)
			}
			if !strings.Contains(msg, c.field) {
				t.Fatalf("msg %q does not name %q", msg, c.field)
			}
		})
	}
}
