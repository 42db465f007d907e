package access

// BuiltinRoleNeeds is what the grants of desired name of PVE's built-in roles: each role, and the
// privileges in it the tenant's automation uses (each grant's NeededBy says which call). PVE
// defines these roles (pve-access-control's AccessControl.pm); a release that renamed one, or
// dropped a privilege from it, would leave a tenant's token without that call. The preflight
// (internal/preflight) compares them with GET /access/roles on the user's cluster.
var BuiltinRoleNeeds = map[string][]string{
	"PVEPoolUser":      {"Pool.Audit"},
	"PVESDNUser":       {"SDN.Audit", "SDN.Use"},
	"PVETemplateUser":  {"VM.Audit", "VM.Clone"},
	"PVEDatastoreUser": {"Datastore.AllocateSpace"},
}
