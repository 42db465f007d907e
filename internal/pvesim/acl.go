package pvesim

// ACLs (/access/acl) and the effective permissions (/access/permissions).

import (
	"fmt"
	"strings"

	"github.com/deevnet/tenant/internal/pveschema"
)

// aclRoutes: the ACL and what it grants.
func (s *Server) aclRoutes() routes {
	return routes{"GET /access/acl": s.aclList, "PUT /access/acl": s.aclUpdate, "GET /access/permissions": s.permissionsGet}
}

// dropACLs removes the ACL entries gone is true for (their user, token or path is deleted).
func (st *state) dropACLs(gone func(a ACL) bool) {
	var keep []ACL
	for _, a := range st.ACLs {
		if !gone(a) {
			keep = append(keep, a)
		}
	}
	st.ACLs = keep
}

func (s *Server) aclList(r *reqCtx) (any, error) {
	// Sys.Audit on /access shows every entry, else those on paths the caller may modify
	// (ACL.pm read_acl, RPCEnvironment.pm check_perm_modify).
	audit := r.who.isRoot() || s.st.has(r.who, "/access", []string{"Sys.Audit"}, false)
	out := []map[string]any{}
	for _, a := range s.st.ACLs {
		if !audit && s.st.checkPermModify(r.who, a.Path) != nil {
			continue
		}
		out = append(out, map[string]any{"path": a.Path, "type": a.Type, "ugid": a.UGID, "roleid": a.Role, "propagate": boolInt(a.Propagate)})
	}
	return out, nil
}

func (s *Server) aclUpdate(r *reqCtx) (any, error) {
	if !r.params.Has("users") && !r.params.Has("groups") && !r.params.Has("tokens") {
		msg := "either 'users', 'groups' or 'tokens' is required."
		return nil, paramErr(map[string]string{"users": msg, "groups": msg, "tokens": msg})
	}
	raw := r.params.Str("path")
	path := normalizeACLPath(raw)
	del := r.params.Bool("delete")
	// a delete may name any path, so that an entry PVE's parser kept can still be removed
	if path == "" || (!del && !validACLPath(path)) {
		return nil, paramErr(map[string]string{"path": fmt.Sprintf("invalid ACL path '%s'", raw)})
	}
	propagate := !r.params.Has("propagate") || r.params.Bool("propagate")
	roles := pveschema.SplitList(r.params.Str("roles"))
	// PVE checks, per role, the role, the caller's right to hand it out, then each group, user and
	// token, inside lock_user_config: a failure writes nothing and reads "ACL update failed: ...".
	const op = "ACL update failed"
	type ug struct{ typ, id string }
	var who []ug
	for _, role := range roles {
		if _, ok := s.st.Roles[role]; !ok {
			return nil, plainErr("%s: role '%s' does not exist", op, role)
		}
		if err := s.st.canHandOut(r.who, path, role, propagate, del); err != nil {
			return nil, err
		}
		who = who[:0]
		for _, g := range pveschema.SplitList(r.params.Str("groups")) {
			if s.st.Groups[g] == nil {
				return nil, plainErr("%s: group '%s' does not exist", op, g)
			}
			who = append(who, ug{"group", g})
		}
		for _, u := range pveschema.SplitList(r.params.Str("users")) {
			if s.st.Users[u] == nil {
				return nil, plainErr("%s: user '%s' does not exist", op, u)
			}
			who = append(who, ug{"user", u})
		}
		for _, t := range pveschema.SplitList(r.params.Str("tokens")) {
			user, tid, _ := strings.Cut(t, "!")
			if s.st.Users[user] == nil {
				return nil, plainErr("%s: no such user ('%s')", op, user)
			}
			if s.st.Users[user].Tokens[tid] == nil {
				return nil, plainErr("%s: no such token '%s' for user '%s'", op, tid, user)
			}
			who = append(who, ug{"token", t})
		}
	}
	for _, w := range who {
		for _, role := range roles {
			idx := -1
			for i, a := range s.st.ACLs {
				if a.Path == path && a.Type == w.typ && a.UGID == w.id && a.Role == role {
					idx = i
				}
			}
			switch {
			case del && idx >= 0:
				s.st.ACLs = append(s.st.ACLs[:idx], s.st.ACLs[idx+1:]...)
			case !del && idx >= 0:
				s.st.ACLs[idx].Propagate = propagate
			case !del:
				s.st.ACLs = append(s.st.ACLs, ACL{Path: path, Type: w.typ, UGID: w.id, Role: role, Propagate: propagate})
			}
		}
	}
	return nil, nil
}

