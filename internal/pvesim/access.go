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

// find is m[id], or PVE's error for a missing object (format takes the id).
func find[T any](m map[string]*T, id, format string) (*T, error) {
	if o := m[id]; o != nil {
		return o, nil
	}
	return nil, plainErr(format, id)
}
