package pvesim

// Users (/access/users).

import (
	"slices"
	"strings"

	"github.com/deevnet/tenant/internal/pveschema"
)

// userKind: a user's ACL entries are its own and its tokens'; root@pam cannot be deleted.
var userKind = accessKind[User]{path: "/access/users", param: "userid", missing: "no such user ('%s')",
	objects: func(st *state) map[string]*User { return st.Users },
	undeletable: func(_ *state, id string) string {
		if id == "root@pam" {
			return "cannot delete root@pam"
		}
		return ""
	},
	acl: func(id string, a ACL) bool {
		return a.Type == "user" && a.UGID == id || a.Type == "token" && strings.HasPrefix(a.UGID, id+"!")
	},
}

func (s *Server) userRoutes() routes {
	return userKind.routes(crud{s.userList, s.userCreate, s.userGet, s.userUpdate, s.userDelete})
}

func (s *Server) userList(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, id := range sortedKeys(s.st.Users) {
		u := s.st.Users[id]
		if id != r.who.User && !s.st.has(r.who, "/access/groups", []string{"User.Modify", "Sys.Audit"}, true) {
			continue
		}
		// PVE lists each user's comment and email too (the schema's returns): onboarding reads
		// the comment to see which tenant holds which index.
		o := withOptional(map[string]any{"userid": id, "enable": boolInt(u.Enable), "expire": u.Expire},
			"comment", u.Comment, "email", u.Email)
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
	groups, err := s.st.knownGroups(r, "create user failed")
	if err != nil {
		return nil, err
	}
	u := &User{Enable: !r.params.Has("enable") || r.params.Bool("enable"), Comment: r.params.Str("comment"),
		Email: r.params.Str("email"), Expire: r.params.Int("expire"), Groups: groups, Tokens: map[string]*Token{}}
	if r.params.Has("password") {
		if u.Password, err = hashPassword(r.params.Str("password")); err != nil {
			return nil, err
		}
	}
	s.st.Users[id] = u
	return nil, nil
}

func (s *Server) userGet(r *reqCtx) (any, error) {
	u, err := s.userOf(r)
	if err != nil {
		return nil, err
	}
	groups := u.Groups
	if groups == nil {
		groups = []string{} // PVE answers [] for a user in no group, never null (User.pm read_user)
	}
	o := map[string]any{"enable": boolInt(u.Enable), "expire": u.Expire, "groups": groups, "tokens": s.tokenListOf(u)}
	return withOptional(o, "comment", u.Comment, "email", u.Email), nil
}

func (s *Server) userUpdate(r *reqCtx) (any, error) {
	_, u, err := userKind.named(r, s.st, "update user")
	if err != nil {
		return nil, err
	}
	groups, err := s.st.knownGroups(r, "update user failed")
	if err != nil {
		return nil, err
	}
	r.updateBool(&u.Enable, "enable")
	r.updateStr(&u.Comment, "comment")
	r.updateStr(&u.Email, "email")
	r.updateInt(&u.Expire, "expire")
	if r.params.Has("groups") {
		if r.params.Bool("append") {
			for _, g := range groups {
				if !slices.Contains(u.Groups, g) {
					u.Groups = append(u.Groups, g)
				}
			}
		} else {
			u.Groups = groups
		}
	}
	return nil, nil
}

// knownGroups is the request's groups, each of which must exist (User.pm create_user and
// update_user: "no such group", after "<op>: ").
func (st *state) knownGroups(r *reqCtx, op string) ([]string, error) {
	var out []string
	for _, g := range pveschema.SplitList(r.params.Str("groups")) {
		if st.Groups[g] == nil {
			return nil, plainErr("%s: no such group '%s'", op, g)
		}
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out, nil
}

func (s *Server) userDelete(r *reqCtx) (any, error) {
	return userKind.remove(r, s.st, "delete user")
}

func (s *Server) userOf(r *reqCtx) (*User, error) {
	_, u, err := userKind.named(r, s.st, "")
	return u, err
}
