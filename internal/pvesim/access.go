package pvesim

import (
	"fmt"
	"github.com/deevnet/tenant/internal/pvesim/schema"
	"sort"
	"strings"
)

// ---- pools ----

func (s *Server) poolMembers(pool string) []map[string]any {
	out := []map[string]any{}
	for _, id := range s.sortedVMIDs() {
		vm := s.st.VMs[id]
		if vm.Pool == pool {
			out = append(out, map[string]any{"id": fmt.Sprintf("qemu/%d", id), "type": "qemu", "vmid": id, "node": vm.Node, "name": vm.Config["name"], "status": vm.Status})
		}
	}
	return out
}

func (s *Server) poolList(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, id := range sortedKeys(s.st.Pools) {
		if p := r.params.Str("poolid"); p != "" && p != id {
			continue
		}
		if !s.st.has(r.who, "/pool/"+id, []string{"Pool.Audit"}, false) {
			continue
		}
		o := map[string]any{"poolid": id, "members": s.poolMembers(id)}
		if c := s.st.Pools[id].Comment; c != "" {
			o["comment"] = c
		}
		out = append(out, o)
	}
	return out, nil
}

func (s *Server) poolGet(r *reqCtx) (any, error) {
	id := r.params.Str("poolid")
	p := s.st.Pools[id]
	if p == nil {
		return nil, plainErr("pool '%s' does not exist", id)
	}
	o := map[string]any{"members": s.poolMembers(id)}
	if p.Comment != "" {
		o["comment"] = p.Comment
	}
	return o, nil
}

func (s *Server) poolCreate(r *reqCtx) (any, error) {
	id := r.params.Str("poolid")
	if s.st.Pools[id] != nil {
		return nil, plainErr("create pool failed: pool '%s' already exists", id)
	}
	if i := strings.LastIndex(id, "/"); i > 0 && s.st.Pools[id[:i]] == nil {
		return nil, plainErr("create pool failed: parent '%s' does not exist", id[:i])
	}
	s.st.Pools[id] = &Pool{Comment: r.params.Str("comment")}
	return nil, nil
}

func (s *Server) poolUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("poolid")
	p := s.st.Pools[id]
	if p == nil {
		return nil, plainErr("update pools failed: pool '%s' does not exist", id)
	}
	if r.params.Has("comment") {
		p.Comment = r.params.Str("comment")
	}
	for _, v := range schema.SplitList(r.params.Str("vms")) {
		vmid := atoiSafe(v)
		vm := s.st.VMs[vmid]
		if vm == nil {
			return nil, plainErr("update pools failed: VM %d does not exist", vmid)
		}
		if err := s.st.check(r.who, fmt.Sprintf("/vms/%d", vmid), []string{"VM.Allocate"}, false); err != nil {
			return nil, err
		}
		if r.params.Bool("delete") {
			if vm.Pool == id {
				vm.Pool = ""
			}
			continue
		}
		if vm.Pool != "" && vm.Pool != id && !r.params.Bool("allow-move") {
			return nil, plainErr("update pools failed: VM %d belongs already to pool '%s' and 'allow-move' is not set", vmid, vm.Pool)
		}
		vm.Pool = id
	}
	return nil, nil
}

func (s *Server) poolDelete(r *reqCtx) (any, error) {
	id := r.params.Str("poolid")
	if s.st.Pools[id] == nil {
		return nil, plainErr("delete pool failed: pool '%s' does not exist", id)
	}
	if len(s.poolMembers(id)) > 0 {
		return nil, plainErr("delete pool failed: pool '%s' is not empty", id)
	}
	delete(s.st.Pools, id)
	var keep []ACL
	for _, a := range s.st.ACLs {
		if a.Path != "/pool/"+id {
			keep = append(keep, a)
		}
	}
	s.st.ACLs = keep
	return nil, nil
}

// ---- ACLs ----

func (s *Server) aclList(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, a := range s.st.ACLs {
		if !r.who.isRoot() && !s.st.has(r.who, a.Path, []string{"Permissions.Modify", "Sys.Audit"}, true) {
			continue
		}
		out = append(out, map[string]any{"path": a.Path, "type": a.Type, "ugid": a.UGID, "roleid": a.Role, "propagate": boolInt(a.Propagate)})
	}
	return out, nil
}

