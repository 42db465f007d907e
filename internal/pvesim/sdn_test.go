package pvesim

import (
	"regexp"
	"strings"
	"testing"
)

const node = "dv02hyp002p02"

// evpnBase creates controller evpnctl, zone tn01 and vnet tn01v0 with a subnet.
func evpnBase(t *testing.T, c *client) {
	t.Helper()
	c.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpnctl", "type", "evpn", "asn", "65020", "peers", "10.20.255.1"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "tn01", "type", "evpn", "controller", "evpnctl", "vrf-vxlan", "10001", "mtu", "1450", "ipam", "pve"), nil)
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "tn01v0", "zone", "tn01", "tag", "20016"), nil)
	c.ok("POST", "/cluster/sdn/vnets/tn01v0/subnets", vals("subnet", "10.20.129.0/24", "type", "subnet", "gateway", "10.20.129.1"), nil)
}

func TestSDNEVPNLifecycle(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	evpnBase(t, c)

	var zones []map[string]any
	c.ok("GET", "/cluster/sdn/zones", nil, &zones)
	if len(zones) != 1 || zones[0]["zone"] != "tn01" || zones[0]["vrf-vxlan"] != float64(10001) {
		t.Fatalf("zones = %v", zones)
	}
	mac, _ := zones[0]["mac"].(string)
	if !regexp.MustCompile(`^BC:24:11:[0-9A-F]{2}:[0-9A-F]{2}:[0-9A-F]{2}$`).MatchString(mac) {
		t.Fatalf("generated mac %q", mac)
	}
	if d, _ := zones[0]["digest"].(string); len(d) != 40 {
		t.Fatalf("digest %q", zones[0]["digest"])
	}
	if _, ok := zones[0]["state"]; ok {
		t.Fatal("current view must not carry state")
	}

	// pending view: everything new, properties inside "pending"
	c.ok("GET", "/cluster/sdn/zones", vals("pending", "1"), &zones)
	if zones[0]["state"] != "new" || zones[0]["type"] != "evpn" {
		t.Fatalf("pending zone = %v", zones[0])
	}
	p := zones[0]["pending"].(map[string]any)
	if p["controller"] != "evpnctl" || p["vrf-vxlan"] != float64(10001) || zones[0]["controller"] != nil {
		t.Fatalf("pending sub-object = %v", zones[0])
	}
	var running []map[string]any
	c.ok("GET", "/cluster/sdn/zones", vals("running", "1"), &running)
	if len(running) != 0 {
		t.Fatalf("running before apply = %v", running)
	}

	// subnet id is canonical
	var subnets []map[string]any
	c.ok("GET", "/cluster/sdn/vnets/tn01v0/subnets", nil, &subnets)
	if len(subnets) != 1 || subnets[0]["subnet"] != "tn01-10.20.129.0-24" || subnets[0]["cidr"] != "10.20.129.0/24" || subnets[0]["mask"] != "24" {
		t.Fatalf("subnets = %v", subnets)
	}
	var sub map[string]any
	c.ok("GET", "/cluster/sdn/vnets/tn01v0/subnets/tn01-10.20.129.0-24", nil, &sub)
	if sub["gateway"] != "10.20.129.1" || sub["zone"] != "tn01" {
		t.Fatalf("subnet = %v", sub)
	}

	// lock refuses while pending changes exist, unless allow-pending
	r := c.do("POST", "/cluster/sdn/lock", nil)
	if r.Status != 500 || !strings.Contains(r.Message, "configuration has pending changes") {
		t.Fatalf("lock with pending: %d %q", r.Status, r.Message)
	}
	var token string
	c.ok("POST", "/cluster/sdn/lock", vals("allow-pending", "1"), &token)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(token) {
		t.Fatalf("lock token %q", token)
	}
	// writes without the token fail while locked
	r = c.do("POST", "/cluster/sdn/vnets", vals("vnet", "tn01v1", "zone", "tn01", "tag", "20017"))
	if r.Status != 500 || r.Message != "create sdn vnet object failed: invalid lock token provided!\n" {
		t.Fatalf("write without lock token: %d %q", r.Status, r.Message)
	}
	r = c.do("PUT", "/cluster/sdn", nil)
	if r.Status != 500 || !strings.Contains(r.Message, "could not commit SDN config: invalid lock token provided!") {
		t.Fatalf("apply without token: %d %q", r.Status, r.Message)
	}
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "tn01v1", "zone", "tn01", "tag", "20017", "lock-token", token), nil)

	upid, exit := c.task("PUT", "/cluster/sdn", vals("lock-token", token))
	if exit != "OK" || !regexp.MustCompile(`^UPID:`+node+`:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:reloadnetworkall::root@pam!sim:$`).MatchString(upid) {
		t.Fatalf("apply upid %q exit %q", upid, exit)
	}
	// apply released the lock
	c.ok("POST", "/cluster/sdn/lock", nil, &token)
	c.ok("DELETE", "/cluster/sdn/lock", vals("lock-token", token), nil)

	c.ok("GET", "/cluster/sdn/zones", vals("pending", "1"), &zones)
	if _, ok := zones[0]["state"]; ok {
		t.Fatalf("applied zone still has state: %v", zones[0])
	}
	// a change shows as changed with the running values on top
	c.ok("PUT", "/cluster/sdn/zones/tn01", vals("mtu", "1400"), nil)
	c.ok("GET", "/cluster/sdn/zones", vals("pending", "1"), &zones)
	if zones[0]["state"] != "changed" || zones[0]["mtu"] != float64(1450) || zones[0]["pending"].(map[string]any)["mtu"] != float64(1400) {
		t.Fatalf("changed zone = %v", zones[0])
	}
	if zones[0]["mac"] != mac {
		t.Fatalf("mac changed on update: %v vs %v", zones[0]["mac"], mac)
	}
	c.ok("PUT", "/cluster/sdn/zones/tn01", vals("delete", "mtu"), nil)
	c.ok("GET", "/cluster/sdn/zones", vals("pending", "1"), &zones)
	if zones[0]["pending"].(map[string]any)["mtu"] != "deleted" {
		t.Fatalf("deleted key = %v", zones[0])
	}
	// rollback restores the running config
	c.ok("POST", "/cluster/sdn/rollback", nil, nil)
	var z map[string]any
	c.ok("GET", "/cluster/sdn/zones/tn01", nil, &z)
	if z["mtu"] != float64(1450) {
		t.Fatalf("after rollback: %v", z)
	}

	// delete order
	r = c.do("DELETE", "/cluster/sdn/zones/tn01", nil)
	if r.Status != 500 || r.Message != "delete sdn zone object failed: zone tn01 is used by vnet tn01v0\n" {
		t.Fatalf("zone delete with vnets: %d %q", r.Status, r.Message)
	}
	r = c.do("DELETE", "/cluster/sdn/vnets/tn01v0", nil)
	if r.Status != 400 || r.Errors["vnet"] != "Can't delete vnet if subnets exists" {
		t.Fatalf("vnet delete with subnets: %d %v", r.Status, r.Errors)
	}
	r = c.do("DELETE", "/cluster/sdn/controllers/evpnctl", nil)
	if r.Status != 500 || !strings.Contains(r.Message, "controller evpnctl is used by tn01") {
		t.Fatalf("controller delete: %d %q", r.Status, r.Message)
	}
	c.ok("DELETE", "/cluster/sdn/vnets/tn01v0/subnets/tn01-10.20.129.0-24", nil, nil)
	c.ok("DELETE", "/cluster/sdn/vnets/tn01v0", nil, nil)
	c.ok("DELETE", "/cluster/sdn/vnets/tn01v1", nil, nil)
	c.ok("DELETE", "/cluster/sdn/zones/tn01", nil, nil)
	c.ok("GET", "/cluster/sdn/zones", vals("pending", "1"), &zones)
	if len(zones) != 1 || zones[0]["state"] != "deleted" {
		t.Fatalf("deleted zone view = %v", zones)
	}
	// a pending-deleted vnet is gone for item GETs even with pending=1
	r = c.do("GET", "/cluster/sdn/vnets/tn01v0", vals("pending", "1"))
	if r.Status != 500 || r.Message != "sdn vnet 'tn01v0' does not exist\n" {
		t.Fatalf("deleted vnet GET: %d %q", r.Status, r.Message)
	}
}

