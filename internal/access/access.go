// Package access converges a tenant's PVE access objects (pool, user, API token, ACLs) from
// its name and index: what the pve_tenant_access module does at onboarding.
package access

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/reconcile"
)

// Grant is one ACL entry the tenant's user and token both hold (privsep: the token gets the
// intersection of both, so granting only one of them gives a 403).
type Grant struct {
	Path      string `json:"path"`
	Role      string `json:"role"`
	Propagate bool   `json:"propagate"`
	// NeededBy is the call of the tenant's automation that needs the grant, and Refusal what
	// that call answers without it ({x} stands for any one path part): ADR-0013's table, and
	// what the least-privilege test wants.
	Refusal  string `json:"-"`
	NeededBy string `json:"-"`
}

func (g Grant) key() string { return g.Path + "\x00" + g.Role }

// Desired is everything the module owns for one tenant.
type Desired struct {
	Pool, PoolComment string
	User, UserComment string
	TokenID           string // short id ("iac"); full id is User+"!"+TokenID
	Privsep           bool
	Roles             []Role // custom roles the grants name, created before them
	Grants            []Grant
	// StorageID and ThinPool are the tenant's storage ids (ADR-0002); Storage is set when
	// onboarding registers it (ADR-0014), else the storage is left as it is.
	StorageID, ThinPool string
	Storage             *storageWant
}

// FullTokenID is the token principal as PVE names it in ACLs and auth headers.
func (d Desired) FullTokenID() string { return d.User + "!" + d.TokenID }

// Observed is what PVE holds now.
type Observed struct {
	PoolExists   bool
	PoolComment  string
	PoolMembers  []string
	UserExists   bool
	UserComment  string
	TokenExists  bool
	TokenPrivsep bool
	UserACL      map[string]Grant // by Grant.key()
	TokenACL     map[string]Grant
	Roles        map[string][]string // every role's privileges, sorted
	Storage      storageObserved     // the tenant's own storage
}

// desired derives the access objects from the plan (ADR-0002) and the shared clone sources.
func desired(t plan.Tenant, index, template int, storages, bridges []string, privsep bool) Desired {
	comment := fmt.Sprintf("deevnet.tenant %s (index %d)", t.Name, index)
	pool, vms := "/pool/"+t.Pool, fmt.Sprintf("/vms/%d", template)
	clone := fmt.Sprintf("POST /nodes/{node}/qemu/%d/clone: PVE API 403: Permission check failed", template)
	g := []Grant{
		{Path: pool, Role: TenantRole, Propagate: true, Refusal: clone,
			NeededBy: "tenant_vm: clone into the pool, configure, start, stop and destroy its VMs (each privilege: TenantPrivs)"},
		{Path: pool, Role: "PVEPoolUser", Propagate: true, Refusal: "GET /pools/" + t.Pool + ": PVE API 403: Permission check failed (" + pool + ", Pool.Audit)",
			NeededBy: "tenant_vm: check that its pool exists (GET /pools/" + t.Pool + ")"},
		{Path: "/sdn/zones/" + t.Zone, Role: "PVESDNUser", Propagate: true,
			Refusal:  "GET /cluster/sdn/vnets/{vnet}: PVE API 403: Permission check failed (/sdn/zones/" + t.Zone + "/{vnet}, SDN.Audit|SDN.Allocate)",
			NeededBy: "tenant_vm: read its VNet (SDN.Audit, GET /cluster/sdn/vnets/{vnet}) and put net0 on it (SDN.Use)"},
		{Path: vms, Role: "PVETemplateUser", Propagate: false, Refusal: fmt.Sprintf("template %d does not exist (or the token lacks VM.Audit on %s)", template, vms),
			NeededBy: fmt.Sprintf("tenant_vm: see the template (VM.Audit, GET /cluster/resources) and clone it (VM.Clone, POST /nodes/{node}/qemu/%d/clone)", template)},
	}
	for _, s := range storages {
		g = append(g, Grant{Path: "/storage/" + s, Role: "PVEDatastoreUser", Propagate: false,
			Refusal:  clone + " (/storage/" + s + ", Datastore.AllocateSpace)",
			NeededBy: "tenant_vm: the clone's disks on " + s + " (Datastore.AllocateSpace)"})
	}
	for _, b := range bridges {
		// Cloning checks SDN.Use on the template NIC's bridge, a plain bridge maps to localnetwork;
		// CheckPresent has made sure the bridge connects nothing (ADR-0013).
		p := "/sdn/zones/localnetwork/" + b
		g = append(g, Grant{Path: p, Role: "PVESDNUser", Propagate: false, Refusal: clone + " (" + p + ", SDN.Use)",
			NeededBy: "tenant_vm: clone a template whose NIC is on " + b})
	}
	sortGrants(g)
	return Desired{
		StorageID: t.Storage, ThinPool: t.ThinPool,
		Pool: t.Pool, PoolComment: comment,
		User: t.User, UserComment: comment,
		TokenID: t.TokenID, Privsep: privsep,
		Roles: []Role{tenantRole()}, Grants: g,
	}
}

