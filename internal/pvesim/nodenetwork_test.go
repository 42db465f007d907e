package pvesim

import (
	"encoding/json"
	"strings"
	"testing"
)

// byIface indexes GET /nodes/{node}/network's answer by interface name.
func byIface(t *testing.T, c *client, query ...string) map[string]map[string]any {
	t.Helper()
	var list []map[string]any
	c.ok("GET", "/nodes/"+node+"/network", vals(query...), &list)
	out := map[string]map[string]any{}
	for _, i := range list {
		out[i["iface"].(string)] = i
	}
	return out
}

func TestNodeNetworkAsPVEListsIt(t *testing.T) {
	s := startSim(t, func(c *Config) {
		c.Nodes[0].Network = append(c.Nodes[0].Network, IfaceConfig{Iface: "vmbr9", Comments: "parking"}, IfaceConfig{Iface: "park0"})
	})
	c := rootClient(t, s)
	all := byIface(t, c)
	if len(all) != 6 {
		t.Fatalf("want enp1s0, vmbr0, vmbr0.50, vmbr0.51, vmbr9, park0; got %v", all)
	}
	// INotify's types by name: only vmbrN is a bridge.
	if all["vmbr9"]["type"] != "bridge" || all["park0"]["type"] != "unknown" || all["enp1s0"]["priority"] != float64(2) {
		t.Errorf("types and priority as INotify gives them: %v %v %v", all["vmbr9"], all["park0"], all["enp1s0"])
	}
	b, _ := json.Marshal(all["vmbr0"])
	for _, want := range []string{`"bridge_ports":"enp1s0"`, `"bridge_vlan_aware":1`, `"cidr":"10.20.10.2/24"`, `"address":"10.20.10.2"`,
		`"netmask":"24"`, `"method":"static"`, `"type":"bridge"`, `"families":["inet"]`, `"active":1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("vmbr0 lacks %s: %s", want, b)
		}
	}
	if v := all["vmbr0.50"]; v["type"] != "vlan" || v["vlan-raw-device"] != nil || v["cidr"] != "10.20.50.2/24" {
		t.Errorf("vmbr0.50 = %v", v)
	}
	if v := all["vmbr9"]; v["bridge_ports"] != "" || v["method"] != "manual" || v["cidr"] != nil || v["comments"] != "parking\n" {
		t.Errorf("a bridge without ports or address: %v", v)
	}
	if v := all["enp1s0"]; v["type"] != "eth" || v["exists"] != float64(1) {
		t.Errorf("enp1s0 = %v", v)
	}
	bridges := byIface(t, c, "type", "any_bridge")
	if len(bridges) != 2 || bridges["vmbr0"] == nil || bridges["vmbr9"] == nil {
		t.Fatalf("type=any_bridge before any VNet: %v", bridges)
	}
	if got := byIface(t, c, "type", "vlan"); len(got) != 2 {
		t.Fatalf("type=vlan: %v", got)
	}
	r := c.do("GET", "/nodes/nosuch/network", nil)
	if r.Status != 500 || r.Message != "no such cluster node 'nosuch'\n" {
		t.Fatalf("unknown node: %d %q", r.Status, r.Message)
	}
	r = c.do("GET", "/nodes/"+node+"/network", vals("type", "bogus"))
	if r.Status != 400 || r.Errors["type"] == "" {
		t.Fatalf("unknown type: %d %v", r.Status, r.Errors)
	}
}

func TestNodeNetworkListsOnlyVNetsTheCallerMaySee(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	evpnBase(t, c)
	if got := byIface(t, c, "type", "any_bridge"); got["tn01v0"] != nil {
		t.Fatalf("a staged (not applied) VNet is listed: %v", got)
	}
	if _, st := c.task("PUT", "/cluster/sdn", nil); st != "OK" {
		t.Fatalf("apply: %s", st)
	}
	if v := byIface(t, c, "type", "any_bridge")["tn01v0"]; v["type"] != "vnet" || v["active"] != "1" {
		t.Fatalf("applied VNet with type=any_bridge: %v", v)
	}
	if got := byIface(t, c, "type", "any_local_bridge"); got["tn01v0"] != nil || got["vmbr0"] == nil {
		t.Fatalf("any_local_bridge lists VNets or misses vmbr0: %v", got)
	}
	if got := byIface(t, c, "type", "include_sdn"); len(got) != 1 || got["tn01v0"] == nil {
		t.Fatalf("include_sdn: %v", got)
	}
	// A token without SDN.Audit/SDN.Use on the VNet does not see it (user "all" may list).
	c.ok("POST", "/access/users", vals("userid", "nobody@pve"), nil)
	var tok map[string]any
	c.ok("POST", "/access/users/nobody@pve/token/iac", vals("privsep", "1"), &tok)
	if got := byIface(t, tokenClient(t, s, tok["full-tokenid"].(string), tok["value"].(string)), "type", "any_bridge"); got["tn01v0"] != nil || got["vmbr0"] == nil {
		t.Fatalf("a token without SDN privileges: %v", got)
	}
}
