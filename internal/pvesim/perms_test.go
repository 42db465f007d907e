package pvesim

import (
	"strings"
	"testing"
)

// tenantSetup follows PERMISSIONS.md §4 for tenant tX: user, privsep token,
// pool, EVPN zone, and the ACLs granted to both the user and the token.
func tenantSetup(t *testing.T, root *client, name string, vrf string) (id, secret string) {
	t.Helper()
	user := name + "@pve"
	root.ok("POST", "/access/users", vals("userid", user), nil)
	var tok map[string]any
	root.ok("POST", "/access/users/"+user+"/token/iac", vals("privsep", "1"), &tok)
	id, secret = tok["full-tokenid"].(string), tok["value"].(string)
	root.ok("POST", "/pools", vals("poolid", name), nil)
	root.ok("POST", "/cluster/sdn/zones", vals("zone", name, "type", "evpn", "controller", "evpnctl", "vrf-vxlan", vrf), nil)
	grants := [][3]string{
		{"/pool/" + name, "PVEVMAdmin", "1"},
		{"/pool/" + name, "PVEPoolUser", "1"},
		{"/vms/9000", "PVETemplateUser", "1"},
		{"/storage/local-lvm", "PVEDatastoreUser", "1"},
		{"/sdn/zones/" + name, "PVESDNAdmin", "1"},
		{"/sdn/zones/localnetwork/vmbr0", "PVESDNUser", "1"},
	}
	for _, g := range grants {
		root.ok("PUT", "/access/acl", vals("path", g[0], "roles", g[1], "propagate", g[2], "users", user, "tokens", id), nil)
	}
	return id, secret
}

