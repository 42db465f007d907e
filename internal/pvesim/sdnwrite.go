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

// sdnKind is one kind of staged SDN object: where the config and the API keep it, and how PVE's
// messages name its writes.
type sdnKind struct {
	section string    // its section of the SDN config: "zones"
	path    string    // the collection's path; an object's is path/{id}
	id      string    // the object path's parameter: "zone"
	fixed   []string  // the properties an update may not delete
	ops     [3]string // a create, an update and a delete (sdnOp) in "<op> failed: ...": "create sdn zone object"
	exists  string    // the message for a create of a staged id (a format of the id)
}

// sdnOp indexes sdnKind.ops.
type sdnOp int

const (
	opCreate sdnOp = iota
	opUpdate
	opDelete
)

// sdnObjectKind is a kind of PVE's SDN section config (zones, vnets, subnets, controllers), "sdn
// <name> object" in messages. An update may delete neither the id property, nor fixed, nor the type.
func sdnObjectKind(section, path, id, name string, fixed ...string) sdnKind {
	noun := "sdn " + name + " object"
	return sdnKind{section: section, path: path, id: id, fixed: append(append([]string{id}, fixed...), "type"),
		ops: [3]string{"create " + noun, "update " + noun, "delete " + noun}, exists: noun + " ID '%s' already defined"}
}

// routes is the kind's collection routes.
func (k sdnKind) routes(h crud) routes { return collection(k.path, k.id, h) }

// sdnWrite is one write of an object of a kind.
type sdnWrite struct {
	s    *Server
	r    *reqCtx
	kind sdnKind
	op   string // as PVE names it in messages
	// id is the object's: the object path's parameter. Subnets and fabric nodes are keyed
	// otherwise; their handlers set it.
	id string
}

func (s *Server) sdnWrite(r *reqCtx, kind sdnKind, op sdnOp) sdnWrite {
	return sdnWrite{s: s, r: r, kind: kind, op: kind.ops[op], id: r.params.Str(kind.id)}
}

// objects is the kind's section of the staged (current) config.
func (w sdnWrite) objects() map[string]sdnObj { return w.s.st.SDN.Current[w.kind.section] }

// created is the new object the request describes.
func (w sdnWrite) created() sdnObj {
	return storeParams(w.s.schema.Method(w.kind.path, "POST"), w.r.params)
}

// existing is the staged object, or PVE's "sdn '<id>' does not exist" (zones, controllers).
func (w sdnWrite) existing() (sdnObj, error) {
	o, ok := w.objects()[w.id]
	if !ok {
		return nil, plainErr("sdn '%s' does not exist", w.id)
	}
	return o, nil
}

// existingUpdated is the staged object and the request merged into a copy of it.
func (w sdnWrite) existingUpdated() (old, o sdnObj, err error) {
	if old, err = w.existing(); err != nil {
		return nil, nil, err
	}
	if o, err = w.update(old); err != nil {
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

// lockNew checks the lock token, then that the id is not staged yet.
func (w sdnWrite) lockNew() error {
	if err := w.lock(); err != nil {
		return err
	}
	if _, ok := w.objects()[w.id]; ok {
		return w.failed(w.kind.exists, w.id)
	}
	return nil
}

// lockAndDigest checks the lock token, then the digest the caller read the section with.
func (w sdnWrite) lockAndDigest() error {
	if err := w.lock(); err != nil {
		return err
	}
	return w.s.checkDigest(w.kind.section, w.r.params, w.op)
}

// failed is PVE's "<op> failed: <message>".
func (w sdnWrite) failed(format string, a ...any) error {
	return plainErr("%s failed: "+format, append([]any{w.op}, a...)...)
}

// update merges the request into a copy of old.
func (w sdnWrite) update(old sdnObj) (sdnObj, error) {
	o, bad := applyUpdate(w.s.schema.Method(w.kind.path+"/{"+w.kind.id+"}", "PUT"), old, w.r.params, w.kind.fixed...)
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	return o, nil
}

// store stages o unless semantic, the kind's semantic check's message, refuses it.
func (w sdnWrite) store(o sdnObj, semantic string) (any, error) {
	if semantic != "" {
		return nil, w.failed("%s", semantic)
	}
	w.objects()[w.id] = o
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
// and no object of kind may refer to it by field (format gets its id and the user's id).
func (w sdnWrite) removeUnused(kind, field, format string) (any, error) {
	if _, err := w.existing(); err != nil {
		return nil, err
	}
	if err := w.lock(); err != nil {
		return nil, err
	}
	if user := w.usedBy(kind, field, w.id); user != "" {
		return nil, w.failed(format, w.id, user)
	}
	return w.remove()
}

// remove unstages the object.
func (w sdnWrite) remove() (any, error) {
	delete(w.objects(), w.id)
	return nil, nil
}
