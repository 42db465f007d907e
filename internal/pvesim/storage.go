package pvesim

// The storage configuration, storage.cfg: GET/POST /storage, GET/PUT/DELETE /storage/{storage}
// (pve-storage src/PVE/API2/Storage/Config.pm), with the section checks of each plugin type
// (PVE::SectionConfig check_config and check_value, PVE::Storage::Plugin decode_value) for the
// types pvesim serves: dir, lvmthin and lvm.

import (
	"slices"
	"strings"
)

// storageType is one plugin's options and content types (its options() and plugindata()).
type storageType struct {
	required []string // not optional: missing at create is refused
	fixed    []string // set at create only
	optional []string
	content  []string // what content may hold
	dflt     []string // content when none is given
}

// storageTypes are DirPlugin.pm, LvmThinPlugin.pm and LVMPlugin.pm options() and plugindata().
var storageTypes = map[string]storageType{
	"dir": {required: []string{"path"}, fixed: []string{"path", "snapshot-as-volume-chain"},
		optional: []string{"content-dirs", "nodes", "shared", "disable", "prune-backups", "max-protected-backups", "content", "format",
			"mkdir", "create-base-path", "create-subdirs", "is_mountpoint", "bwlimit", "preallocation", "snapshot-as-volume-chain"},
		content: []string{"images", "rootdir", "vztmpl", "iso", "backup", "snippets", "none", "import"}, dflt: []string{"images", "rootdir"}},
	"lvmthin": {required: []string{"thinpool", "vgname"}, fixed: []string{"thinpool", "vgname"},
		optional: []string{"nodes", "disable", "content", "bwlimit"},
		content:  []string{"images", "rootdir"}, dflt: []string{"images", "rootdir"}},
	"lvm": {required: []string{"vgname"}, fixed: []string{"vgname", "base"},
		optional: []string{"nodes", "shared", "disable", "saferemove", "saferemove-stepsize", "saferemove_throughput", "content", "base",
			"tagged_only", "bwlimit", "snapshot-as-volume-chain"},
		content: []string{"images", "rootdir"}, dflt: []string{"images"}},
}

func (s *Server) storageRoutes() routes {
	rs := collection("/storage", "storage", crud{list: s.storageList, create: s.storageCreate, get: s.storageGet,
		update: s.storageUpdate, remove: s.storageDelete})
	rs.add(routes{"GET /nodes/{node}/storage": s.nodeStorageList, "GET /nodes/{node}/storage/{storage}/status": s.nodeStorageStatus,
		"GET /nodes/{node}/disks/lvmthin": s.nodeThinPools})
	return rs
}

// storageEntry is a storage as GET /storage prints it (api_storage_config: lists joined by ",").
func storageEntry(sc StorageConfig) map[string]any {
	e := map[string]any{"storage": sc.ID, "type": sc.Type, "content": strings.Join(sc.Content, ","), "digest": "0"}
	if len(sc.Nodes) > 0 {
		e["nodes"] = strings.Join(sc.Nodes, ",")
	}
	if sc.Shared {
		e["shared"] = 1
	}
	if sc.Disable {
		e["disable"] = 1
	}
	for k, v := range map[string]string{"vgname": sc.VGName, "thinpool": sc.ThinPool, "path": sc.Path} {
		if v != "" {
			e[k] = v
		}
	}
	return e
}

// storageList is Config.pm index: the storages the caller may audit or allocate on.
func (s *Server) storageList(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, sid := range sortedKeys(s.st.Storages) {
		sc := s.st.Storages[sid]
		if t := r.params.Str("type"); t != "" && t != sc.Type {
			continue
		}
		if s.st.has(r.who, "/storage/"+sid, []string{"Datastore.Audit", "Datastore.AllocateSpace"}, true) {
			out = append(out, storageEntry(sc))
		}
	}
	return out, nil
}

func (s *Server) storageGet(r *reqCtx) (any, error) {
	sc, ok := s.st.Storages[r.params.Str("storage")]
	if !ok {
		return nil, plainErr("storage '%s' does not exist", r.params.Str("storage"))
	}
	return storageEntry(sc), nil
}

// checkStorageConfig is SectionConfig check_config for type typ: each given key must be an option
// of the type (fixed ones only at create), the required ones present at create; content keeps
// the types the plugin supports (decode_value warns about and drops the others). The other types'
// sections are not modelled: any option the schema allows is kept.
func checkStorageConfig(typ string, p Params, create bool) (map[string]string, *apiError) {
	def, known := storageTypes[typ]
	set := map[string]string{}
	for _, k := range sortedKeys(p) {
		switch k {
		case "storage", "type", "digest", "delete":
			continue
		}
		if !known {
			set[k] = p.Str(k)
			continue
		}
		if !slices.Contains(def.optional, k) && !slices.Contains(def.required, k) && !slices.Contains(def.fixed, k) {
			return nil, plainErr("unexpected property '%s'", k)
		}
		if !create && slices.Contains(def.fixed, k) {
			return nil, plainErr("can't change value of fixed parameter '%s'", k)
		}
		set[k] = p.Str(k)
	}
	if create {
		for _, k := range def.required {
			if _, ok := set[k]; !ok {
				return nil, plainErr("missing value for required option '%s'", k)
			}
		}
	}
	if c, ok := set["content"]; ok && known {
		var keep []string
		for _, x := range splitList(c) {
			if slices.Contains(def.content, x) && !slices.Contains(keep, x) {
				keep = append(keep, x)
			}
		}
		if slices.Contains(keep, "none") && len(keep) > 1 {
			return nil, plainErr("unable to combine 'none' with other content types")
		}
		if len(keep) == 0 && !slices.Contains(def.content, "none") {
			return nil, plainErr("storage does not support content type 'none'")
		}
		set["content"] = strings.Join(keep, ",")
	}
	return set, nil
}

