package pvesim

import (
	"strings"
	"testing"
)

// A tenant's token cannot manage tokens, users or ACLs beyond what PVE lets it: a token is never
// its user ("userid-param self" compares the authenticated id, user@realm!tokenid), and a caller
// without Permissions.Modify hands out only roles it holds itself.
func TestConformanceTokenUserACL(t *testing.T) {
	s := startSim(t)
	a := onboard(t, s, "tdemo", 1, "tdemov0", "10001")
	if _, exit := a.tenant.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10101", "name", "tdemo-1", "pool", a.pool)); exit != "OK" {
		t.Fatalf("tenant clone: %s", exit)
	}
	users := "/access/users/" + a.user
	plain := "Permission check failed\n"
	poolPerm := "Permission check failed (/pool/" + a.pool + ", Permissions.Modify|Pool.Allocate)\n"
	expect(t, a.tenant, []refusal{
		{name: "mint a second token for its user", source: "User.pm:759 generate_token; RPCEnvironment.pm:529",
			method: "POST", path: users + "/token/second", status: 403, msg: plain},
		{name: "mint a privsep=0 token", source: "User.pm:759 generate_token",
			method: "POST", path: users + "/token/full", params: []string{"privsep", "0"}, status: 403, msg: plain},
		{name: "list its user's tokens", source: "User.pm:690 token_index",
			method: "GET", path: users + "/token", status: 403, msg: plain},
		{name: "drop its own privilege separation", source: "User.pm:839 update_token_info",
			method: "PUT", path: users + "/token/iac", params: []string{"privsep", "0"}, status: 403, msg: plain},
		{name: "delete its own token", source: "User.pm:942 remove_token",
			method: "DELETE", path: users + "/token/iac", status: 403, msg: plain},
		{name: "read its user", source: "User.pm:376 read_user; RPCEnvironment.pm:517",
			method: "GET", path: users, status: 403, msg: plain},
		{name: "change its user", source: "User.pm:429 update_user; RPCEnvironment.pm:507",
			method: "PUT", path: users, params: []string{"comment", "x"}, status: 403,
			msg: "Permission check failed (/access/groups, User.Modify)\n"},
		{name: "put its user in a group", source: "User.pm:429 update_user; RPCEnvironment.pm:510",
			method: "PUT", path: users, params: []string{"groups", "admins"}, status: 403,
			msg: "Permission check failed (/access/groups/admins, User.Modify)\n"},
		{name: "create a user", source: "User.pm:292 create_user; RPCEnvironment.pm:532",
			method: "POST", path: "/access/users", params: []string{"userid", "evil@pve"}, status: 403,
			msg: "Permission check failed (/access/realm/pve, Realm.AllocateUser)\n"},
		{name: "delete its user", source: "User.pm:508 delete_user; RPCEnvironment.pm:532",
			method: "DELETE", path: users, status: 403, msg: "Permission check failed (/access/realm/pve, Realm.AllocateUser)\n"},
		{name: "widen its pool grant", source: "ACL.pm:113 update_acl; RPCEnvironment.pm:442 check_perm_modify",
			method: "PUT", path: "/access/acl", params: []string{"path", "/pool/" + a.pool, "roles", "PVEAdmin", "tokens", a.token}, status: 403, msg: poolPerm},
		{name: "remove its own pool grant", source: "ACL.pm:113 update_acl; RPCEnvironment.pm:442 check_perm_modify",
			method: "PUT", path: "/access/acl", params: []string{"path", "/pool/" + a.pool, "roles", "PVEVMAdmin", "tokens", a.token, "delete", "1"}, status: 403, msg: poolPerm},
		{name: "grant itself Sys.Modify on /", source: "RPCEnvironment.pm:445 check_perm_modify",
			method: "PUT", path: "/access/acl", params: []string{"path", "/", "roles", "Administrator", "users", a.user}, status: 403,
			msg: "Permission check failed (/, Permissions.Modify)\n"},
		{name: "a role beyond its own on its VM", source: "ACL.pm:196 update_acl",
			method: "PUT", path: "/access/acl", params: []string{"path", "/vms/10101", "roles", "PVEAdmin", "users", a.user, "propagate", "0"}, status: 500,
			msg: "ACL update failed: 400 Parameter verification failed.\nrole: Cannot add role 'PVEAdmin' - requires 'Permissions.Modify' or superset of privileges.\n"},
		{name: "a pool-derived role with propagation", source: "ACL.pm:204 update_acl",
			method: "PUT", path: "/access/acl", params: []string{"path", "/vms/10101", "roles", "PVEVMAdmin", "users", a.user}, status: 500,
			msg: "ACL update failed: 400 Parameter verification failed.\nrole: Cannot add role 'PVEVMAdmin' with propagation - requires 'Permissions.Modify' or propagated superset of privileges.\n"},
		{name: "NoAccess on its VM", source: "ACL.pm:216 update_acl",
			method: "PUT", path: "/access/acl", params: []string{"path", "/vms/10101", "roles", "NoAccess", "users", a.user, "propagate", "0"}, status: 500,
			msg: "ACL update failed: 400 Parameter verification failed.\nrole: Cannot add role 'NoAccess' - requires 'Permissions.Modify'\n"},
		{name: "no principal", source: "ACL.pm:155 update_acl",
			method: "PUT", path: "/access/acl", params: []string{"path", "/vms/10101", "roles", "PVEVMUser"}, status: 400,
			errors: map[string]string{"tokens": "either 'users', 'groups' or 'tokens' is required."}},
	})
	// The tenant's role on its pool is DeevnetTenantVM (ADR-0013), without PVEVMUser's VM.Console,
	// VM.Backup and VM.GuestAgent.*: PVEVMUser is not a subset of what it holds (ACL.pm:196).
	expect(t, a.tenant, []refusal{{name: "a role with privileges it lacks", source: "ACL.pm:196 update_acl",
		method: "PUT", path: "/access/acl", params: []string{"path", "/vms/10101", "roles", "PVEVMUser", "users", a.user, "propagate", "0"}, status: 500,
		msg: "ACL update failed: 400 Parameter verification failed.\nrole: Cannot add role 'PVEVMUser' - requires 'Permissions.Modify' or superset of privileges.\n"}})
	// What PVE does allow: VM.Allocate on its VM (from the pool) lets the token hand out, without
	// propagation, a role whose privileges it holds there (ACL.pm:189): its own.
	a.tenant.ok("PUT", "/access/acl", vals("path", "/vms/10101", "roles", "DeevnetTenantVM", "users", a.user, "propagate", "0"), nil)
	// It lists the ACL entries of the paths it may modify, its VM's, and no other (ACL.pm:74-85).
	var acl []map[string]any
	a.tenant.ok("GET", "/access/acl", nil, &acl)
	if len(acl) != 1 || acl[0]["path"] != "/vms/10101" || acl[0]["roleid"] != "DeevnetTenantVM" {
		t.Fatalf("the ACL the token sees: %v", acl)
	}

	// The tokens are unchanged, and the root token (User.Modify on /access/groups) still manages them.
	var toks []map[string]any
	a.root.ok("GET", users+"/token", nil, &toks)
	if len(toks) != 1 || toks[0]["tokenid"] != "iac" || toks[0]["privsep"] != float64(1) {
		t.Fatalf("tokens after the refusals: %v", toks)
	}
	expect(t, a.root, []refusal{{name: "an existing token id", source: "User.pm:801 generate_token",
		method: "POST", path: users + "/token/iac", status: 400, errors: map[string]string{"tokenid": "Token already exists."}}})
	if r := a.root.do("GET", "/access/users/nobody@pve/token", nil); r.Status != 403 || !strings.HasPrefix(r.Message, "Permission check failed") {
		t.Fatalf("a missing user's tokens, below an 'or': %d %q", r.Status, r.Message)
	}
}