func sortGrants(g []Grant) {
	sort.Slice(g, func(i, j int) bool { return g[i].key() < g[j].key() })
}

// Access reads and writes one tenant's access objects through the shared PVE client.
type Access struct {
	C *pve.Client
}

// Observe reads the pool, user, token and every ACL entry of the user and of the token.
func (a Access) Observe(ctx context.Context, d Desired) (Observed, error) {
	o := Observed{UserACL: map[string]Grant{}, TokenACL: map[string]Grant{}}

	var pool struct {
		Comment string `json:"comment"`
		Members []struct {
			ID string `json:"id"`
		} `json:"members"`
	}
	err := a.C.Get(ctx, "/pools/"+url.PathEscape(d.Pool), nil, &pool)
	switch {
	case err == nil:
		o.PoolExists, o.PoolComment = true, pool.Comment
		for _, m := range pool.Members {
			o.PoolMembers = append(o.PoolMembers, m.ID)
		}
	case !notFound(err):
		return o, fmt.Errorf("read pool %s: %w", d.Pool, err)
	}

	var user struct {
		Comment string `json:"comment"`
	}
	err = a.C.Get(ctx, "/access/users/"+url.PathEscape(d.User), nil, &user)
	switch {
	case err == nil:
		o.UserExists, o.UserComment = true, user.Comment
	case !notFound(err):
		return o, fmt.Errorf("read user %s: %w", d.User, err)
	}

	if o.UserExists {
		var tok struct {
			Privsep *flexBool `json:"privsep"`
		}
		err = a.C.Get(ctx, "/access/users/"+url.PathEscape(d.User)+"/token/"+url.PathEscape(d.TokenID), nil, &tok)
		switch {
		case err == nil:
			// PVE's default is privsep=1 when the field is absent.
			o.TokenExists, o.TokenPrivsep = true, tok.Privsep == nil || bool(*tok.Privsep)
		case !notFound(err):
			return o, fmt.Errorf("read token %s: %w", d.FullTokenID(), err)
		}
	}

	if o.Roles, err = a.readRoles(ctx); err != nil {
		return o, err
	}
	if d.StorageID != "" {
		if o.Storage, err = a.readStorage(ctx, d.StorageID); err != nil {
			return o, err
		}
	}

	var acl []struct {
		Path      string    `json:"path"`
		Propagate *flexBool `json:"propagate"`
		RoleID    string    `json:"roleid"`
		Type      string    `json:"type"`
		UGID      string    `json:"ugid"`
	}
	if err := a.C.Get(ctx, "/access/acl", nil, &acl); err != nil {
		return o, fmt.Errorf("read ACLs: %w", err)
	}
	for _, e := range acl {
		g := Grant{Path: e.Path, Role: e.RoleID, Propagate: e.Propagate == nil || bool(*e.Propagate)}
		switch {
		case e.Type == "user" && e.UGID == d.User:
			o.UserACL[g.key()] = g
		case e.Type == "token" && e.UGID == d.FullTokenID():
			o.TokenACL[g.key()] = g
		}
	}
	return o, nil
}

// notFound reports PVE's "does not exist" (a 500, or 404 on some paths).
func notFound(err error) bool {
	var ae *pve.APIError
	return errors.As(err, &ae) && (ae.IsNotFound() || ae.Contains("no such"))
}

// Op is one API write. Describe never contains a secret.
type Op struct {
	Describe string
	Method   string
	Path     string
	Body     map[string]any
	Query    url.Values
	// Token marks the token creation, whose answer carries the secret.
	Token bool
}

