package pvesim

// Groups (/access/groups, pve-access-control src/PVE/API2/Group.pm). Membership is kept on the
// user (User.Groups), as user.cfg keeps it on the group: a group's members are the users naming it.

import (
	"sort"
	"strings"
)

// Group is a user group; its members are the users whose Groups name it.
type Group struct {
	Comment string `json:"comment,omitempty"`
}

// groupKind: a group's ACL entries go with it (AccessControl.pm delete_group_acl).
var groupKind = accessKind[Group]{path: "/access/groups", param: "groupid", missing: "group '%s' does not exist",
	objects:     func(st *state) map[string]*Group { return st.Groups },
	undeletable: func(*state, string) string { return "" },
	acl:         func(id string, a ACL) bool { return a.Type == "group" && a.UGID == id },
}

func (s *Server) groupRoutes() routes {
	return groupKind.routes(crud{s.groupList, s.groupCreate, s.groupGet, s.groupUpdate, s.groupDelete})
}

// groupMembers is the sorted user ids in group g.
func (st *state) groupMembers(g string) []string {
	var out []string
	for id, u := range st.Users {
		for _, ug := range u.Groups {
			if ug == g {
				out = append(out, id)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// groupList shows the groups the caller holds User.Modify, Sys.Audit or Group.Allocate on.
func (s *Server) groupList(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, id := range sortedKeys(s.st.Groups) {
		if !s.st.has(r.who, "/access/groups/"+id, []string{"User.Modify", "Sys.Audit", "Group.Allocate"}, true) {
			continue
		}
		out = append(out, withOptional(map[string]any{"groupid": id, "users": strings.Join(s.st.groupMembers(id), ",")},
			"comment", s.st.Groups[id].Comment))
	}
	return out, nil
}

func (s *Server) groupCreate(r *reqCtx) (any, error) {
	id := r.params.Str("groupid")
	if s.st.Groups[id] != nil {
		return nil, plainErr("create group failed: group '%s' already exists", id)
	}
	s.st.Groups[id] = &Group{Comment: r.params.Str("comment")}
	return nil, nil
}

func (s *Server) groupGet(r *reqCtx) (any, error) {
	id, g, err := groupKind.named(r, s.st, "")
	if err != nil {
		return nil, err
	}
	members := s.st.groupMembers(id)
	if members == nil {
		members = []string{}
	}
	return withOptional(map[string]any{"members": members}, "comment", g.Comment), nil
}

func (s *Server) groupUpdate(r *reqCtx) (any, error) {
	_, g, err := groupKind.named(r, s.st, "update group")
	if err != nil {
		return nil, err
	}
	r.updateStr(&g.Comment, "comment")
	return nil, nil
}

// groupDelete drops the group, its ACL entries and its members' membership.
func (s *Server) groupDelete(r *reqCtx) (any, error) {
	id := r.params.Str("groupid")
	if _, err := groupKind.remove(r, s.st, "delete group"); err != nil {
		return nil, err
	}
	for _, u := range s.st.Users {
		u.Groups = slicesDelete(u.Groups, id)
	}
	return nil, nil
}

// slicesDelete is l without the elements equal to v.
func slicesDelete(l []string, v string) []string {
	var out []string
	for _, x := range l {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}