func TestSDNSemanticRules(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	evpnBase(t, c)
	cases := []struct {
		name, method, path string
		params             []string
		status             int
		msg                string
	}{
		{"second evpn controller", "POST", "/cluster/sdn/controllers", []string{"controller", "other", "type", "evpn", "asn", "65001", "peers", "10.0.0.1"}, 500,
			"create sdn controller object failed: only 1 global evpn controller can be defined\n"},
		{"duplicate vrf-vxlan", "POST", "/cluster/sdn/zones", []string{"zone", "tn02", "type", "evpn", "controller", "evpnctl", "vrf-vxlan", "10001"}, 500,
			"create sdn zone object failed: vrf-vxlan 10001 is already declared in tn01\n"},
		{"missing controller", "POST", "/cluster/sdn/zones", []string{"zone", "tn02", "type", "evpn", "controller", "nope", "vrf-vxlan", "10002"}, 500,
			"create sdn zone object failed: controller nope don't exist\n"},
		{"evpn needs vrf-vxlan", "POST", "/cluster/sdn/zones", []string{"zone", "tn02", "type", "evpn", "controller", "evpnctl"}, 500,
			"missing value for required option 'vrf-vxlan'\n"},
		{"unexpected property", "POST", "/cluster/sdn/zones", []string{"zone", "tn02", "type", "evpn", "controller", "evpnctl", "vrf-vxlan", "10002", "peers", "1.2.3.4"}, 500,
			"unexpected property 'peers'\n"},
		{"duplicate zone", "POST", "/cluster/sdn/zones", []string{"zone", "tn01", "type", "simple"}, 500,
			"create sdn zone object failed: sdn zone object ID 'tn01' already defined\n"},
		{"duplicate vni", "POST", "/cluster/sdn/vnets", []string{"vnet", "tn01v9", "zone", "tn01", "tag", "20016"}, 500,
			"create sdn vnet object failed: 400 Parameter verification failed.\ntag: vxlan tag 20016 already exist in vnet tn01v0 in zone tn01\n"},
		{"evpn vnet needs tag", "POST", "/cluster/sdn/vnets", []string{"vnet", "tn01v9", "zone", "tn01"}, 500,
			"create sdn vnet object failed: 400 Parameter verification failed.\ntag: missing vxlan tag\n"},
		{"vnet in unknown zone", "POST", "/cluster/sdn/vnets", []string{"vnet", "x1", "zone", "nozone", "tag", "5"}, 500,
			"create sdn vnet object failed: unknown section type ''\n"},
		{"zone id too long", "POST", "/cluster/sdn/zones", []string{"zone", "abcdefghi", "type", "simple"}, 400, ""},
		{"unknown zone", "GET", "/cluster/sdn/zones/nope", nil, 500, "sdn 'nope' does not exist\n"},
		{"wrong vnet for subnet", "GET", "/cluster/sdn/vnets/tn01v0/subnets/tn01-10.20.130.0-24", nil, 500, "sdn subnet 'tn01-10.20.130.0-24' does not exist\n"},
		{"gateway outside", "POST", "/cluster/sdn/vnets/tn01v0/subnets", []string{"subnet", "10.20.130.0/24", "type", "subnet", "gateway", "10.20.131.1"}, 500,
			"create sdn subnet object failed: 400 Parameter verification failed.\ngateway: gateway 10.20.131.1 is not in subnet 10.20.130.0/24\n"},
		{"digest mismatch", "PUT", "/cluster/sdn/zones/tn01", []string{"mtu", "1400", "digest", strings.Repeat("0", 40)}, 500,
			"update sdn zone object failed: detected modified configuration - file changed by other user? Try again.\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(tc.method, tc.path, vals(tc.params...))
			if r.Status != tc.status || (tc.msg != "" && r.Message != tc.msg) {
				t.Fatalf("got %d %q %v, want %d %q", r.Status, r.Message, r.Errors, tc.status, tc.msg)
			}
			if tc.msg != "" && r.Reason != strings.SplitN(tc.msg, "\n", 2)[0] {
				t.Fatalf("reason phrase %q", r.Reason)
			}
		})
	}
	r := c.do("POST", "/cluster/sdn/zones", vals("zone", "abcdefghi", "type", "simple"))
	if r.Errors["zone"] != "invalid format - zone ID 'abcdefghi' can't be more length than 8 characters\n" {
		t.Fatalf("zone id error %q", r.Errors["zone"])
	}
}

