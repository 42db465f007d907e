package pvesim

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The access rules PVE's own permission tests do not reach (conformance_pve_test.go runs those):
// each names the line of pve-access-control (5ccd07d) or pve-manager it follows.

func permsOf(t *testing.T, c *client, q ...string) map[string]map[string]int {
	t.Helper()
	var got map[string]map[string]int
	c.ok("GET", "/access/permissions", vals(q...), &got)
	return got
}

// ACL.pm update_acl: normalize_path, then check_path unless deleting; lock_user_config's
// "ACL update failed: " before a missing group, user or token.
func TestACLPathAndPrincipals(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.ok("POST", "/access/users", vals("userid", "u1@pve"), nil)
	c.ok("POST", "/access/groups", vals("groupid", "g1"), nil)
	for _, p := range []string{"/vms/100/", "//vms//100", "vms/100"} {
		c.ok("PUT", "/access/acl", vals("path", p, "roles", "PVEAuditor", "users", "u1@pve"), nil)
	}
	var acl []map[string]any
	c.ok("GET", "/access/acl", nil, &acl)
	if len(acl) != 1 || acl[0]["path"] != "/vms/100" {
		t.Errorf("normalized paths: want one entry on /vms/100, got %v", acl)
	}
	for _, p := range []string{"/vms/99", "/users", "/kvm/vms", "/vms/100/a", "/storage/a/b"} {
		r := c.do("PUT", "/access/acl", vals("path", p, "roles", "PVEAuditor", "users", "u1@pve"))
		if r.Status != 400 || r.Errors["path"] != "invalid ACL path '"+p+"'" {
			t.Errorf("PUT acl path %s: want 400 invalid ACL path, got %d %v", p, r.Status, r.Errors)
		}
	}
	// a delete skips check_path (an entry PVE's parser kept can still go)
	if r := c.do("PUT", "/access/acl", vals("path", "/users", "roles", "PVEAuditor", "users", "u1@pve", "delete", "1")); r.Status != 200 {
		t.Errorf("delete on a path check_path refuses: %d %q", r.Status, r.Message)
	}
	for _, tc := range []struct{ kind, id, msg string }{
		{"groups", "nope", "ACL update failed: group 'nope' does not exist\n"},
		{"users", "nope@pve", "ACL update failed: user 'nope@pve' does not exist\n"},
		{"tokens", "u1@pve!nope", "ACL update failed: no such token 'nope' for user 'u1@pve'\n"},
		{"tokens", "ghost@pve!xx", "ACL update failed: no such user ('ghost@pve')\n"},
	} {
		r := c.do("PUT", "/access/acl", vals("path", "/vms", "roles", "PVEAuditor", tc.kind, tc.id, "groups", "g1"))
		if r.Status != 500 || r.Message != tc.msg {
			t.Errorf("ACL naming %s %s: want 500 %q, got %d %q", tc.kind, tc.id, tc.msg, r.Status, r.Message)
		}
	}
	// nothing of a refused request is written, not even its valid group
	c.ok("GET", "/access/acl", nil, &acl)
	if len(acl) != 1 {
		t.Errorf("a refused ACL update wrote entries: %v", acl)
	}
}

// Group.pm; User.pm create_user/update_user "no such group"; delete_group_acl.
func TestGroups(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.ok("POST", "/access/groups", vals("groupid", "devs", "comment", "developers"), nil)
	if r := c.do("POST", "/access/groups", vals("groupid", "devs")); r.Status != 500 || r.Message != "create group failed: group 'devs' already exists\n" {
		t.Errorf("duplicate group: %d %q", r.Status, r.Message)
	}
	if r := c.do("POST", "/access/users", vals("userid", "a@pve", "groups", "devs,ops")); r.Status != 500 || r.Message != "create user failed: no such group 'ops'\n" {
		t.Errorf("user in a missing group: %d %q", r.Status, r.Message)
	}
	c.ok("POST", "/access/users", vals("userid", "a@pve", "groups", "devs"), nil)
	c.ok("POST", "/access/users", vals("userid", "b@pve"), nil)
	c.ok("PUT", "/access/users/b@pve", vals("groups", "devs", "append", "1"), nil)
	var g map[string]any
	c.ok("GET", "/access/groups/devs", nil, &g)
	if !reflect.DeepEqual(g, map[string]any{"comment": "developers", "members": []any{"a@pve", "b@pve"}}) {
		t.Errorf("GET group: %v", g)
	}
	var l []map[string]any
	c.ok("GET", "/access/groups", nil, &l)
	if len(l) != 1 || l[0]["users"] != "a@pve,b@pve" {
		t.Errorf("group list: %v", l)
	}
	c.ok("PUT", "/access/acl", vals("path", "/vms", "roles", "PVEAuditor", "groups", "devs"), nil)
	if got := permsOf(t, c, "userid", "a@pve", "path", "/vms/100"); len(got["/vms/100"]) == 0 {
		t.Errorf("a group's role does not reach its member: %v", got)
	}
	c.ok("DELETE", "/access/groups/devs", nil, nil)
	var acl []any
	c.ok("GET", "/access/acl", nil, &acl)
	var u map[string]any
	c.ok("GET", "/access/users/a@pve", nil, &u)
	if len(acl) != 0 || len(u["groups"].([]any)) != 0 {
		t.Errorf("a deleted group left ACL entries %v or membership %v", acl, u["groups"])
	}
	if r := c.do("GET", "/access/groups/devs", nil); r.Status != 500 || r.Message != "group 'devs' does not exist\n" {
		t.Errorf("deleted group: %d %q", r.Status, r.Message)
	}
}

