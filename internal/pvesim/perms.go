package pvesim

import (
	"fmt"
	"github.com/deevnet/tenant/internal/pveschema"
	"maps"
	"regexp"
	"slices"
	"strings"
)

func builtinRoles() map[string][]string {
	vmUser := []string{"VM.Config.CDROM", "VM.Config.Cloudinit", "VM.Console", "VM.Backup",
		"VM.GuestAgent.FileRead", "VM.GuestAgent.FileWrite", "VM.GuestAgent.FileSystemMgmt", "VM.GuestAgent.Audit",
		"VM.PowerMgmt", "VM.Audit"}
	vmAdmin := append([]string{"VM.Allocate", "VM.Clone", "VM.Config.Disk", "VM.Config.CPU", "VM.Config.Memory",
		"VM.Config.Network", "VM.Config.HWType", "VM.Config.Options", "VM.Migrate", "VM.Replicate", "VM.Snapshot",
		"VM.Snapshot.Rollback", "VM.GuestAgent.Unrestricted"}, vmUser...)
	var pveAdmin []string
	excluded := []string{"Sys.PowerMgmt", "Sys.Modify", "Sys.Incoming", "Sys.AccessNetwork", "Realm.Allocate", "Permissions.Modify", "Mapping.Modify"}
	for _, p := range pveschema.Privileges {
		if !slices.Contains(excluded, p) {
			pveAdmin = append(pveAdmin, p)
		}
	}
	return map[string][]string{
		"Administrator":     append([]string(nil), pveschema.Privileges...),
		"NoAccess":          {},
		"PVEAdmin":          pveAdmin,
		"PVEAuditor":        {"VM.Audit", "VM.GuestAgent.Audit", "Sys.Audit", "Datastore.Audit", "SDN.Audit", "Pool.Audit", "Mapping.Audit"},
		"PVEVMAdmin":        vmAdmin,
		"PVEVMUser":         vmUser,
		"PVETemplateUser":   {"VM.Clone", "VM.Audit"},
		"PVESDNAdmin":       {"SDN.Allocate", "SDN.Audit", "SDN.Use"},
		"PVESDNUser":        {"SDN.Use", "SDN.Audit"},
		"PVEDatastoreAdmin": {"Datastore.Allocate", "Datastore.AllocateTemplate", "Datastore.AllocateSpace", "Datastore.Audit"},
		"PVEDatastoreUser":  {"Datastore.AllocateSpace", "Datastore.Audit"},
		"PVEPoolAdmin":      {"Pool.Allocate", "Pool.Audit"},
		"PVEPoolUser":       {"Pool.Audit"},
		"PVESysAdmin":       {"Sys.Console", "Sys.Syslog", "Sys.Audit"},
		"PVEUserAdmin":      {"User.Modify", "Group.Allocate", "Realm.AllocateUser"},
		"PVEMappingAdmin":   {"Mapping.Modify", "Mapping.Use", "Mapping.Audit"},
		"PVEMappingUser":    {"Mapping.Use", "Mapping.Audit"},
	}
}

// ACL is one access control entry. UGID is a user (user@realm), a token
// (user@realm!id) or a group (@name is not used: groups are in Type).
type ACL struct {
	Path      string `json:"path"`
	Type      string `json:"type"` // user, token, group
	UGID      string `json:"ugid"`
	Role      string `json:"roleid"`
	Propagate bool   `json:"propagate"`
}

// aclPathRe is the ACL paths PVE lets an ACL name (AccessControl.pm check_path).
var aclPathRe = regexp.MustCompile(`^(/|/access|/access/groups|/access/groups/[[:alnum:]._-]+|/access/realm|/access/realm/[[:alnum:]._-]+` +
	`|/nodes|/nodes/[[:alnum:]._-]+|/pool|/pool/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+){0,2}` +
	`|/sdn|/sdn/controllers|/sdn/controllers/[[:alnum:]_-]+|/sdn/dns|/sdn/dns/[[:alnum:]]+` +
	`|/sdn/fabrics|/sdn/fabrics/[[:alnum:]]+|/sdn/ipams|/sdn/ipams/[[:alnum:]]+` +
	`|/sdn/prefix-lists|/sdn/prefix-lists/[[:alnum:]]+|/sdn/route-maps|/sdn/route-maps/[[:alnum:]]+` +
	`|/sdn/zones|/sdn/zones/[[:alnum:]._-]+|/sdn/zones/[[:alnum:]._-]+/[[:alnum:]._-]+` +
	`|/sdn/zones/[[:alnum:]._-]+/[[:alnum:]._-]+/[1-9][0-9]{0,3}` +
	`|/storage|/storage/[[:alnum:]._-]+|/vms|/vms/[1-9][0-9]{2,}` +
	`|/mapping|/mapping/[[:alnum:]._-]+|/mapping/[[:alnum:]._-]+/[[:alnum:]._-]+)$`)

