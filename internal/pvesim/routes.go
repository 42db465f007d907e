package pvesim

// The route table. As in vcsim, each resource file declares its own routes (zoneRoutes in zone.go,
// vmRoutes in vm.go, ...); this file assembles them and holds the helpers they share.

import "fmt"

// routes maps "METHOD /template" to its handler. Schema paths without a handler answer 501, like
// a method PVE does not implement.
type routes map[string]handlerFunc

// routes is every resource's routes.
func (s *Server) routes() routes {
	all := routes{}
	for _, part := range []routes{
		s.clusterRoutes(), s.quorumRoutes(), s.nodeNetworkRoutes(), s.taskRoutes(),
		s.sdnRoutes(), s.applyRoutes(), s.zoneRoutes(), s.vnetRoutes(), s.subnetRoutes(), s.controllerRoutes(),
		s.pluginRoutes(), s.fabricRoutes(), s.nodeSDNRoutes(),
		s.vmRoutes(), s.storageRoutes(),
		s.poolRoutes(), s.userRoutes(), s.tokenRoutes(), s.roleRoutes(), s.aclRoutes(),
		s.groupRoutes(), s.ticketRoutes(),
	} {
		all.add(part)
	}
	return all
}

// add registers part's routes. A "METHOD /path" that two resources claim is a programming error:
// it stops the server from being built, where a map would silently keep one of the two.
func (rs routes) add(part routes) {
	for k, h := range part {
		if _, dup := rs[k]; dup {
			panic(fmt.Sprintf("pvesim: route %q registered twice", k))
		}
		rs[k] = h
	}
}

// crud is the handlers of the usual collection; a nil one leaves its route out (501).
type crud struct{ list, create, get, update, remove handlerFunc }

// collection is the routes of the collection at path: list and create there, get, update and
// delete at its items, path/{id}.
func collection(path, id string, h crud) routes {
	item := path + "/{" + id + "}"
	rs := routes{}
	for k, f := range map[string]handlerFunc{"GET " + path: h.list, "POST " + path: h.create,
		"GET " + item: h.get, "PUT " + item: h.update, "DELETE " + item: h.remove} {
		if f != nil {
			rs[k] = f
		}
	}
	return rs
}

// on adapts a handler of one object (a VM, a user): lookup finds the request's object, with PVE's
// error when there is none, before h runs.
func on[T any](lookup func(r *reqCtx) (T, error), h func(r *reqCtx, obj T) (any, error)) handlerFunc {
	return func(r *reqCtx) (any, error) {
		obj, err := lookup(r)
		if err != nil {
			return nil, err
		}
		return h(r, obj)
	}
}

// subdirs is the answer of a PVE index path: the paths below it, in PVE's order.
func subdirs(names ...string) []map[string]string {
	out := make([]map[string]string, 0, len(names))
	for _, n := range names {
		out = append(out, map[string]string{"subdir": n})
	}
	return out
}