// pve-manager PVE/API2/Pool.pm update_pool and read_pool: storage members; RPCEnvironment.pm
// compile_acl_path gives /storage/<id> the pool's roles, never propagating.
func TestPoolStorageMembers(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.ok("POST", "/access/users", vals("userid", "u@pve"), nil)
	c.ok("POST", "/pools", vals("poolid", "p1"), nil)
	c.ok("PUT", "/pools", vals("poolid", "p1", "storage", "local-lvm"), nil)
	if r := c.do("PUT", "/pools", vals("poolid", "p1", "storage", "local-lvm")); r.Status != 500 ||
		r.Message != "update pools failed: Storage 'local-lvm' is already a pool member\n" {
		t.Errorf("storage added twice: %d %q", r.Status, r.Message)
	}
	var p struct {
		Members []map[string]any `json:"members"`
	}
	c.ok("GET", "/pools/p1", nil, &p)
	if len(p.Members) != 1 || p.Members[0]["type"] != "storage" || p.Members[0]["storage"] != "local-lvm" ||
		p.Members[0]["id"] != "storage/"+node+"/local-lvm" {
		t.Errorf("pool members: %v", p.Members)
	}
	c.ok("PUT", "/access/acl", vals("path", "/pool/p1", "roles", "PVEDatastoreUser", "users", "u@pve"), nil)
	want := map[string]map[string]int{"/storage/local-lvm": {"Datastore.AllocateSpace": 0, "Datastore.Audit": 0}}
	if got := permsOf(t, c, "userid", "u@pve", "path", "/storage/local-lvm"); !reflect.DeepEqual(got, want) {
		t.Errorf("pool role on its storage: want %v, got %v", want, got)
	}
	if got := permsOf(t, c, "userid", "u@pve"); !reflect.DeepEqual(got["/storage/local-lvm"], want["/storage/local-lvm"]) {
		t.Errorf("the dump lists a pool's storage: %v", got)
	}
	if r := c.do("DELETE", "/pools/p1", nil); r.Status != 500 ||
		r.Message != "delete pool failed: pool 'p1' is not empty (contains storage 'local-lvm')\n" {
		t.Errorf("delete a pool holding a storage: %d %q", r.Status, r.Message)
	}
	c.ok("PUT", "/pools", vals("poolid", "p1", "storage", "local-lvm", "delete", "1"), nil)
	if got := permsOf(t, c, "userid", "u@pve", "path", "/storage/local-lvm"); len(got["/storage/local-lvm"]) != 0 {
		t.Errorf("a removed storage keeps the pool's roles: %v", got)
	}
	if r := c.do("PUT", "/pools", vals("poolid", "p1", "storage", "local-lvm", "delete", "1")); r.Status != 500 ||
		r.Message != "update pools failed: Storage 'local-lvm' is not a pool member\n" {
		t.Errorf("remove a non-member: %d %q", r.Status, r.Message)
	}
}

