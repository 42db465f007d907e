package pvesim

// Users (/access/users).

import (
	"strings"

	"github.com/deevnet/tenant/internal/pvesim/schema"
)

// userRoutes: the users, the usual collection.
func (s *Server) userRoutes() routes {
	return collection("/access/users", "userid", crud{s.userList, s.userCreate, s.userGet, s.userUpdate, s.userDelete})
}

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
	u, err := s.userOf(r)
	if err != nil {
		return nil, err
	}
	o := map[string]any{"enable": boolInt(u.Enable), "expire": u.Expire, "groups": u.Groups, "tokens": s.tokenListOf(u)}
	return withOptional(o, "comment", u.Comment, "email", u.Email), nil
}

func (s *Server) userUpdate(r *reqCtx) (any, error) {
	_, u, err := named(r, s.st.Users, "userid", "update user", userMissing)
	if err != nil {
		return nil, err
	}
	r.updateBool(&u.Enable, "enable")
	r.updateStr(&u.Comment, "comment")
	r.updateStr(&u.Email, "email")
	r.updateInt(&u.Expire, "expire")
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
	id, _, err := named(r, s.st.Users, "userid", "delete user", userMissing)
	if err != nil {
		return nil, err
	}
	if id == "root@pam" {
		return nil, plainErr("delete user failed: cannot delete root@pam")
	}
	delete(s.st.Users, id)
	s.st.dropACLs(func(a ACL) bool {
		return a.Type == "user" && a.UGID == id || a.Type == "token" && strings.HasPrefix(a.UGID, id+"!")
	})
	return nil, nil
}

func (s *Server) userOf(r *reqCtx) (*User, error) {
	_, u, err := named(r, s.st.Users, "userid", "", userMissing)
	return u, err
}
