package pvesim

// Pools (/pools): members, comment, moving VMs between pools.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deevnet/tenant/internal/pveschema"
)

// poolKind: a pool with a VM in it cannot be deleted.
var poolKind = accessKind[Pool]{path: "/pools", param: "poolid", missing: "pool '%s' does not exist",
	objects: func(st *state) map[string]*Pool { return st.Pools },
	undeletable: func(st *state, id string) string {
		for _, vm := range st.VMs {
			if vm.Pool == id {
				return fmt.Sprintf("pool '%s' is not empty", id)
			}
		}
		for _, sid := range st.Pools[id].Storage {
			if _, ok := st.Storages[sid]; ok { // a storage removed since does not count
				return fmt.Sprintf("pool '%s' is not empty (contains storage '%s')", id, sid)
			}
		}
		return ""
	},
	acl: func(id string, a ACL) bool { return a.Path == "/pool/"+id },
}

// poolRoutes: the pools, the usual collection, and PVE's older update and delete at the
// collection path (poolid a parameter).
func (s *Server) poolRoutes() routes {
	rs := poolKind.routes(crud{s.poolList, s.poolCreate, s.poolGet, s.poolUpdate, s.poolDelete})
	rs.add(routes{"PUT /pools": s.poolUpdate, "DELETE /pools": s.poolDelete})
	return rs
}

func (s *Server) poolMembers(pool string) []map[string]any {
	out := []map[string]any{}
	for _, id := range s.sortedVMIDs() {
		vm := s.st.VMs[id]
		if vm.Pool == pool {
			out = append(out, map[string]any{"id": fmt.Sprintf("qemu/%d", id), "type": "qemu", "vmid": id, "node": vm.Node, "name": vm.Config["name"], "status": vm.Status})
		}
	}
	// storage members after the guests, as Pool.pm read_pool lists them; one that no longer
	// exists is left out
	if p := s.st.Pools[pool]; p != nil {
		for _, sid := range slices.Sorted(slices.Values(p.Storage)) {
			sc, ok := s.st.Storages[sid]
			if !ok {
				continue
			}
			node := s.st.Nodes[0].Name
			if len(sc.Nodes) > 0 && !slices.Contains(sc.Nodes, node) {
				node = slices.Min(sc.Nodes)
			}
			out = append(out, map[string]any{"id": "storage/" + node + "/" + sid, "type": "storage", "storage": sid, "node": node})
		}
	}
	return out
}

func (s *Server) poolList(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, id := range sortedKeys(s.st.Pools) {
		if p := r.params.Str("poolid"); p != "" && p != id {
			continue
		}
		if !s.st.has(r.who, "/pool/"+id, []string{"Pool.Audit"}, false) {
			continue
		}
		out = append(out, withOptional(map[string]any{"poolid": id, "members": s.poolMembers(id)}, "comment", s.st.Pools[id].Comment))
	}
	return out, nil
}

func (s *Server) poolGet(r *reqCtx) (any, error) {
	id, p, err := poolKind.named(r, s.st, "")
	if err != nil {
		return nil, err
	}
	return withOptional(map[string]any{"members": s.poolMembers(id)}, "comment", p.Comment), nil
}

func (s *Server) poolCreate(r *reqCtx) (any, error) {
	id := r.params.Str("poolid")
	if s.st.Pools[id] != nil {
		return nil, plainErr("create pool failed: pool '%s' already exists", id)
	}
	if i := strings.LastIndex(id, "/"); i > 0 && s.st.Pools[id[:i]] == nil {
		return nil, plainErr("create pool failed: parent '%s' does not exist", id[:i])
	}
	s.st.Pools[id] = &Pool{Comment: r.params.Str("comment")}
	return nil, nil
}

func (s *Server) poolUpdate(r *reqCtx) (any, error) {
	id, p, err := poolKind.named(r, s.st, "update pools")
	if err != nil {
		return nil, err
	}
	r.updateStr(&p.Comment, "comment")
	for _, v := range pveschema.SplitList(r.params.Str("vms")) {
		vmid := atoiSafe(v)
		vm := s.st.VMs[vmid]
		if vm == nil {
			return nil, plainErr("update pools failed: VM %d does not exist", vmid)
		}
		if err := s.st.check(r.who, fmt.Sprintf("/vms/%d", vmid), []string{"VM.Allocate"}, false); err != nil {
			return nil, err
		}
		if r.params.Bool("delete") {
			if vm.Pool == id {
				vm.Pool = ""
			}
			continue
		}
		if vm.Pool != "" && vm.Pool != id && !r.params.Bool("allow-move") {
			return nil, plainErr("update pools failed: VM %d belongs already to pool '%s' and 'allow-move' is not set", vmid, vm.Pool)
		}
		vm.Pool = id
	}
	return nil, s.poolStorage(r, p)
}

// poolStorage adds (or with delete removes) the request's storage members of p: Pool.pm
// update_pool, check_perm_modify on each /storage/<id>. Their /storage/<id> then get the pool's
// roles (perms.go rolesFor).
func (s *Server) poolStorage(r *reqCtx, p *Pool) error {
	for _, sid := range pveschema.SplitList(r.params.Str("storage")) {
		if err := s.st.checkPermModify(r.who, "/storage/"+sid); err != nil {
			return err
		}
		member := slices.Contains(p.Storage, sid)
		switch {
		case r.params.Bool("delete") && !member:
			return plainErr("update pools failed: Storage '%s' is not a pool member", sid)
		case r.params.Bool("delete"):
			p.Storage = slicesDelete(p.Storage, sid)
		case member:
			return plainErr("update pools failed: Storage '%s' is already a pool member", sid)
		default:
			p.Storage = append(p.Storage, sid)
		}
	}
	return nil
}

func (s *Server) poolDelete(r *reqCtx) (any, error) {
	return poolKind.remove(r, s.st, "delete pool")
}