func TestScopedTenantToken(t *testing.T) {
	s := startSim(t)
	root := rootClient(t, s)
	root.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpnctl", "type", "evpn", "asn", "65020", "peers", "10.20.255.1"), nil)
	aID, aSecret := tenantSetup(t, root, "tA", "10001")
	tenantSetup(t, root, "tB", "10002")
	a := tokenClient(t, s, aID, aSecret)

	// secret is returned once and never listed
	var toks []map[string]any
	root.ok("GET", "/access/users/tA@pve/token", nil, &toks)
	if len(toks) != 1 || toks[0]["value"] != nil || toks[0]["privsep"] != float64(1) {
		t.Fatalf("token list = %v", toks)
	}

	// own zone: allowed
	a.ok("POST", "/cluster/sdn/vnets", vals("vnet", "tAv0", "zone", "tA", "tag", "20016"), nil)
	a.ok("POST", "/cluster/sdn/vnets/tAv0/subnets", vals("subnet", "10.20.129.0/24", "type", "subnet", "gateway", "10.20.129.1"), nil)
	root.ok("POST", "/cluster/sdn/vnets", vals("vnet", "tBv0", "zone", "tB", "tag", "20032"), nil)
	var zones []map[string]any
	a.ok("GET", "/cluster/sdn/zones", nil, &zones)
	if len(zones) != 1 || zones[0]["zone"] != "tA" {
		t.Fatalf("tenant sees zones %v", zones)
	}
	var vnets []map[string]any
	a.ok("GET", "/cluster/sdn/vnets", nil, &vnets)
	if len(vnets) != 1 || vnets[0]["vnet"] != "tAv0" {
		t.Fatalf("tenant sees vnets %v", vnets)
	}
	if _, exit := a.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10101", "name", "ta-1", "pool", "tA")); exit != "OK" {
		t.Fatalf("tenant clone: %s", exit)
	}
	if _, exit := a.task("POST", "/nodes/"+node+"/qemu/10101/config", vals("net0", "virtio,bridge=tAv0", "ipconfig0", "ip=10.20.129.10/24,gw=10.20.129.1")); exit != "OK" {
		t.Fatalf("tenant config: %s", exit)
	}
	var st map[string]any
	a.ok("GET", "/nodes/"+node+"/qemu/10101/status/current", nil, &st)
	a.ok("GET", "/pools/tA", nil, nil)
	root.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10201", "name", "tb-1", "pool", "tB"))

	// other tenant: 403 with PVE's message
	denied := []struct {
		method, path string
		params       []string
		msg          string
	}{
		{"POST", "/cluster/sdn/vnets", []string{"vnet", "evil", "zone", "tB", "tag", "30000"}, "Permission check failed (/sdn/zones/tB, SDN.Allocate)\n"},
		{"GET", "/cluster/sdn/zones/tB", nil, "Permission check failed (/sdn/zones/tB, SDN.Allocate)\n"},
		{"GET", "/cluster/sdn/vnets/tBv0", nil, "Permission check failed (/sdn/zones/tB/tBv0, SDN.Audit|SDN.Allocate)\n"},
		{"DELETE", "/cluster/sdn/vnets/tBv0", nil, "Permission check failed (/sdn/zones/tB/tBv0, SDN.Allocate)\n"},
		{"GET", "/pools/tB", nil, "Permission check failed (/pool/tB, Pool.Audit)\n"},
		{"GET", "/nodes/" + node + "/qemu/10201/config", nil, "Permission check failed (/vms/10201, VM.Audit)\n"},
		{"DELETE", "/nodes/" + node + "/qemu/10201", nil, "Permission check failed (/vms/10201, VM.Allocate)\n"},
		{"POST", "/nodes/" + node + "/qemu/9000/clone", []string{"newid", "10102", "pool", "tB"}, "Permission check failed\n"},
		{"POST", "/nodes/" + node + "/qemu/10101/config", []string{"net0", "virtio,bridge=tBv0"}, "Permission check failed (/sdn/zones/tB/tBv0, SDN.Use)\n"},
		{"PUT", "/cluster/sdn", nil, "Permission check failed (/sdn, SDN.Allocate)\n"},
		{"POST", "/cluster/sdn/zones", []string{"zone", "tC", "type", "simple"}, "Permission check failed (/sdn/zones, SDN.Allocate)\n"},
	}
	for _, d := range denied {
		r := a.do(d.method, d.path, vals(d.params...))
		if r.Status != 403 || r.Message != d.msg {
			t.Errorf("%s %s: got %d %q, want 403 %q", d.method, d.path, r.Status, r.Message, d.msg)
		}
	}
	var res []map[string]any
	a.ok("GET", "/cluster/resources", vals("type", "vm"), &res)
	for _, v := range res {
		if v["vmid"] == float64(10201) {
			t.Fatalf("tenant A sees tenant B's VM: %v", res)
		}
	}

	// a 403 hides a 400: permission is checked before the schema
	r := a.do("POST", "/cluster/sdn/vnets", vals("vnet", "bad_id!", "zone", "tB"))
	if r.Status != 403 {
		t.Fatalf("403 must come before 400: %d %v", r.Status, r.Errors)
	}

	// privsep: granting only the token is not enough
	root.ok("POST", "/access/users", vals("userid", "half@pve"), nil)
	var tok map[string]any
	root.ok("POST", "/access/users/half@pve/token/tk", nil, &tok)
	root.ok("PUT", "/access/acl", vals("path", "/sdn/zones/tA", "roles", "PVESDNAdmin", "tokens", "half@pve!tk"), nil)
	h := tokenClient(t, s, tok["full-tokenid"].(string), tok["value"].(string))
	if r := h.do("GET", "/cluster/sdn/zones/tA", nil); r.Status != 403 {
		t.Fatalf("token-only grant must be refused (intersection): %d", r.Status)
	}
	root.ok("PUT", "/access/acl", vals("path", "/sdn/zones/tA", "roles", "PVESDNAdmin", "users", "half@pve"), nil)
	h.ok("GET", "/cluster/sdn/zones/tA", nil, nil)

	// removed token: 401
	root.ok("DELETE", "/access/users/half@pve/token/tk", nil, nil)
	if r := h.do("GET", "/version", nil); r.Status != 401 {
		t.Fatalf("removed token: %d", r.Status)
	}
	if r := root.do("PUT", "/access/acl", vals("path", "/bogus", "roles", "NoAccess", "users", "tA@pve")); r.Status != 400 || !strings.Contains(r.Errors["path"], "invalid ACL path '/bogus'") {
		t.Fatalf("bad acl path: %d %v", r.Status, r.Errors)
	}
}
