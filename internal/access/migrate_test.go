package access

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
)

// A tenant onboarded before ADR-0013 holds PVEVMAdmin on its pool and SDN.Use on the site bridge
// vmbr0 (the template's NIC was there). Its next onboarding run, once the template has no NIC,
// revokes exactly those, grants the custom role in place of PVEVMAdmin, and touches nothing else:
// the pool, the user, the token (its secret still works) and every other ACL entry stay.
func TestOldGrantsConvergeToTheNewOnes(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()
	res := run(t, srv, map[string]any{"name": "tdemo", "index": 1})
	secret, _ := res["token_secret"].(string)
	if res["failed"] == true || secret == "" {
		t.Fatalf("onboard: %v", res["msg"])
	}
	// The state the previous release left: no custom role, PVEVMAdmin on the pool, PVESDNUser
	// on vmbr0, each for the user and the token.
	root := rootClient(t, srv)
	const user, token = "tenant-tdemo@pve", "tenant-tdemo@pve!iac"
	for _, who := range [][2]string{{"users", user}, {"tokens", token}} {
		for _, g := range []map[string]any{
			{"path": "/pool/tenant-tdemo", "roles": TenantRole, "delete": 1},
			{"path": "/pool/tenant-tdemo", "roles": "PVEVMAdmin", "propagate": 1},
			{"path": "/sdn/zones/localnetwork/vmbr0", "roles": "PVESDNUser", "propagate": 0},
		} {
			g[who[0]] = who[1]
			if err := root.Put(ctx, "/access/acl", g, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := root.Delete(ctx, "/access/roles/"+TenantRole, nil, nil); err != nil {
		t.Fatal(err)
	}
	before := aclOf(t, srv)

	res = run(t, srv, map[string]any{"name": "tdemo", "index": 1, "_ansible_diff": true})
	if res["failed"] == true || res["changed"] != true || res["token_secret"] != nil {
		t.Fatalf("converging run: %v", res)
	}
	want := []string{
		"create role " + TenantRole + " (" + strings.Join(tenantRole().Privs, ",") + ")",
		"grant " + TenantRole + " on /pool/tenant-tdemo to " + user + " (propagate=1)",
		"revoke PVEVMAdmin on /pool/tenant-tdemo from " + user,
		"revoke PVESDNUser on /sdn/zones/localnetwork/vmbr0 from " + user,
		"grant " + TenantRole + " on /pool/tenant-tdemo to " + token + " (propagate=1)",
		"revoke PVEVMAdmin on /pool/tenant-tdemo from " + token,
		"revoke PVESDNUser on /sdn/zones/localnetwork/vmbr0 from " + token,
	}
	if got := toStrings(res["changes"]); !slices.Equal(got, want) {
		t.Fatalf("changes:\n got %q\nwant %q", got, want)
	}
	after := aclOf(t, srv)
	var removed, added []string
	for _, e := range before {
		if !slices.Contains(after, e) {
			removed = append(removed, e)
		}
	}
	for _, e := range after {
		if !slices.Contains(before, e) {
			added = append(added, e)
		}
	}
	wantRemoved := []string{
		"token " + token + " /pool/tenant-tdemo PVEVMAdmin 1", "token " + token + " /sdn/zones/localnetwork/vmbr0 PVESDNUser 0",
		"user " + user + " /pool/tenant-tdemo PVEVMAdmin 1", "user " + user + " /sdn/zones/localnetwork/vmbr0 PVESDNUser 0",
	}
	wantAdded := []string{"token " + token + " /pool/tenant-tdemo " + TenantRole + " 1", "user " + user + " /pool/tenant-tdemo " + TenantRole + " 1"}
	if !slices.Equal(removed, wantRemoved) || !slices.Equal(added, wantAdded) {
		t.Fatalf("ACL entries removed %q (want %q), added %q (want %q)", removed, wantRemoved, added, wantAdded)
	}
	// The token was not recreated: the attachment's secret still authenticates.
	var me []map[string]any
	if err := tenantClient(t, srv, user, secret).Get(ctx, "/pools", nil, &me); err != nil {
		t.Fatalf("the tenant's token after the migration: %v", err)
	}
	if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1}); res["changed"] != false {
		t.Fatalf("the run after: %v", res["changes"])
	}
}

// aclOf is every ACL entry as "type ugid path role propagate", sorted.
func aclOf(t *testing.T, srv *pvesim.Server) []string {
	t.Helper()
	var out []string
	for _, e := range acl(t, srv) {
		out = append(out, fmt.Sprintf("%s %s %s %s %d", e.Type, e.UGID, e.Path, e.Role, e.Propagate))
	}
	slices.Sort(out)
	return out
}