func TestSDNFabrics(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.ok("POST", "/cluster/sdn/fabrics/fabric", vals("id", "ufab", "protocol", "openfabric", "ip_prefix", "10.20.255.5/24"), nil)
	var f map[string]any
	c.ok("GET", "/cluster/sdn/fabrics/fabric/ufab", nil, &f)
	if f["ip_prefix"] != "10.20.255.0/24" {
		t.Fatalf("fabric = %v", f)
	}
	c.ok("POST", "/cluster/sdn/fabrics/node/ufab", vals("node_id", node, "protocol", "openfabric", "ip", "10.20.255.1", "interfaces", "name=ens19"), nil)
	r := c.do("POST", "/cluster/sdn/fabrics/node/ufab", vals("node_id", "other", "protocol", "openfabric", "ip", "10.9.9.9", "interfaces", "name=ens19"))
	if r.Status != 500 || !strings.Contains(r.Message, "node IP 10.9.9.9 is outside the IP prefix 10.20.255.0/24 of the fabric") {
		t.Fatalf("outside prefix: %d %q", r.Status, r.Message)
	}
	r = c.do("POST", "/cluster/sdn/fabrics/fabric", vals("id", "of2", "protocol", "ospf", "ip_prefix", "10.30.0.0/24", "hello_interval", "5"))
	if r.Status != 400 || r.Errors["hello_interval"] == "" {
		t.Fatalf("ospf with openfabric-only property: %d %v", r.Status, r.Errors)
	}
	r = c.do("POST", "/cluster/sdn/fabrics/fabric", vals("id", "ufab2"))
	if r.Status != 400 || r.Errors["protocol"] != "property is missing and it is not optional" {
		t.Fatalf("missing protocol: %d %v", r.Status, r.Errors)
	}
	c.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpnctl", "type", "evpn", "asn", "65020", "fabric", "ufab"), nil)
	r = c.do("DELETE", "/cluster/sdn/fabrics/fabric/ufab", nil)
	if r.Status != 500 || !strings.Contains(r.Message, `this fabric is still used in the EVPN controller "evpnctl"`) {
		t.Fatalf("fabric delete in use: %d %q", r.Status, r.Message)
	}
	var all map[string][]map[string]any
	c.ok("GET", "/cluster/sdn/fabrics/all", nil, &all)
	if len(all["fabrics"]) != 1 || len(all["nodes"]) != 1 {
		t.Fatalf("all = %v", all)
	}
}