// API2/AccessControl.pm permissions and RPCEnvironment.pm get_effective_permissions/permissions.
func TestPermissionsDump(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.ok("POST", "/access/users", vals("userid", "u@pve"), nil)
	c.ok("POST", "/access/users/u@pve/token/tk", vals("privsep", "0"), nil)
	c.ok("POST", "/pools", vals("poolid", "p1"), nil)
	c.ok("PUT", "/pools", vals("poolid", "p1", "vms", "9000"), nil)
	c.ok("PUT", "/access/acl", vals("path", "/vms/9000", "roles", "PVEVMUser", "users", "u@pve", "propagate", "0"), nil)
	c.ok("PUT", "/access/acl", vals("path", "/pool/p1", "roles", "PVETemplateUser", "users", "u@pve"), nil)
	c.ok("PUT", "/access/acl", vals("path", "/nodes", "roles", "PVEAuditor", "users", "u@pve"), nil)
	got := permsOf(t, c, "userid", "u@pve")
	vm := got["/vms/9000"]
	// propagate: the ACL's 0, and 0 for a pool-derived one
	if vm["VM.Console"] != 0 || vm["VM.Clone"] != 0 || len(vm) == 0 {
		t.Errorf("propagate flags on /vms/9000: %v", vm)
	}
	if got["/pool/p1"]["VM.Clone"] != 1 || got["/nodes"]["Sys.Audit"] != 1 {
		t.Errorf("propagating roles: %v", got)
	}
	// the fixed paths: Sys.Audit from /nodes is not on them, so root's dump shows them
	root := permsOf(t, c)
	for _, p := range []string{"/", "/access", "/access/groups", "/nodes", "/pool", "/sdn", "/storage", "/vms"} {
		if len(root[p]) == 0 || root[p]["Sys.Audit"] != 1 {
			t.Errorf("root's dump lacks the fixed path %s: %v", p, root[p])
		}
	}
	if got := permsOf(t, c, "userid", "u@pve", "path", "/sdn"); !reflect.DeepEqual(got, map[string]map[string]int{"/sdn": {}}) {
		t.Errorf("a path with no privileges: want {/sdn: {}}, got %v", got)
	}
	if got := permsOf(t, c, "userid", "u@pve!nope", "path", "/nodes"); !reflect.DeepEqual(got, map[string]map[string]int{"/nodes": {}}) {
		t.Errorf("a token that does not exist: want nothing, got %v", got)
	}
	if got := permsOf(t, c, "userid", "u@pve!nope"); len(got) != 0 {
		t.Errorf("a token that does not exist: want an empty dump, got %v", got)
	}
	if got := permsOf(t, c, "userid", "u@pve!tk", "path", "/nodes"); got["/nodes"]["Sys.Audit"] != 1 {
		t.Errorf("a privsep=0 token has its user's privileges: %v", got)
	}
}

// API2/AccessControl.pm create_ticket: a user's password gives a ticket; every failure is the
// same 401; a write with the ticket needs its CSRFPreventionToken; tokens cannot log in.
func TestTicketLogin(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.ok("POST", "/access/users", vals("userid", "u@pve", "password", "s3cret-pw"), nil)
	c.ok("POST", "/access/users", vals("userid", "nopw@pve"), nil)
	c.ok("POST", "/access/users", vals("userid", "off@pve", "password", "s3cret-pw", "enable", "0"), nil)
	anon := anonClient(t, s)
	for _, tc := range [][]string{
		{"username", "u@pve", "password", "wrong-pw"},
		{"username", "ghost@pve", "password", "s3cret-pw"},
		{"username", "nopw@pve", "password", "anything"},
		{"username", "off@pve", "password", "s3cret-pw"},
	} {
		if r := anon.do("POST", "/access/ticket", vals(tc...)); r.Status != 401 || r.Reason != "authentication failure" {
			t.Errorf("login %v: want 401 authentication failure, got %d %q", tc, r.Status, r.Reason)
		}
	}
	if r := c.do("POST", "/access/ticket", vals("username", "u@pve", "password", "s3cret-pw")); r.Status != 403 {
		t.Errorf("a token asks for a ticket: want 403, got %d %q", r.Status, r.Message)
	}
	r := anon.do("POST", "/access/ticket", vals("username", "u", "realm", "pve", "password", "s3cret-pw"))
	var tk map[string]any
	if err := json.Unmarshal(r.Data, &tk); r.Status != 200 || err != nil || tk["username"] != "u@pve" || tk["cap"] == nil {
		t.Fatalf("login with realm: %d %s", r.Status, r.Data)
	}
	user := ticketClient(t, s, "u@pve", "s3cret-pw")
	if got := permsOf(t, user); len(got) != 0 {
		t.Errorf("a user without ACLs: %v", got)
	}
	c.ok("PUT", "/access/acl", vals("path", "/pool", "roles", "PVEPoolAdmin", "users", "u@pve"), nil)
	user.ok("POST", "/pools", vals("poolid", "mine"), nil)
	noCSRF := *user
	noCSRF.csrf = "bogus"
	if r := noCSRF.do("POST", "/pools", vals("poolid", "other")); r.Status != 401 || r.Reason != "Permission denied - invalid csrf token" {
		t.Errorf("write without the CSRF token: %d %q", r.Status, r.Reason)
	}
	forged := *user
	forged.ticket = "PVE:root@pam:00000000::forged"
	if r := forged.do("GET", "/access/permissions", nil); r.Status != 401 {
		t.Errorf("forged ticket: %d", r.Status)
	}
}
