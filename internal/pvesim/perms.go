package pvesim

import (
	"fmt"
	"github.com/deevnet/tenant/internal/pvesim/schema"
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
	for _, p := range schema.Privileges {
		if !slices.Contains(excluded, p) {
			pveAdmin = append(pveAdmin, p)
		}
	}
	return map[string][]string{
		"Administrator":     append([]string(nil), schema.Privileges...),
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

var aclPathRe = regexp.MustCompile(`^/(access(/groups(/[^/]+)?|/realm(/[^/]+)?)?|nodes(/[^/]+)?|pool(/[^/]+){0,3}|sdn(/zones(/[^/]+(/[^/]+(/[1-9][0-9]{0,3})?)?)?|/(controllers|dns|ipams|fabrics)(/[^/]+)?)?|storage(/[^/]+)?|vms(/[0-9]+)?|mapping(/.*)?)?$`)

func validACLPath(p string) bool { return aclPathRe.MatchString(p) }

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
	// Pool roles count for member VMs, for roles the VM's ACLs did not set.
	if m := vmPathRe.FindStringSubmatch(path); m != nil {
		if vm := st.VMs[atoiSafe(m[1])]; vm != nil && vm.Pool != "" {
			for r, pr := range st.rolesFor(p, tokenOnly, "/pool/"+vm.Pool) {
				if _, ok := roles[r]; !ok {
					roles[r] = pr
				}
			}
		}
	}
	return roles
}

var vmPathRe = regexp.MustCompile(`^/vms/(\d+)$`)

func (st *state) privsOfRoles(rs roleSet) map[string]bool {
	out := map[string]bool{}
	if _, ok := rs["NoAccess"]; ok {
		return out
	}
	for r := range rs {
		for _, pv := range st.Roles[r] {
			out[pv] = true
		}
	}
	return out
}

// privs returns the effective privileges of p on path (privsep tokens get the
// intersection of user and token privileges).
func (st *state) privs(p principal, path string) map[string]bool {
	var user map[string]bool
	if p.User == "root@pam" {
		// root@pam holds every privilege everywhere; its tokens inherit that
		// (privsep=0) or intersect it with their own ACLs.
		user = map[string]bool{}
		for _, pv := range schema.Privileges {
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
	for pv := range tok {
		if user[pv] {
			out[pv] = true
		}
	}
	return out
}

func (st *state) has(p principal, path string, privs []string, any bool) bool {
	if p.User == "root@pam" && (p.TokenID == "" || !p.Privsep) {
		return true // root (and its non-privsep tokens) hold every privilege
	}
	have := st.privs(p, path)
	for _, pv := range privs {
		if have[pv] && any {
			return true
		}
		if !have[pv] && !any {
			return false
		}
	}
	return !any
}

// permError is a 403 with PVE's text.
func permError(path string, privs []string) *apiError {
	return &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (%s, %s)\n", path, strings.Join(privs, "|"))}
}

// check raises PVE's 403 unless p has privs on path.
func (st *state) check(p principal, path string, privs []string, any bool) error {
	if st.has(p, path, privs, any) {
		return nil
	}
	return permError(path, privs)
}

var placeholderRe = regexp.MustCompile(`\{([^}]+)\}`)

// evalCheck evaluates a schema "check" expression with the raw parameters.
// top is true for the outermost expression: a failing single "perm" then
// reports its path and privileges, composites report plainly (as PVE does).
func (st *state) evalCheck(p principal, chk []any, params Params, top bool) error {
	plain := &apiError{Status: 403, Message: "Permission check failed\n"}
	if len(chk) == 0 {
		return nil
	}
	op, _ := chk[0].(string)
	switch op {
	case "and":
		for _, sub := range chk[1:] {
			if s, ok := sub.([]any); ok {
				if err := st.evalCheck(p, s, params, false); err != nil {
					return plain
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
			if uid == p.User {
				return nil
			}
			return plain
		}
		realm := uid[strings.LastIndex(uid, "@")+1:]
		priv, _ := chk[1].(string)
		return st.check(p, "/access/realm/"+realm, []string{priv}, false)
	case "userid-group":
		if st.inUserGroups(p, checkPrivs(chk[1]), params.Str("userid")) {
			return nil
		}
		return plain
	case "perm-modify":
		return st.evalPermModify(p, fillPath(chk[1].(string), params))
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

// fillPath puts the request's parameters into a path template such as /vms/{vmid}.
func fillPath(tmpl string, params Params) string {
	return placeholderRe.ReplaceAllStringFunc(tmpl, func(m string) string { return params.Str(m[1 : len(m)-1]) })
}

// evalPerm is ["perm", path, [privs], options...]: the privileges on the path (any of them with
// "any"), and "require_param" parameters present. Only the top-level check's error names the path.
func (st *state) evalPerm(p principal, chk []any, params Params, top bool, plain error) error {
	tmpl, _ := chk[1].(string)
	privs := checkPrivs(chk[2])
	any := false
	for i := 3; i+1 < len(chk); i += 2 {
		k, _ := chk[i].(string)
		switch k {
		case "any":
			any = fmt.Sprint(chk[i+1]) == "1"
		case "require_param":
			if !params.Has(chk[i+1].(string)) {
				return plain
			}
		}
	}
	if err := st.check(p, fillPath(tmpl, params), privs, any); err != nil {
		if top {
			return err
		}
		return plain
	}
	return nil
}

// inUserGroups is "userid-group": the privileges on all groups, or on a group of the user.
func (st *state) inUserGroups(p principal, privs []string, userid string) bool {
	if st.has(p, "/access/groups", privs, true) {
		return true
	}
	if u := st.Users[userid]; u != nil {
		for _, g := range u.Groups {
			if st.has(p, "/access/groups/"+g, privs, true) {
				return true
			}
		}
	}
	return false
}

// evalPermModify is "perm-modify": Permissions.Modify on the path, or the allocate privilege of
// the path's kind.
func (st *state) evalPermModify(p principal, path string) error {
	if st.has(p, path, []string{"Permissions.Modify"}, false) {
		return nil
	}
	alt := map[string]string{"/vms": "VM.Allocate", "/pool": "Pool.Allocate", "/storage": "Datastore.Allocate"}
	for pre, pv := range alt {
		if strings.HasPrefix(path, pre) && st.has(p, path, []string{pv}, false) {
			return nil
		}
	}
	return permError(path, []string{"Permissions.Modify"})
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