// canHandOut is update_acl's rule for a caller without Permissions.Modify on the path (who passed
// "perm-modify" through VM.Allocate, Pool.Allocate or Datastore.Allocate): it may only add or
// remove a role whose privileges it holds there itself, propagated when the new entry propagates,
// and never NoAccess (pve-access-control src/PVE/API2/ACL.pm update_acl). PVE raises these as
// parameter errors inside lock_user_config, which stringifies them after "ACL update failed: ",
// so the client gets a 500 carrying the 400's text, not a 400 with errors.
func (st *state) canHandOut(who principal, path, role string, propagate, del bool) error {
	if who.isRoot() {
		return nil
	}
	have := st.privs(who, path)
	if _, ok := have["Permissions.Modify"]; ok {
		return nil
	}
	verb := map[bool]string{true: "remove", false: "add"}[del]
	for _, pv := range st.Roles[role] {
		prop, ok := have[pv]
		if !ok {
			return handOutErr(fmt.Sprintf("Cannot %s role '%s' - requires 'Permissions.Modify' or superset of privileges.", verb, role))
		}
		if propagate && !prop && !del {
			return handOutErr(fmt.Sprintf("Cannot %s role '%s' with propagation - requires 'Permissions.Modify' or propagated superset of privileges.", verb, role))
		}
	}
	if role == "NoAccess" {
		return handOutErr(fmt.Sprintf("Cannot %s role '%s' - requires 'Permissions.Modify'", verb, role))
	}
	return nil
}

// handOutErr is a parameter error on "role" as lock_user_config passes it on (see canHandOut).
func handOutErr(msg string) error {
	return plainErr("ACL update failed: 400 Parameter verification failed.\nrole: %s", msg)
}

// permissions dumps the effective privileges of the caller (or of userid), each with its propagate
// flag (API2/AccessControl.pm permissions, RPCEnvironment.pm get_effective_permissions). A caller
// may dump itself and, as a user, its own tokens; anyone else's needs Sys.Audit on /access.
func (s *Server) permissionsGet(r *reqCtx) (any, error) {
	who := r.who
	if uid := r.params.Str("userid"); uid != "" && uid != who.String() {
		user, tid, _ := strings.Cut(uid, "!")
		owned := who.TokenID == "" && tid != "" && user == who.User
		if !owned && !who.isRoot() && !s.st.has(who, "/access", []string{"Sys.Audit"}, false) {
			return nil, permError("/access", []string{"Sys.Audit"})
		}
		who = principal{User: user, TokenID: tid}
	}
	privs := s.st.privs
	if who.TokenID != "" {
		// a token that does not exist holds nothing (RPCEnvironment.pm permissions)
		u := s.st.Users[who.User]
		if u == nil || u.Tokens[who.TokenID] == nil {
			privs = func(principal, string) map[string]bool { return map[string]bool{} }
		} else {
			who.Privsep = u.Tokens[who.TokenID].Privsep
		}
	}
	dump := func(path string) map[string]int {
		m := map[string]int{}
		for pv, prop := range privs(who, path) {
			m[pv] = boolInt(prop)
		}
		return m
	}
	if p := r.params.Str("path"); p != "" {
		return map[string]map[string]int{p: dump(p)}, nil // {PATH: {}} when none
	}
	out := map[string]map[string]int{}
	for _, p := range s.st.dumpPaths() {
		if m := dump(p); len(m) > 0 {
			out[p] = m
		}
	}
	return out, nil
}

// dumpPaths is what get_effective_permissions looks at: the fixed top-level paths, every path an
// ACL names, and the pools' members.
func (st *state) dumpPaths() []string {
	paths := map[string]bool{"/": true, "/access": true, "/access/groups": true, "/nodes": true,
		"/pool": true, "/sdn": true, "/storage": true, "/vms": true}
	for _, a := range st.ACLs {
		paths[a.Path] = true
	}
	for _, vm := range st.VMs {
		if vm.Pool != "" {
			paths[fmt.Sprintf("/vms/%d", vm.VMID)] = true
		}
	}
	for _, p := range st.Pools {
		for _, sid := range p.Storage {
			paths["/storage/"+sid] = true
		}
	}
	return sortedKeys(paths)
}