// splitList is PVE::Tools::split_list: items separated by commas, semicolons or spaces.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' })
}

// applyStorage writes the checked keys set into sc.
func applyStorage(sc *StorageConfig, set map[string]string) {
	for k, v := range set {
		switch k {
		case "content":
			sc.Content = splitList(v)
		case "nodes":
			sc.Nodes = splitList(v)
		case "shared":
			sc.Shared = v == "1"
		case "disable":
			sc.Disable = v == "1"
		case "vgname":
			sc.VGName = v
		case "thinpool":
			sc.ThinPool = v
		case "path":
			sc.Path = v
		}
	}
}

// storageCreate is Config.pm create: the section checks before the lock; in it, an id already
// defined, and the activation on the local node (the API's node, when the storage is enabled
// there) that finds a missing thin pool before anything is written.
func (s *Server) storageCreate(r *reqCtx) (any, error) {
	sid, typ := r.params.Str("storage"), r.params.Str("type")
	set, err := checkStorageConfig(typ, r.params, true)
	if err != nil {
		return nil, err
	}
	if _, ok := s.st.Storages[sid]; ok {
		return nil, plainErr("create storage failed: storage ID '%s' already defined", sid)
	}
	sc := StorageConfig{ID: sid, Type: typ, Content: storageTypes[typ].dflt}
	if _, known := storageTypes[typ]; !known {
		sc.Content = []string{"images"}
	}
	applyStorage(&sc, set)
	sc.Clone = typ == "lvmthin"
	if local := s.st.Nodes[0].Name; !sc.Disable && sc.onNode(local) {
		if err := s.activateStorage(sc, local); err != nil {
			return nil, plainErr("create storage failed: %s", err)
		}
	}
	s.st.Storages[sid] = sc
	return map[string]any{"storage": sid, "type": typ}, nil
}

// storageUpdate is Config.pm update: the storage must exist, fixed options stay, delete takes
// only optional ones that are not also set.
func (s *Server) storageUpdate(r *reqCtx) (any, error) {
	sid := r.params.Str("storage")
	sc, ok := s.st.Storages[sid]
	if !ok {
		return nil, plainErr("update storage failed: storage '%s' does not exist", sid)
	}
	set, err := checkStorageConfig(sc.Type, r.params, false)
	if err != nil {
		err.Message = "update storage failed: " + err.Message
		return nil, err
	}
	def := storageTypes[sc.Type]
	dels := splitList(r.params.Str("delete"))
	for _, k := range dels {
		switch {
		case slices.Contains(def.required, k):
			return nil, plainErr("update storage failed: unable to delete required option '%s'", k)
		case slices.Contains(def.fixed, k):
			return nil, plainErr("update storage failed: unable to delete fixed option '%s'", k)
		case !slices.Contains(def.optional, k):
			return nil, plainErr("update storage failed: no such option '%s'", k)
		}
		if _, both := set[k]; both {
			return nil, plainErr("update storage failed: cannot set and delete property '%s' at the same time!", k)
		}
	}
	for _, k := range dels {
		switch k {
		case "content":
			sc.Content = def.dflt
		case "nodes":
			sc.Nodes = nil
		case "shared":
			sc.Shared = false
		case "disable":
			sc.Disable = false
		}
	}
	applyStorage(&sc, set)
	s.st.Storages[sid] = sc
	return map[string]any{"storage": sid, "type": sc.Type}, nil
}

// storageDelete is Config.pm delete: the section goes (the volumes on it stay where they are,
// as on PVE), and with it every ACL on /storage/<id> (PVE::AccessControl::remove_storage_access).
func (s *Server) storageDelete(r *reqCtx) (any, error) {
	sid := r.params.Str("storage")
	if _, ok := s.st.Storages[sid]; !ok {
		return nil, plainErr("delete storage failed: storage '%s' does not exist", sid)
	}
	delete(s.st.Storages, sid)
	s.st.dropACLs(func(a ACL) bool { return a.Path == "/storage/"+sid })
	return nil, nil
}

// onNode is storage_check_node: a storage without nodes is on every node.
func (sc StorageConfig) onNode(node string) bool {
	return len(sc.Nodes) == 0 || slices.Contains(sc.Nodes, node)
}