func validACLPath(p string) bool { return aclPathRe.MatchString(p) }

var slashesRe = regexp.MustCompile(`/+`)

// normalizeACLPath is AccessControl.pm normalize_path: runs of slashes become one, a trailing
// slash goes, a leading one is added; "" stays "" (PVE: undef, an invalid path).
func normalizeACLPath(p string) string {
	if p == "" {
		return ""
	}
	p = strings.TrimSuffix(slashesRe.ReplaceAllString(p, "/"), "/")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// principal is an authenticated identity.
type principal struct {
	User    string // user@realm
	TokenID string // token name, "" for a user
	Privsep bool
}

func (p principal) String() string {
	if p.TokenID != "" {
		return p.User + "!" + p.TokenID
	}
	return p.User
}

func (p principal) isRoot() bool { return p.User == "root@pam" && p.TokenID == "" }

// roleSet maps a role to whether it propagates.
type roleSet map[string]bool

// rolesFor walks from / to path and returns the effective roles of one ACL
// principal (token, or user with its groups): the deepest level with a
// matching entry wins; above the target only propagating entries count.
func (st *state) rolesFor(p principal, tokenOnly bool, path string) roleSet {
	levels := []string{"/"}
	cur := ""
	for _, seg := range splitPath(path) {
		cur += "/" + seg
		levels = append(levels, cur)
	}
	var groups []string
	if u := st.Users[p.User]; u != nil {
		groups = u.Groups
	}
	roles := roleSet{}
	for i, lvl := range levels {
		final := i == len(levels)-1
		tok, usr, grp := roleSet{}, roleSet{}, roleSet{}
		for _, a := range st.ACLs {
			if a.Path != lvl || (!final && !a.Propagate) {
				continue
			}
			switch {
			case a.Type == "token" && tokenOnly && a.UGID == p.String():
				tok[a.Role] = a.Propagate
			case a.Type == "user" && !tokenOnly && a.UGID == p.User:
				usr[a.Role] = a.Propagate
			case a.Type == "group" && !tokenOnly && slices.Contains(groups, a.UGID):
				grp[a.Role] = a.Propagate
			}
		}
		switch {
		case len(tok) > 0:
			roles = tok
		case len(usr) > 0:
			roles = usr
		case len(grp) > 0:
			roles = grp
		}
	}
	// Pool roles count for member VMs and storages, for roles the path's ACLs did not set, never
	// propagating; a NoAccess there is kept alone, and one from the pool replaces the rest
	// (RPCEnvironment.pm compile_acl_path).
	if _, ok := roles["NoAccess"]; !ok {
		pr := roleSet{}
		for _, pool := range st.poolsOfPath(path) {
			maps.Copy(pr, st.rolesFor(p, tokenOnly, "/pool/"+pool))
		}
		if _, no := pr["NoAccess"]; no {
			return roleSet{"NoAccess": false}
		}
		for r := range pr {
			if _, ok := roles[r]; !ok {
				roles[r] = false
			}
		}
	}
	if _, ok := roles["NoAccess"]; ok { // AccessControl.pm roles: NoAccess alone
		return roleSet{"NoAccess": roles["NoAccess"]}
	}
	return roles
}

// poolsOfPath is the pools path is a member of: a VM's one pool for /vms/<id>, every pool
// holding the storage for /storage/<id> (a storage may be in several).
func (st *state) poolsOfPath(path string) []string {
	if m := vmPathRe.FindStringSubmatch(path); m != nil {
		if vm := st.VMs[atoiSafe(m[1])]; vm != nil && vm.Pool != "" {
			return []string{vm.Pool}
		}
		return nil
	}
	var out []string
	if sid, ok := strings.CutPrefix(path, "/storage/"); ok && sid != "" {
		for _, id := range sortedKeys(st.Pools) {
			if slices.Contains(st.Pools[id].Storage, sid) {
				out = append(out, id)
			}
		}
	}
	return out
}

var vmPathRe = regexp.MustCompile(`^/vms/(\d+)$`)

// privsOfRoles is what the roles grant, each privilege mapped to its propagate flag: set when any
// role holding it propagates (RPCEnvironment.pm compile_acl_path).
func (st *state) privsOfRoles(rs roleSet) map[string]bool {
	out := map[string]bool{}
	if _, ok := rs["NoAccess"]; ok {
		return out
	}
	for r, prop := range rs {
		for _, pv := range st.Roles[r] {
			out[pv] = out[pv] || prop
		}
	}
	return out
}

// privs returns the effective privileges of p on path, each mapped to its propagate flag (a key
// present means the privilege is held). Privsep tokens get the intersection of user and token
// privileges, propagating only where both do.
func (st *state) privs(p principal, path string) map[string]bool {
	var user map[string]bool
	if p.User == "root@pam" {
		// root@pam holds every privilege everywhere; its tokens inherit that
		// (privsep=0) or intersect it with their own ACLs.
		user = map[string]bool{}
		for _, pv := range pveschema.Privileges {
			user[pv] = true
		}
	} else {
		user = st.privsOfRoles(st.rolesFor(principal{User: p.User}, false, path))
	}
	if p.TokenID == "" || !p.Privsep {
		return user
	}
	tok := st.privsOfRoles(st.rolesFor(p, true, path))
	out := map[string]bool{}
	for pv, prop := range tok {
		if uprop, ok := user[pv]; ok {
			out[pv] = prop && uprop
		}
	}
	return out
}

func (st *state) has(p principal, path string, privs []string, any bool) bool {
	return st.missing(p, path, privs, any) == ""
}

// missing is "" when p holds privs on path (one of them with any), else the privilege PVE's
// error names: the first one missing, or all of them joined by "|" for an any-of check.
func (st *state) missing(p principal, path string, privs []string, any bool) string {
	if p.User == "root@pam" && (p.TokenID == "" || !p.Privsep) {
		return "" // root (and its non-privsep tokens) hold every privilege
	}
	have := st.privs(p, path)
	for _, pv := range privs {
		_, ok := have[pv]
		if ok && any {
			return ""
		}
		if !ok && !any {
			return pv
		}
	}
	if any {
		return strings.Join(privs, "|")
	}
	return ""
}

// permError is a 403 with PVE's text.
func permError(path string, privs []string) *apiError {
	return &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (%s, %s)\n", path, strings.Join(privs, "|"))}
}

// check raises PVE's 403 unless p has privs on path (RPCEnvironment.pm check and check_any: an
// all-of check names the first privilege missing, an any-of check all of them).
func (st *state) check(p principal, path string, privs []string, any bool) error {
	if m := st.missing(p, path, privs, any); m != "" {
		return permError(path, []string{m})
	}
	return nil
}

var placeholderRe = regexp.MustCompile(`\{([^}]+)\}`)

// evalCheck evaluates a schema "check" expression with the raw parameters, as
// pve-access-control's RPCEnvironment::exec_api2_perm_check does. noerr is false for the outermost
// expression and below an "and" (whose terms raise their own error, naming path and privilege);
// below an "or" it is true, and a failing "or" raises the plain "Permission check failed".
func (st *state) evalCheck(p principal, chk []any, params Params, top bool) error {
	plain := &apiError{Status: 403, Message: "Permission check failed\n"}
	if len(chk) == 0 {
		return nil
	}
	fail := func(err error) error {
		if top {
			return err
		}
		return plain
	}
	op, _ := chk[0].(string)
	switch op {
	case "and":
		for _, sub := range chk[1:] {
			if s, ok := sub.([]any); ok {
				if err := st.evalCheck(p, s, params, true); err != nil {
					return err
				}
			}
		}
		return nil
	case "or":
		for _, sub := range chk[1:] {
			if s, ok := sub.([]any); ok {
				if st.evalCheck(p, s, params, false) == nil {
					return nil
				}
			}
		}
		return plain
	case "perm":
		return st.evalPerm(p, chk, params, top, plain)
	case "userid-param":
		uid := params.Str("userid")
		if len(chk) > 1 && chk[1] == "self" {
			if st.Users[uid] == nil {
				return fail(plainErr("no such user ('%s')", uid))
			}
			// The authenticated id of a token is user@realm!tokenid: a token is never "self".
			if uid == p.String() {
				return nil
			}
			return plain
		}
		realm := uid[strings.LastIndex(uid, "@")+1:]
		priv, _ := chk[1].(string)
		return fail(st.check(p, "/access/realm/"+realm, []string{priv}, false))
	case "userid-group":
		return st.evalUseridGroup(p, chk, params, top, plain)
	case "perm-modify":
		return fail(st.checkPermModify(p, fillPath(chk[1].(string), params)))
	}
	return plain
}

// checkPrivs is the privilege list of a check term.
func checkPrivs(v any) []string {
	var privs []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			privs = append(privs, x.(string))
		}
	}
	return privs
}

