package pvesim

import (
	"strings"
	"testing"
)

func TestACLResolution(t *testing.T) {
	st := newState(DefaultConfig(), "x")
	st.Users["u@pve"] = &User{Enable: true, Groups: []string{"ops"}, Tokens: map[string]*Token{"t": {Privsep: true}, "n": {Privsep: false}}}
	st.Pools["p"] = &Pool{}
	st.VMs[100] = &VM{VMID: 100, Pool: "p", Config: map[string]string{}}
	st.VMs[101] = &VM{VMID: 101, Config: map[string]string{}}
	st.ACLs = []ACL{
		{Path: "/sdn/zones", Type: "user", UGID: "u@pve", Role: "PVESDNAdmin", Propagate: false},
		{Path: "/", Type: "group", UGID: "ops", Role: "PVEAuditor", Propagate: true},
		{Path: "/storage", Type: "group", UGID: "ops", Role: "PVEDatastoreUser", Propagate: true},
		{Path: "/storage", Type: "user", UGID: "u@pve", Role: "PVEPoolUser", Propagate: true},
		{Path: "/pool/p", Type: "user", UGID: "u@pve", Role: "PVEVMAdmin", Propagate: false},
		{Path: "/vms/100", Type: "user", UGID: "u@pve", Role: "PVETemplateUser", Propagate: false},
		{Path: "/pool/p", Type: "token", UGID: "u@pve!t", Role: "PVEVMUser", Propagate: true},
		{Path: "/nodes", Type: "user", UGID: "u@pve", Role: "NoAccess", Propagate: true},
	}
	u := principal{User: "u@pve"}
	tok := principal{User: "u@pve", TokenID: "t", Privsep: true}
	nosep := principal{User: "u@pve", TokenID: "n", Privsep: false}
	cases := []struct {
		who  principal
		path string
		priv string
		want bool
	}{
		{u, "/sdn/zones", "SDN.Allocate", true},     // on the path itself, propagate=0 counts
		{u, "/sdn/zones/tA", "SDN.Allocate", false}, // ...but does not propagate
		{u, "/sdn/zones/tA", "SDN.Audit", true},     // inherited group role from /
		{u, "/storage/local", "Pool.Audit", true},   // user entry at /storage wins over the group's
		{u, "/storage/local", "Datastore.Audit", false},
		{u, "/vms/100", "VM.Allocate", true},            // pool role added for a member VM
		{u, "/vms/100", "VM.Clone", true},               // and the VM's own role kept
		{u, "/vms/101", "VM.Allocate", false},           // not a member
		{u, "/nodes/dv02hyp002p02", "Sys.Audit", false}, // NoAccess
		{tok, "/vms/100", "VM.PowerMgmt", true},         // token role ∩ user role
		{tok, "/vms/100", "VM.Allocate", false},         // user has it, token does not
		{tok, "/sdn/zones", "SDN.Allocate", false},      // user has it, token does not
		{nosep, "/sdn/zones", "SDN.Allocate", true},     // privsep=0: exactly the user's
		{principal{User: "root@pam", TokenID: "sim"}, "/anything", "Sys.Modify", true},
	}
	for _, c := range cases {
		if got := st.has(c.who, c.path, []string{c.priv}, false); got != c.want {
			t.Errorf("%s on %s %s: got %v, want %v", c.who, c.path, c.priv, got, c.want)
		}
	}
	for _, p := range []string{"/", "/vms/100", "/sdn/zones/tA/tAv0/42", "/pool/a/b/c", "/access/realm/pve", "/storage/local-lvm", "/sdn/fabrics/ufab"} {
		if !validACLPath(p) {
			t.Errorf("valid ACL path %s refused", p)
		}
	}
	for _, p := range []string{"/bogus", "/vms/abc", "/pool/a/b/c/d", "/sdn/zones/a/b/c/d", "vms"} {
		if validACLPath(p) {
			t.Errorf("invalid ACL path %s accepted", p)
		}
	}
}

// A missing pool or user answers PVE's message: the type's own wording, after "<op> failed: "
// for a write (pveproxy: PVE::API2::Pool). A user is looked up by the permission check of its
// endpoints ("userid-group" calls check_user_exist, RPCEnvironment.pm exec_api2_perm_check) before
// the handler runs for any caller but the root@pam user itself: a token, even root's, gets the
// lookup's own message.
func TestMissingPoolAndUserMessages(t *testing.T) {
	c := rootClient(t, startSim(t))
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/pools/nopool", "pool 'nopool' does not exist"},
		{"PUT", "/pools/nopool", "update pools failed: pool 'nopool' does not exist"},
		{"DELETE", "/pools/nopool", "delete pool failed: pool 'nopool' does not exist"},
		{"GET", "/access/users/nobody@pve", "no such user ('nobody@pve')"},
		{"PUT", "/access/users/nobody@pve", "no such user ('nobody@pve')"},
		{"DELETE", "/access/users/nobody@pve", "no such user ('nobody@pve')"},
	} {
		if r := c.do(tc.method, tc.path, nil); r.Status != 500 || strings.TrimSpace(r.Message) != tc.want {
			t.Errorf("%s %s: %d %q, want 500 %q", tc.method, tc.path, r.Status, r.Message, tc.want)
		}
	}
}

// A delete of a pool or a user: PVE refuses a pool with a VM in it and root@pam; what it deletes
// takes its ACL entries with it (one left behind would grant on a new one of the same name).
func TestDeletePoolAndUser(t *testing.T) {
	c := rootClient(t, startSim(t))
	c.ok("POST", "/pools", vals("poolid", "p"), nil)
	c.ok("POST", "/access/users", vals("userid", "u@pve"), nil)
	c.ok("PUT", "/access/acl", vals("path", "/pool/p", "roles", "PVEAuditor", "users", "root@pam"), nil)
	c.ok("PUT", "/access/acl", vals("path", "/vms/9000", "roles", "PVEAuditor", "users", "u@pve"), nil)
	c.ok("PUT", "/pools/p", vals("vms", "9000"), nil)
	refused := map[string]string{"/pools/p": "delete pool failed: pool 'p' is not empty",
		"/access/users/root@pam": "delete user failed: cannot delete root@pam"}
	for path, want := range refused {
		if r := c.do("DELETE", path, nil); r.Status != 500 || strings.TrimSpace(r.Message) != want {
			t.Errorf("DELETE %s: %d %q, want 500 %q", path, r.Status, r.Message, want)
		}
	}
	c.ok("PUT", "/pools/p", vals("vms", "9000", "delete", "1"), nil)
	c.ok("DELETE", "/pools/p", nil, nil)
	c.ok("DELETE", "/access/users/u@pve", nil, nil)
	var acl []map[string]any
	c.ok("GET", "/access/acl", nil, &acl)
	for _, a := range acl {
		if a["path"] == "/pool/p" || a["ugid"] == "u@pve" {
			t.Errorf("ACL entry of a deleted pool or user stayed: %v", a)
		}
	}
}
