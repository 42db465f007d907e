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

// PVE's messages for a missing pool or user (formats of the id); a write's message starts with
// "<op> failed: ".
const (
	poolMissing = "pool '%s' does not exist"
	userMissing = "no such user ('%s')"
)

// named finds the object the request names in param: its id and m[id], or PVE's error for a
// missing one, notFound after "<op> failed: " for a write (op "" for a read).
func named[T any](r *reqCtx, m map[string]*T, param, op, notFound string) (string, *T, error) {
	id := r.params.Str(param)
	if o := m[id]; o != nil {
		return id, o, nil
	}
	if op != "" {
		notFound = op + " failed: " + notFound
	}
	return id, nil, plainErr(notFound, id)
}