// checkOptions are the "key", value pairs after a check term's fixed arguments.
func checkOptions(chk []any, from int) map[string]string {
	out := map[string]string{}
	for i := from; i+1 < len(chk); i += 2 {
		k, _ := chk[i].(string)
		out[k] = fmt.Sprint(chk[i+1])
	}
	return out
}

// fillPath puts the request's parameters into a path template such as /vms/{vmid}.
func fillPath(tmpl string, params Params) string {
	return placeholderRe.ReplaceAllStringFunc(tmpl, func(m string) string { return params.Str(m[1 : len(m)-1]) })
}

// evalPerm is ["perm", path, [privs], options...]: the privileges on the path (any of them with
// "any"), and "require_param" parameters present.
func (st *state) evalPerm(p principal, chk []any, params Params, top bool, plain error) error {
	tmpl, _ := chk[1].(string)
	opts := checkOptions(chk, 3)
	if rp, ok := opts["require_param"]; ok && !params.Has(rp) {
		return plain
	}
	if err := st.check(p, fillPath(tmpl, params), checkPrivs(chk[2]), opts["any"] == "1"); err != nil {
		if top {
			return err
		}
		return plain
	}
	return nil
}

// evalUseridGroup is ["userid-group", [privs], "groups_param", create|update]: any of the
// privileges on /access/groups, or on every group named in the "groups" parameter
// (groups_param) and on a group the existing user (all but create) belongs to.
func (st *state) evalUseridGroup(p principal, chk []any, params Params, top bool, plain error) error {
	privs := checkPrivs(chk[1])
	opts := checkOptions(chk, 2)
	userid := params.Str("userid")
	existing := opts["groups_param"] != "create"
	if existing && st.Users[userid] == nil {
		if top {
			return plainErr("no such user ('%s')", userid)
		}
		return plain
	}
	if st.has(p, "/access/groups", privs, true) {
		return nil
	}
	if _, ok := opts["groups_param"]; ok {
		groups := pveschema.SplitList(params.Str("groups"))
		if len(groups) == 0 {
			return permError("/access/groups", []string{strings.Join(privs, "|")})
		}
		for _, g := range groups {
			if !st.has(p, "/access/groups/"+g, privs, true) {
				return permError("/access/groups/"+g, []string{strings.Join(privs, "|")})
			}
		}
	}
	if existing {
		if u := st.Users[userid]; u != nil {
			for _, g := range u.Groups {
				if st.has(p, "/access/groups/"+g, privs, true) {
					return nil
				}
			}
		}
		return plain
	}
	return nil
}

// checkPermModify is RPCEnvironment::check_perm_modify: Permissions.Modify on the path, or the
// allocate privilege of the path's kind below /storage, /vms or /pool.
func (st *state) checkPermModify(p principal, path string) error {
	privs := []string{"Permissions.Modify"}
	for pre, pv := range map[string]string{"/storage/": "Datastore.Allocate", "/vms/": "VM.Allocate", "/pool/": "Pool.Allocate"} {
		if strings.HasPrefix(path, pre) && len(path) > len(pre) {
			privs = append(privs, pv)
		}
	}
	return st.check(p, path, privs, true)
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
