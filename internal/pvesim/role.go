package pvesim

// Roles (/access/roles): the built-in ones are read-only.

import (
	"sort"
	"strings"

	"github.com/deevnet/tenant/internal/pveschema"
)

// roleRoutes: the roles, the usual collection.
func (s *Server) roleRoutes() routes {
	return collection("/access/roles", "roleid", crud{s.roleList, s.roleCreate, s.roleGet, s.roleUpdate, s.roleDelete})
}

func (s *Server) roleList(r *reqCtx) (any, error) {
	out := []map[string]any{}
	builtin := builtinRoles()
	for _, id := range sortedKeys(s.st.Roles) {
		_, special := builtin[id]
		privs := append([]string(nil), s.st.Roles[id]...)
		sort.Strings(privs)
		out = append(out, map[string]any{"roleid": id, "privs": strings.Join(privs, ","), "special": boolInt(special)})
	}
	return out, nil
}

func (s *Server) roleGet(r *reqCtx) (any, error) {
	id := r.params.Str("roleid")
	privs, ok := s.st.Roles[id]
	if !ok {
		return nil, plainErr("role '%s' does not exist", id)
	}
	out := map[string]any{}
	for _, p := range privs {
		out[p] = 1
	}
	return out, nil
}

func (s *Server) roleCreate(r *reqCtx) (any, error) {
	id := r.params.Str("roleid")
	if _, ok := s.st.Roles[id]; ok {
		return nil, plainErr("create role failed: role '%s' already exists", id)
	}
	s.st.Roles[id] = pveschema.SplitList(r.params.Str("privs"))
	return nil, nil
}

func (s *Server) roleUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("roleid")
	if _, ok := s.st.Roles[id]; !ok {
		return nil, plainErr("update role failed: role '%s' does not exist", id)
	}
	if _, builtin := builtinRoles()[id]; builtin {
		return nil, plainErr("update role failed: cannot modify built-in role '%s'", id)
	}
	privs := pveschema.SplitList(r.params.Str("privs"))
	if r.params.Bool("append") {
		privs = append(s.st.Roles[id], privs...)
	}
	s.st.Roles[id] = privs
	return nil, nil
}

func (s *Server) roleDelete(r *reqCtx) (any, error) {
	id := r.params.Str("roleid")
	if _, builtin := builtinRoles()[id]; builtin {
		return nil, plainErr("cannot delete role '%s' - system role", id)
	}
	if _, ok := s.st.Roles[id]; !ok {
		return nil, plainErr("role '%s' does not exist", id)
	}
	delete(s.st.Roles, id)
	return nil, nil
}