// PlanPresent lists the writes that bring o to d, in dependency order: pool and user before the
// token, principals before their ACLs.
func PlanPresent(d Desired, o Observed, regenerate bool) []Op {
	var ops []Op
	if d.Storage != nil { // the storage before the grant on it
		ops = storageOps(*d.Storage, o.Storage)
	}
	ops = append(ops, roleOps(d.Roles, o.Roles)...)
	if !o.PoolExists {
		ops = append(ops, Op{Describe: "create pool " + d.Pool, Method: "POST", Path: "/pools",
			Body: map[string]any{"poolid": d.Pool, "comment": d.PoolComment}})
	} else if o.PoolComment != d.PoolComment {
		ops = append(ops, Op{Describe: "update pool " + d.Pool + " comment", Method: "PUT", Path: "/pools",
			Body: map[string]any{"poolid": d.Pool, "comment": d.PoolComment}})
	}
	if !o.UserExists {
		ops = append(ops, Op{Describe: "create user " + d.User, Method: "POST", Path: "/access/users",
			Body: map[string]any{"userid": d.User, "comment": d.UserComment}})
	} else if o.UserComment != d.UserComment {
		ops = append(ops, Op{Describe: "update user " + d.User + " comment", Method: "PUT",
			Path: "/access/users/" + url.PathEscape(d.User), Body: map[string]any{"comment": d.UserComment}})
	}
	tokPath := "/access/users/" + url.PathEscape(d.User) + "/token/" + url.PathEscape(d.TokenID)
	create := Op{Describe: "create token " + d.FullTokenID(), Method: "POST", Path: tokPath, Token: true,
		Body: map[string]any{"privsep": reconcile.BoolInt(d.Privsep), "comment": d.UserComment}}
	switch {
	case !o.TokenExists:
		ops = append(ops, create)
	case regenerate:
		// A token's secret cannot be read back: rotating it is delete + create.
		ops = append(ops, Op{Describe: "delete token " + d.FullTokenID() + " (regenerate)", Method: "DELETE", Path: tokPath}, create)
	case o.TokenPrivsep != d.Privsep:
		ops = append(ops, Op{Describe: fmt.Sprintf("set privsep=%d on token %s", reconcile.BoolInt(d.Privsep), d.FullTokenID()),
			Method: "PUT", Path: tokPath, Body: map[string]any{"privsep": reconcile.BoolInt(d.Privsep)}})
	}
	// A regenerated token starts without ACLs (PVE drops them with the token).
	tokenACL := o.TokenACL
	if regenerate || !o.TokenExists {
		tokenACL = map[string]Grant{}
	}
	ops = append(ops, aclOps(d.Grants, o.UserACL, "users", d.User)...)
	ops = append(ops, aclOps(d.Grants, tokenACL, "tokens", d.FullTokenID())...)
	return ops
}

// aclOps grants what is missing (or has the wrong propagate flag) and revokes what the principal
// holds beyond the desired set: the module owns these principals whole.
func aclOps(want []Grant, have map[string]Grant, kind, principal string) []Op {
	var ops []Op
	wantKeys := map[string]bool{}
	for _, g := range want {
		wantKeys[g.key()] = true
		if h, ok := have[g.key()]; ok && h.Propagate == g.Propagate {
			continue
		}
		ops = append(ops, Op{
			Describe: fmt.Sprintf("grant %s on %s to %s (propagate=%d)", g.Role, g.Path, principal, reconcile.BoolInt(g.Propagate)),
			Method:   "PUT", Path: "/access/acl",
			Body: map[string]any{"path": g.Path, "roles": g.Role, kind: principal, "propagate": reconcile.BoolInt(g.Propagate)},
		})
	}
	var extra []Grant
	for k, g := range have {
		if !wantKeys[k] {
			extra = append(extra, g)
		}
	}
	sortGrants(extra)
	for _, g := range extra {
		ops = append(ops, revoke(g, kind, principal))
	}
	return ops
}

func revoke(g Grant, kind, principal string) Op {
	return Op{
		Describe: fmt.Sprintf("revoke %s on %s from %s", g.Role, g.Path, principal),
		Method:   "PUT", Path: "/access/acl",
		Body: map[string]any{"path": g.Path, "roles": g.Role, kind: principal, "delete": 1},
	}
}

