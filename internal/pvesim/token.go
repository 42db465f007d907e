package pvesim

// API tokens (/access/users/{userid}/token): the secret is shown once, at creation.

// tokenRoutes: a user's tokens, the usual collection but that PVE creates one at its own path.
// Each handler gets the user, looked up first.
func (s *Server) tokenRoutes() routes {
	const tokens = "/access/users/{userid}/token"
	rs := collection(tokens, "tokenid", crud{list: on(s.userOf, s.tokenList), get: on(s.userOf, s.tokenGet),
		update: on(s.userOf, s.tokenUpdate), remove: on(s.userOf, s.tokenDelete)})
	rs.add(routes{"POST " + tokens + "/{tokenid}": on(s.userOf, s.tokenCreate)})
	return rs
}

func (s *Server) tokenListOf(u *User) []map[string]any {
	out := []map[string]any{}
	for _, id := range sortedKeys(u.Tokens) {
		t := u.Tokens[id]
		out = append(out, withOptional(map[string]any{"tokenid": id, "privsep": boolInt(t.Privsep), "expire": t.Expire}, "comment", t.Comment))
	}
	return out
}

func (s *Server) tokenList(r *reqCtx, u *User) (any, error) {
	return s.tokenListOf(u), nil
}

// tokenOf is the request's token of u.
func tokenOf(r *reqCtx, u *User) (string, *Token, error) {
	tid := r.params.Str("tokenid")
	t := u.Tokens[tid]
	if t == nil {
		return tid, nil, plainErr("no such token '%s' for user '%s'", tid, r.params.Str("userid"))
	}
	return tid, t, nil
}

func (s *Server) tokenGet(r *reqCtx, u *User) (any, error) {
	_, t, err := tokenOf(r, u)
	if err != nil {
		return nil, err
	}
	return withOptional(map[string]any{"privsep": boolInt(t.Privsep), "expire": t.Expire}, "comment", t.Comment), nil
}

// tokenCreate returns the secret once, as "value".
func (s *Server) tokenCreate(r *reqCtx, u *User) (any, error) {
	tid := r.params.Str("tokenid")
	if u.Tokens[tid] != nil {
		return nil, paramErr(map[string]string{"tokenid": "Token already exists."})
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

func (s *Server) tokenUpdate(r *reqCtx, u *User) (any, error) {
	_, t, err := tokenOf(r, u)
	if err != nil {
		return nil, err
	}
	r.updateBool(&t.Privsep, "privsep")
	r.updateInt(&t.Expire, "expire")
	r.updateStr(&t.Comment, "comment")
	return map[string]any{"privsep": boolInt(t.Privsep), "expire": t.Expire, "comment": t.Comment}, nil
}

func (s *Server) tokenDelete(r *reqCtx, u *User) (any, error) {
	tid, _, err := tokenOf(r, u)
	if err != nil {
		return nil, err
	}
	delete(u.Tokens, tid)
	full := r.params.Str("userid") + "!" + tid
	s.st.dropACLs(func(a ACL) bool { return a.Type == "token" && a.UGID == full })
	return nil, nil
}
