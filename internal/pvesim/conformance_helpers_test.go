package pvesim

import (
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/access"
	"github.com/deevnet/tenant/internal/module/moduletest"
)

// Sources of the conformance tests (conformance_*_test.go): each case names the line of PVE's
// code it follows, at these commits.
//   - proxmox/qemu-server e6352be67f70042a7433a3a3c712b36d02f9f7cb: src/PVE/API2/Qemu.pm, src/PVE/QemuServer.pm
//   - proxmox/pve-guest-common 4a8f6cbf78e1b6992ef77facb4ff2ab3372999e7: src/PVE/GuestHelpers.pm
//   - proxmox/pve-access-control 5ccd07d9302562b73374d331b63d25b04b86766c: src/PVE/RPCEnvironment.pm,
//     src/PVE/API2/User.pm, src/PVE/API2/ACL.pm
//   - proxmox/pve-storage 0c56bad8b2a7d69e5ce2c243651fe830d6caa936: src/PVE/Storage.pm

// onboarded is a tenant as the project onboards it: pve_tenant_access run with the root token
// (the grants are the module's own), its zone with one VNet, and its token's client.
type onboarded struct {
	root, tenant *client
	user, token  string // tenant-<name>@pve, tenant-<name>@pve!iac
	pool, zone   string
	vnet         string
}

func onboard(t *testing.T, s *Server, name string, index int, vnet, vrf string) onboarded {
	t.Helper()
	id, secret := s.RootToken()
	res, _ := moduletest.Execute(t, access.Module(), map[string]any{
		"name": name, "index": index,
		"api_host": s.Host(), "api_port": s.Port(), "api_user": "root@pam",
		"api_token_id": strings.TrimPrefix(id, "root@pam!"), "api_token_secret": secret, "ca_path": s.CAFile(),
	})
	if res["failed"] == true {
		t.Fatalf("onboard %s: %v", name, res)
	}
	o := onboarded{root: rootClient(t, s), token: res["token_id"].(string), pool: res["pool"].(string), vnet: vnet}
	o.user, _, _ = strings.Cut(o.token, "!")
	o.tenant = tokenClient(t, s, o.token, res["token_secret"].(string))
	// The zone is the one the module granted the token SDN.Use on.
	var acl []map[string]any
	o.root.ok("GET", "/access/acl", nil, &acl)
	for _, e := range acl {
		p := e["path"].(string)
		if e["ugid"] == o.token && strings.HasPrefix(p, "/sdn/zones/") && !strings.HasPrefix(p, "/sdn/zones/localnetwork") {
			o.zone = strings.TrimPrefix(p, "/sdn/zones/")
		}
	}
	if o.zone == "" {
		t.Fatalf("onboard %s: no zone grant in %v", name, acl)
	}
	var ctl []map[string]any
	o.root.ok("GET", "/cluster/sdn/controllers", nil, &ctl)
	if len(ctl) == 0 {
		o.root.ok("POST", "/cluster/sdn/controllers", vals("controller", "evpnctl", "type", "evpn", "asn", "65020", "peers", "10.20.255.1"), nil)
	}
	o.root.ok("POST", "/cluster/sdn/zones", vals("zone", o.zone, "type", "evpn", "controller", "evpnctl", "vrf-vxlan", vrf), nil)
	o.root.ok("POST", "/cluster/sdn/vnets", vals("vnet", vnet, "zone", o.zone, "tag", vrf+"0"), nil)
	return o
}

// dropTenantPriv takes priv out of the tenant role (what onboarding grants), for the cases about
// a token without it.
func dropTenantPriv(t *testing.T, root *client, priv string) {
	t.Helper()
	var keep []string
	for _, p := range access.TenantPrivs {
		if p.Name != priv {
			keep = append(keep, p.Name)
		}
	}
	root.ok("PUT", "/access/roles/"+access.TenantRole, vals("privs", strings.Join(keep, ",")), nil)
}

// refusal is one call and PVE's answer to it.
type refusal struct {
	name, source string // what is tried; the PVE source line the answer follows
	method, path string
	params       []string
	status       int
	msg          string            // the whole message
	errors       map[string]string // 400: per-parameter messages
}

// expect runs each call with c and compares status and message.
func expect(t *testing.T, c *client, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		r := c.do(tc.method, tc.path, vals(tc.params...))
		if r.Status != tc.status || (tc.msg != "" && r.Message != tc.msg) {
			t.Errorf("%s (%s): %s %s: got %d %q %v, want %d %q", tc.name, tc.source, tc.method, tc.path, r.Status, r.Message, r.Errors, tc.status, tc.msg)
		}
		for k, v := range tc.errors {
			if r.Errors[k] != v {
				t.Errorf("%s (%s): errors[%s] = %q, want %q", tc.name, tc.source, k, r.Errors[k], v)
			}
		}
	}
}
