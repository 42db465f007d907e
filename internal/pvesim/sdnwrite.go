package pvesim

// The shared steps of the SDN object handlers (zones, vnets, subnets, controllers, fabrics):
// listing what the caller may see, and one write (create, update or delete) of the staged config.
// Which checks a handler runs, and in which order, stay in the handler: PVE's order decides which
// error a request sees, and that differs per kind.

// visible lists the objects of kind in the requested view that show filters in.
func (s *Server) visible(kind string, r *reqCtx, show func(o sdnObj) bool) []sdnObj {
	out := []sdnObj{}
	for _, o := range s.view(kind, r.params) {
		if show(o) {
			out = append(out, o)
		}
	}
	return out
}

// typeMatches is the ?type= filter of the zone and controller lists.
func typeMatches(r *reqCtx, o sdnObj) bool {
	t := r.params.Str("type")
	return t == "" || o["type"] == t
}

// sdnWrite is one write of an object of kind; op names it in PVE's messages, e.g.
// "create sdn zone object" in "create sdn zone object failed: ...".
type sdnWrite struct {
	s    *Server
	r    *reqCtx
	kind string
	op   string
}

func (s *Server) sdnWrite(r *reqCtx, kind, op string) sdnWrite {
	return sdnWrite{s: s, r: r, kind: kind, op: op}
}

// objects is the kind's section of the staged (current) config.
func (w sdnWrite) objects() map[string]sdnObj { return w.s.st.SDN.Current[w.kind] }

// existing is the staged object id, or PVE's "sdn '<id>' does not exist" (zones, controllers).
func (w sdnWrite) existing(id string) (sdnObj, error) {
	o, ok := w.objects()[id]
	if !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	return o, nil
}

// existingUpdated is the staged object id and the request merged into a copy of it.
func (w sdnWrite) existingUpdated(id, path string, fixed ...string) (old, o sdnObj, err error) {
	if old, err = w.existing(id); err != nil {
		return nil, nil, err
	}
	if o, err = w.update(path, old, fixed...); err != nil {
		return nil, nil, err
	}
	return old, o, nil
}

// lockVNet checks SDN.Allocate on the vnet (in its zone), then the lock token.
func (w sdnWrite) lockVNet(vnet string) error {
	if err := w.s.vnetPerm(w.r, vnet, "SDN.Allocate"); err != nil {
		return err
	}
	return w.lock()
}

// lock checks the SDN lock token, as every write does first or early.
func (w sdnWrite) lock() error { return w.s.checkLockToken(w.r.params, w.op+" failed") }

// lockNew checks the lock token, then that id is not staged yet (exists: PVE's message, given id).
func (w sdnWrite) lockNew(id, exists string) error {
	if err := w.lock(); err != nil {
		return err
	}
	if _, ok := w.objects()[id]; ok {
		return w.failed(exists, id)
	}
	return nil
}

// lockAndDigest checks the lock token, then the digest the caller read the section with.
func (w sdnWrite) lockAndDigest() error {
	if err := w.lock(); err != nil {
		return err
	}
	return w.s.checkDigest(w.kind, w.r.params, w.op)
}

// failed is PVE's "<op> failed: <message>".
func (w sdnWrite) failed(format string, a ...any) error {
	return plainErr("%s failed: "+format, append([]any{w.op}, a...)...)
}

// update merges the request into a copy of old; fixed properties may not be deleted.
func (w sdnWrite) update(path string, old sdnObj, fixed ...string) (sdnObj, error) {
	o, bad := applyUpdate(w.s.schema.Method(path, "PUT"), old, w.r.params, fixed...)
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	return o, nil
}

// store stages o as id unless semantic, the kind's semantic check's message, refuses it.
func (w sdnWrite) store(id string, o sdnObj, semantic string) (any, error) {
	if semantic != "" {
		return nil, w.failed("%s", semantic)
	}
	w.objects()[id] = o
	return nil, nil
}

// usedBy is the first (by id) staged object of kind whose field names id, or "".
func (w sdnWrite) usedBy(kind, field, id string) string {
	objs := w.s.st.SDN.Current[kind]
	for _, oid := range sortedKeys(objs) {
		if objs[oid][field] == id {
			return oid
		}
	}
	return ""
}

// removeUnused is the delete of a zone or controller: it must exist, the lock must allow it,
// and no object of kind may refer to it by field (format gets id and the user's id).
func (w sdnWrite) removeUnused(id, kind, field, format string) (any, error) {
	if _, err := w.existing(id); err != nil {
		return nil, err
	}
	if err := w.lock(); err != nil {
		return nil, err
	}
	if user := w.usedBy(kind, field, id); user != "" {
		return nil, w.failed(format, id, user)
	}
	return w.remove(id)
}

// remove unstages id.
func (w sdnWrite) remove(id string) (any, error) {
	delete(w.objects(), id)
	return nil, nil
}