// PlanAbsent removes the ACLs, the token, the user and the pool, in that order. A pool that
// still holds VMs is an error: deleting the tenant's access before its VMs would orphan them.
func PlanAbsent(d Desired, o Observed) ([]Op, error) {
	if o.PoolExists && len(o.PoolMembers) > 0 {
		return nil, fmt.Errorf("pool %s still has members (%s): remove them first (deevnet.tenant.tenant_vm state=absent)",
			d.Pool, strings.Join(o.PoolMembers, ", "))
	}
	var ops []Op
	for _, g := range sortedGrants(o.TokenACL) {
		ops = append(ops, revoke(g, "tokens", d.FullTokenID()))
	}
	for _, g := range sortedGrants(o.UserACL) {
		ops = append(ops, revoke(g, "users", d.User))
	}
	if o.TokenExists {
		ops = append(ops, Op{Describe: "delete token " + d.FullTokenID(), Method: "DELETE",
			Path: "/access/users/" + url.PathEscape(d.User) + "/token/" + url.PathEscape(d.TokenID)})
	}
	if o.UserExists {
		ops = append(ops, Op{Describe: "delete user " + d.User, Method: "DELETE", Path: "/access/users/" + url.PathEscape(d.User)})
	}
	if o.Storage.ours(d.StorageID, d.ThinPool) {
		// the registration only: the thin pool and any volume left in it stay on the nodes
		ops = append(ops, Op{Describe: "delete storage " + d.StorageID, Method: "DELETE", Path: "/storage/" + url.PathEscape(d.StorageID)})
	}
	if o.PoolExists {
		ops = append(ops, Op{Describe: "delete pool " + d.Pool, Method: "DELETE", Path: "/pools",
			Query: url.Values{"poolid": {d.Pool}}})
	}
	return ops, nil
}

// sortedGrants returns the grants of an ACL map in the order plans and diffs show them.
func sortedGrants(m map[string]Grant) []Grant {
	return reconcile.SortedValues(m, func(a, b Grant) int { return strings.Compare(a.key(), b.key()) })
}

// Apply runs the writes in order and returns the new token's secret if one was created.
func (a Access) Apply(ctx context.Context, ops []Op) (secret string, done int, err error) {
	for _, op := range ops {
		switch op.Method {
		case "POST":
			if op.Token {
				var out struct {
					Value string `json:"value"`
				}
				if err := a.C.Post(ctx, op.Path, op.Body, &out); err != nil {
					return secret, done, fmt.Errorf("%s: %w", op.Describe, err)
				}
				secret = out.Value
			} else if err := a.C.Post(ctx, op.Path, op.Body, nil); err != nil {
				return secret, done, fmt.Errorf("%s: %w", op.Describe, err)
			}
		case "PUT":
			if err := a.C.Put(ctx, op.Path, op.Body, nil); err != nil {
				return secret, done, fmt.Errorf("%s: %w", op.Describe, err)
			}
		case "DELETE":
			if err := a.C.Delete(ctx, op.Path, op.Query, nil); err != nil {
				return secret, done, fmt.Errorf("%s: %w", op.Describe, err)
			}
		default:
			return secret, done, fmt.Errorf("%s: unknown method %s", op.Describe, op.Method)
		}
		done++
	}
	return secret, done, nil
}

// view is the diff/return shape of the access objects: names, flags and grants, never a secret;
// want is the desired state (o still gives the storage the module leaves as it is).
func view(d Desired, o *Observed, want bool) map[string]any {
	if want {
		v := map[string]any{
			"pool":  map[string]any{"id": d.Pool, "comment": d.PoolComment},
			"user":  map[string]any{"id": d.User, "comment": d.UserComment},
			"token": map[string]any{"id": d.FullTokenID(), "privsep": d.Privsep},
			"acl":   grantsView(d.Grants, d.Grants),
			"roles": d.Roles,
		}
		if d.Storage != nil {
			w := d.Storage.spec()
			delete(w, "storage")
			v["storage"] = w
		} else if sv := storageView(o.Storage); sv != nil {
			v["storage"] = sv
		}
		return v
	}
	v := map[string]any{}
	if sv := storageView(o.Storage); sv != nil {
		v["storage"] = sv
	}
	var roles []Role
	for _, r := range d.Roles {
		if privs, ok := o.Roles[r.ID]; ok {
			roles = append(roles, Role{ID: r.ID, Privs: privs})
		}
	}
	v["roles"] = roles
	if o.PoolExists {
		v["pool"] = map[string]any{"id": d.Pool, "comment": o.PoolComment}
	}
	if o.UserExists {
		v["user"] = map[string]any{"id": d.User, "comment": o.UserComment}
	}
	if o.TokenExists {
		v["token"] = map[string]any{"id": d.FullTokenID(), "privsep": o.TokenPrivsep}
	}
	v["acl"] = map[string]any{"user": sortedGrants(o.UserACL), "token": sortedGrants(o.TokenACL)}
	return v
}

func grantsView(user, token []Grant) map[string]any {
	return map[string]any{"user": user, "token": token}
}

// flexBool reads PVE's booleans, which arrive as 0/1, true/false or "0"/"1".
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch strings.Trim(string(data), `"`) {
	case "1", "true":
		*b = true
	case "0", "false", "null", "":
		*b = false
	default:
		return fmt.Errorf("not a boolean: %s", data)
	}
	return nil
}