func TestSDNZoneTypes(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "s1", "type", "simple", "dhcp", "dnsmasq", "ipam", "pve"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "v1", "type", "vlan", "bridge", "vmbr0"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "q1", "type", "qinq", "bridge", "vmbr0", "tag", "100", "vlan-protocol", "802.1ad"), nil)
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "x1", "type", "vxlan", "peers", "10.0.0.1,10.0.0.2"), nil)
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "vl10", "zone", "v1", "tag", "10", "vlanaware", "1"), nil)
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "vl11", "zone", "v1", "tag", "10"), nil) // VLAN tags need not be unique
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "vx1", "zone", "x1", "tag", "5000"), nil)
	for _, tc := range []struct {
		params []string
		msg    string
	}{
		{[]string{"zone", "v2", "type", "vlan"}, "missing value for required option 'bridge'\n"},
		{[]string{"zone", "q2", "type", "qinq", "bridge", "vmbr0"}, "missing value for required option 'tag'\n"},
		{[]string{"zone", "x2", "type", "vxlan"}, "create sdn zone object failed: 400 Parameter verification failed.\npeers: must have exactly one of peers / fabric defined\n"},
		{[]string{"zone", "e1", "type", "evpn", "controller", "c", "vrf-vxlan", "1", "dhcp", "dnsmasq"}, "unexpected property 'dhcp'\n"},
		{[]string{"zone", "s2", "type", "simple", "ipam", "nope"}, "create sdn zone object failed: 400 Parameter verification failed.\nipam: nope not existing\n"},
	} {
		if r := c.do("POST", "/cluster/sdn/zones", vals(tc.params...)); r.Status != 500 || r.Message != tc.msg {
			t.Errorf("%v: %d %q, want %q", tc.params, r.Status, r.Message, tc.msg)
		}
	}
	if r := c.do("POST", "/cluster/sdn/vnets/vl10/subnets", vals("subnet", "10.1.0.0/24", "type", "subnet")); r.Status != 500 || r.Message != "create sdn subnet object failed: you can't add a subnet on a vlanaware vnet\n" {
		t.Errorf("subnet on vlanaware vnet: %d %q", r.Status, r.Message)
	}
	var zones []map[string]any
	c.ok("GET", "/cluster/sdn/zones", vals("type", "vlan"), &zones)
	if len(zones) != 1 || zones[0]["zone"] != "v1" {
		t.Fatalf("type filter: %v", zones)
	}
}
