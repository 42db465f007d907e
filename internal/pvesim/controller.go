package pvesim

// SDN controllers (/cluster/sdn/controllers); one EVPN controller per cluster.

import (
	"fmt"
)

func (s *Server) controllerList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, o := range s.view("controllers", r.params) {
		if t := r.params.Str("type"); t != "" && o["type"] != t {
			continue
		}
		if s.st.has(r.who, "/sdn/controllers/"+fmt.Sprint(o["controller"]), []string{"SDN.Audit", "SDN.Allocate"}, true) {
			out = append(out, o)
		}
	}
	return out, nil
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
		if k != "controller" && k != "type" && !contains(opts.allowed, k) {
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
	id := r.params.Str("controller")
	const op = "create sdn controller object"
	o := storeParams(s.schema.Method("/cluster/sdn/controllers", "POST"), r.params)
	m, err := s.controllerCheck(id, o)
	if err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	if _, ok := cur["controllers"][id]; ok {
		return nil, plainErr("%s failed: sdn controller object ID '%s' already defined", op, id)
	}
	if m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["controllers"][id] = o
	return nil, nil
}

func (s *Server) controllerUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("controller")
	const op = "update sdn controller object"
	cur := s.st.SDN.Current
	old, ok := cur["controllers"][id]
	if !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	o, bad := applyUpdate(s.schema.Method("/cluster/sdn/controllers/{controller}", "PUT"), old, r.params, "controller", "type")
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	m, err := s.controllerCheck(id, o)
	if err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if err := s.checkDigest("controllers", r.params, op); err != nil {
		return nil, err
	}
	if m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["controllers"][id] = o
	return nil, nil
}

func (s *Server) controllerDelete(r *reqCtx) (any, error) {
	id := r.params.Str("controller")
	const op = "delete sdn controller object"
	cur := s.st.SDN.Current
	if _, ok := cur["controllers"][id]; !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	for _, zid := range sortedKeys(cur["zones"]) {
		if cur["zones"][zid]["controller"] == id {
			return nil, plainErr("%s failed: controller %s is used by %s", op, id, zid)
		}
	}
	delete(cur["controllers"], id)
	return nil, nil
}
