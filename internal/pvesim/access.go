package pvesim

// Helpers of the access handlers (pool.go, acl.go, role.go, user.go, token.go).

// updateStr, updateBool and updateInt set a field from the request when it names the parameter:
// an update leaves what it does not name alone.
func (r *reqCtx) updateStr(dst *string, key string) {
	if r.params.Has(key) {
		*dst = r.params.Str(key)
	}
}

func (r *reqCtx) updateBool(dst *bool, key string) {
	if r.params.Has(key) {
		*dst = r.params.Bool(key)
	}
}

func (r *reqCtx) updateInt(dst *int64, key string) {
	if r.params.Has(key) {
		*dst = r.params.Int(key)
	}
}

// withOptional adds the non-empty values of key, value pairs to o (PVE omits empty comments).
func withOptional(o map[string]any, kv ...string) map[string]any {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			o[kv[i]] = kv[i+1]
		}
	}
	return o
}

// accessKind is a kind of access object kept by id (pools, users).
type accessKind[T any] struct {
	path    string // the collection's path; an object's is path/{param}
	param   string
	missing string // PVE's message for a missing one (a format of the id)
	objects func(st *state) map[string]*T
	// undeletable is PVE's reason to refuse deleting id, or "".
	undeletable func(st *state, id string) string
	// acl reports whether an ACL entry is about object id: the entry goes with the object, as one
	// left behind would grant on a new object of the same name.
	acl func(id string, a ACL) bool
}

// routes is the kind's collection routes.
func (k accessKind[T]) routes(h crud) routes { return collection(k.path, k.param, h) }

// named finds the object the request names: its id and the object, or PVE's error for a missing
// one, after "<op> failed: " for a write (op "" for a read).
func (k accessKind[T]) named(r *reqCtx, st *state, op string) (string, *T, error) {
	id := r.params.Str(k.param)
	if o := k.objects(st)[id]; o != nil {
		return id, o, nil
	}
	notFound := k.missing
	if op != "" {
		notFound = op + " failed: " + notFound
	}
	return id, nil, plainErr(notFound, id)
}

// remove is the delete (op) of the object the request names, with its ACL entries.
func (k accessKind[T]) remove(r *reqCtx, st *state, op string) (any, error) {
	id, _, err := k.named(r, st, op)
	if err != nil {
		return nil, err
	}
	if m := k.undeletable(st, id); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	delete(k.objects(st), id)
	st.dropACLs(func(a ACL) bool { return k.acl(id, a) })
	return nil, nil
}