func (s *Server) aclUpdate(r *reqCtx) (any, error) {
	path := r.params.Str("path")
	if !validACLPath(path) {
		return nil, paramErr(map[string]string{"path": fmt.Sprintf("invalid ACL path '%s'", path)})
	}
	propagate := !r.params.Has("propagate") || r.params.Bool("propagate")
	del := r.params.Bool("delete")
	roles := schema.SplitList(r.params.Str("roles"))
	for _, role := range roles {
		if _, ok := s.st.Roles[role]; !ok {
			return nil, plainErr("role '%s' does not exist", role)
		}
	}
	type ug struct{ typ, id string }
	var who []ug
	for _, u := range schema.SplitList(r.params.Str("users")) {
		if s.st.Users[u] == nil {
			return nil, plainErr("user '%s' does not exist", u)
		}
		who = append(who, ug{"user", u})
	}
	for _, g := range schema.SplitList(r.params.Str("groups")) {
		who = append(who, ug{"group", g})
	}
	for _, t := range schema.SplitList(r.params.Str("tokens")) {
		user, tid, _ := strings.Cut(t, "!")
		if u := s.st.Users[user]; u == nil || u.Tokens[tid] == nil {
			return nil, plainErr("no such token '%s' for user '%s'", tid, user)
		}
		who = append(who, ug{"token", t})
	}
	if len(who) == 0 {
		return nil, plainErr("either 'users', 'groups' or 'tokens' is required")
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

// ---- roles ----

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
	s.st.Roles[id] = schema.SplitList(r.params.Str("privs"))
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
	privs := schema.SplitList(r.params.Str("privs"))
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

// ---- users and tokens ----

func (s *Server) userList(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, id := range sortedKeys(s.st.Users) {
		u := s.st.Users[id]
		if id != r.who.User && !s.st.has(r.who, "/access/groups", []string{"User.Modify", "Sys.Audit"}, true) {
			continue
		}
		o := map[string]any{"userid": id, "enable": boolInt(u.Enable), "expire": u.Expire}
		if r.params.Bool("full") {
			o["tokens"] = s.tokenListOf(u)
		}
		out = append(out, o)
	}
	return out, nil
}

func (s *Server) userCreate(r *reqCtx) (any, error) {
	id := r.params.Str("userid")
	if s.st.Users[id] != nil {
		return nil, plainErr("create user failed: user '%s' already exists", id)
	}
	u := &User{Enable: !r.params.Has("enable") || r.params.Bool("enable"), Comment: r.params.Str("comment"),
		Email: r.params.Str("email"), Expire: r.params.Int("expire"), Groups: schema.SplitList(r.params.Str("groups")), Tokens: map[string]*Token{}}
	s.st.Users[id] = u
	return nil, nil
}

func (s *Server) userGet(r *reqCtx) (any, error) {
	id := r.params.Str("userid")
	u := s.st.Users[id]
	if u == nil {
		return nil, plainErr("no such user ('%s')", id)
	}
	o := map[string]any{"enable": boolInt(u.Enable), "expire": u.Expire, "groups": u.Groups, "tokens": s.tokenListOf(u)}
	if u.Comment != "" {
		o["comment"] = u.Comment
	}
	if u.Email != "" {
		o["email"] = u.Email
	}
	return o, nil
}

func (s *Server) userUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("userid")
	u := s.st.Users[id]
	if u == nil {
		return nil, plainErr("update user failed: no such user ('%s')", id)
	}
	if r.params.Has("enable") {
		u.Enable = r.params.Bool("enable")
	}
	if r.params.Has("comment") {
		u.Comment = r.params.Str("comment")
	}
	if r.params.Has("email") {
		u.Email = r.params.Str("email")
	}
	if r.params.Has("expire") {
		u.Expire = r.params.Int("expire")
	}
	if r.params.Has("groups") {
		g := schema.SplitList(r.params.Str("groups"))
		if r.params.Bool("append") {
			g = append(u.Groups, g...)
		}
		u.Groups = g
	}
	return nil, nil
}

func (s *Server) userDelete(r *reqCtx) (any, error) {
	id := r.params.Str("userid")
	if s.st.Users[id] == nil {
		return nil, plainErr("delete user failed: no such user ('%s')", id)
	}
	if id == "root@pam" {
		return nil, plainErr("delete user failed: cannot delete root@pam")
	}
	delete(s.st.Users, id)
	var keep []ACL
	for _, a := range s.st.ACLs {
		if (a.Type != "user" || a.UGID != id) && (a.Type != "token" || !strings.HasPrefix(a.UGID, id+"!")) {
			keep = append(keep, a)
		}
	}
	s.st.ACLs = keep
	return nil, nil
}

func (s *Server) tokenListOf(u *User) []map[string]any {
	out := []map[string]any{}
	for _, id := range sortedKeys(u.Tokens) {
		t := u.Tokens[id]
		o := map[string]any{"tokenid": id, "privsep": boolInt(t.Privsep), "expire": t.Expire}
		if t.Comment != "" {
			o["comment"] = t.Comment
		}
		out = append(out, o)
	}
	return out
}

func (s *Server) userOf(r *reqCtx) (*User, error) {
	id := r.params.Str("userid")
	u := s.st.Users[id]
	if u == nil {
		return nil, plainErr("no such user ('%s')", id)
	}
	return u, nil
}

func (s *Server) tokenList(r *reqCtx) (any, error) {
	u, err := s.userOf(r)
	if err != nil {
		return nil, err
	}
	return s.tokenListOf(u), nil
}

func (s *Server) tokenGet(r *reqCtx) (any, error) {
	u, err := s.userOf(r)
	if err != nil {
		return nil, err
	}
	tid := r.params.Str("tokenid")
	t := u.Tokens[tid]
	if t == nil {
		return nil, plainErr("no such token '%s' for user '%s'", tid, r.params.Str("userid"))
	}
	o := map[string]any{"privsep": boolInt(t.Privsep), "expire": t.Expire}
	if t.Comment != "" {
		o["comment"] = t.Comment
	}
	return o, nil
}

// tokenCreate returns the secret once, as "value".
func (s *Server) tokenCreate(r *reqCtx) (any, error) {
	u, err := s.userOf(r)
	if err != nil {
		return nil, err
	}
	tid := r.params.Str("tokenid")
	if u.Tokens[tid] != nil {
		return nil, plainErr("Token already exists.")
	}
	// A token may not outlive its user.
	if u.Expire != 0 && (r.params.Int("expire") == 0 || r.params.Int("expire") > u.Expire) {
		return nil, plainErr("Token expiration date cannot be later than user expiration date.")
	}
	t := &Token{Secret: randomUUID(nil), Privsep: !r.params.Has("privsep") || r.params.Bool("privsep"),
		Expire: r.params.Int("expire"), Comment: r.params.Str("comment")}
	u.Tokens[tid] = t
	full := r.params.Str("userid") + "!" + tid
	return map[string]any{"full-tokenid": full, "value": t.Secret,
		"info": map[string]any{"privsep": boolInt(t.Privsep), "expire": t.Expire, "comment": t.Comment}}, nil
}

func (s *Server) tokenUpdate(r *reqCtx) (any, error) {
	u, err := s.userOf(r)
	if err != nil {
		return nil, err
	}
	tid := r.params.Str("tokenid")
	t := u.Tokens[tid]
	if t == nil {
		return nil, plainErr("no such token '%s' for user '%s'", tid, r.params.Str("userid"))
	}
	if r.params.Has("privsep") {
		t.Privsep = r.params.Bool("privsep")
	}
	if r.params.Has("expire") {
		t.Expire = r.params.Int("expire")
	}
	if r.params.Has("comment") {
		t.Comment = r.params.Str("comment")
	}
	return map[string]any{"privsep": boolInt(t.Privsep), "expire": t.Expire, "comment": t.Comment}, nil
}

func (s *Server) tokenDelete(r *reqCtx) (any, error) {
	u, err := s.userOf(r)
	if err != nil {
		return nil, err
	}
	tid := r.params.Str("tokenid")
	if u.Tokens[tid] == nil {
		return nil, plainErr("no such token '%s' for user '%s'", tid, r.params.Str("userid"))
	}
	delete(u.Tokens, tid)
	full := r.params.Str("userid") + "!" + tid
	var keep []ACL
	for _, a := range s.st.ACLs {
		if a.Type != "token" || a.UGID != full {
			keep = append(keep, a)
		}
	}
	s.st.ACLs = keep
	return nil, nil
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
