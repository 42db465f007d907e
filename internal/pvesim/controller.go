package pvesim

// SDN controllers (/cluster/sdn/controllers); one EVPN controller per cluster.

import (
	"fmt"
	"slices"
)

var controllerKind = sdnObjectKind("controllers", "/cluster/sdn/controllers", "controller", "controller")

func (s *Server) controllerRoutes() routes {
	return controllerKind.routes(crud{s.controllerList, s.controllerCreate, s.controllerGet, s.controllerUpdate, s.controllerDelete})
}

func (s *Server) controllerList(r *reqCtx) (any, error) {
	return s.visible("controllers", r, func(o sdnObj) bool {
		return typeMatches(r, o) && s.st.has(r.who, "/sdn/controllers/"+fmt.Sprint(o["controller"]), []string{"SDN.Audit", "SDN.Allocate"}, true)
	}), nil
}

func (s *Server) controllerGet(r *reqCtx) (any, error) {
	id := r.params.Str("controller")
	return s.itemGet("controllers", id, r.params, fmt.Sprintf("sdn '%s' does not exist", id))
}

var controllerOptions = map[string]struct{ allowed, required []string }{
	"evpn":   {[]string{"asn", "peers", "fabric"}, []string{"asn"}},
	"bgp":    {[]string{"asn", "node", "peers", "ebgp", "ebgp-multihop", "loopback", "bgp-multipath-as-path-relax"}, []string{"asn", "node", "peers"}},
	"isis":   {[]string{"node", "isis-domain", "isis-ifaces", "isis-net", "loopback"}, []string{"node", "isis-domain", "isis-ifaces", "isis-net"}},
	"faucet": {nil, nil},
}

func (s *Server) controllerCheck(id string, o sdnObj) (string, error) {
	opts := controllerOptions[fmt.Sprint(o["type"])]
	for _, k := range sortedKeys(o) {
		if k != "controller" && k != "type" && !slices.Contains(opts.allowed, k) {
			return "", plainErr("unexpected property '%s'", k)
		}
	}
	for _, k := range opts.required {
		if _, ok := o[k]; !ok {
			return "", plainErr("missing value for required option '%s'", k)
		}
	}
	if o["type"] == "evpn" {
		_, p := o["peers"]
		_, f := o["fabric"]
		if p == f {
			return "", plainErr("must have exactly one of peers / fabric defined")
		}
		for cid, c := range s.st.SDN.Current["controllers"] {
			if cid != id && c["type"] == "evpn" {
				return "only 1 global evpn controller can be defined", nil
			}
		}
		if fab, ok := o["fabric"]; ok {
			if _, ok := s.st.SDN.Current["fabrics"][fmt.Sprint(fab)]; !ok {
				return fmt.Sprintf("fabric '%v' does not exist in configuration", fab), nil
			}
		}
	}
	return "", nil
}

func (s *Server) controllerCreate(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, controllerKind, opCreate)
	return s.controllerStore(w, w.created(), w.lockNew)
}

func (s *Server) controllerUpdate(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, controllerKind, opUpdate)
	_, o, err := w.existingUpdated()
	if err != nil {
		return nil, err
	}
	return s.controllerStore(w, o, w.lockAndDigest)
}

// controllerStore is what a create and an update of a controller share, in PVE's order: the
// type's options, lock (new id, or digest), then the semantic checks' verdict, and the store.
func (s *Server) controllerStore(w sdnWrite, o sdnObj, lock func() error) (any, error) {
	m, err := s.controllerCheck(w.id, o)
	if err != nil {
		return nil, err
	}
	if err := lock(); err != nil {
		return nil, err
	}
	return w.store(o, m)
}

func (s *Server) controllerDelete(r *reqCtx) (any, error) {
	return s.sdnWrite(r, controllerKind, opDelete).removeUnused("zones", "controller", "controller %s is used by %s")
}
