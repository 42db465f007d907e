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
	path := r.params.Str("path")
	if !validACLPath(path) {
		return nil, paramErr(map[string]string{"path": fmt.Sprintf("invalid ACL path '%s'", path)})
	}
	propagate := !r.params.Has("propagate") || r.params.Bool("propagate")
	del := r.params.Bool("delete")
	roles := pveschema.SplitList(r.params.Str("roles"))
	for _, role := range roles {
		if _, ok := s.st.Roles[role]; !ok {
			return nil, plainErr("role '%s' does not exist", role)
		}
		if err := s.st.canHandOut(r.who, path, role, propagate, del); err != nil {
			return nil, err
		}
	}
	type ug struct{ typ, id string }
	var who []ug
	for _, u := range pveschema.SplitList(r.params.Str("users")) {
		if s.st.Users[u] == nil {
			return nil, plainErr("user '%s' does not exist", u)
		}
		who = append(who, ug{"user", u})
	}
	for _, g := range pveschema.SplitList(r.params.Str("groups")) {
		who = append(who, ug{"group", g})
	}
	for _, t := range pveschema.SplitList(r.params.Str("tokens")) {
		user, tid, _ := strings.Cut(t, "!")
		if u := s.st.Users[user]; u == nil || u.Tokens[tid] == nil {
			return nil, plainErr("no such token '%s' for user '%s'", tid, user)
		}
		who = append(who, ug{"token", t})
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
// and never NoAccess (pve-access-control src/PVE/API2/ACL.pm update_acl).
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
			return paramErr(map[string]string{"role": fmt.Sprintf("Cannot %s role '%s' - requires 'Permissions.Modify' or superset of privileges.", verb, role)})
		}
		if propagate && !prop && !del {
			return paramErr(map[string]string{"role": fmt.Sprintf("Cannot %s role '%s' with propagation - requires 'Permissions.Modify' or propagated superset of privileges.", verb, role)})
		}
	}
	if role == "NoAccess" {
		return paramErr(map[string]string{"role": fmt.Sprintf("Cannot %s role '%s' - requires 'Permissions.Modify'", verb, role)})
	}
	return nil
}

// permissions dumps the effective privileges of the caller (or of userid).
func (s *Server) permissionsGet(r *reqCtx) (any, error) {
	who := r.who
	if uid := r.params.Str("userid"); uid != "" && uid != who.String() {
		if !who.isRoot() && !s.st.has(who, "/access", []string{"Sys.Audit"}, false) {
			return nil, permError("/access", []string{"Sys.Audit"})
		}
		user, tid, _ := strings.Cut(uid, "!")
		who = principal{User: user, TokenID: tid}
		if tid != "" {
			if u := s.st.Users[user]; u != nil && u.Tokens[tid] != nil {
				who.Privsep = u.Tokens[tid].Privsep
			}
		}
	}
	paths := map[string]bool{"/": true}
	for _, a := range s.st.ACLs {
		paths[a.Path] = true
	}
	if p := r.params.Str("path"); p != "" {
		paths = map[string]bool{p: true}
	}
	out := map[string]map[string]int{}
	for p := range paths {
		privs := s.st.privs(who, p)
		if len(privs) == 0 {
			continue
		}
		m := map[string]int{}
		for pv := range privs {
			m[pv] = 1
		}
		out[p] = m
	}
	return out, nil
}
