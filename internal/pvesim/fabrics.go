package pvesim

import (
	"fmt"
	"net/netip"
	"strings"
)

// PVE 9 fabrics (openfabric, ospf) and their nodes, versioned like the other
// SDN objects. Node objects are keyed "<fabric>/<node>".

// fabricKind: PVE 9's fabric API words its messages its own way ("adding fabric failed: ...").
var fabricKind = sdnKind{section: "fabrics", path: "/cluster/sdn/fabrics/fabric", id: "id",
	ops: [3]string{"adding fabric", "updating fabric", "deleting fabric"}, exists: "fabric '%s' already exists in config"}

// fabricNodeKind: a fabric node's id is "<fabric>/<node>" (fabricNodeWrite).
var fabricNodeKind = sdnKind{section: "fabricnodes", path: "/cluster/sdn/fabrics/node/{fabric_id}", id: "node_id",
	ops: [3]string{"adding node", "updating node", "deleting node"}}

// fabricRoutes: fabrics, their nodes, and the status a node reports for its fabric.
func (s *Server) fabricRoutes() routes {
	rs := fabricKind.routes(crud{s.fabricList, s.fabricCreate, s.fabricGet, s.fabricUpdate, s.fabricDelete})
	rs.add(fabricNodeKind.routes(crud{s.fabricNodeList, s.fabricNodeCreate, s.fabricNodeGet, s.fabricNodeUpdate, s.fabricNodeDelete}))
	rs.add(routes{"GET /cluster/sdn/fabrics": s.fabricIndex, "GET /cluster/sdn/fabrics/all": s.fabricAll,
		"GET /cluster/sdn/fabrics/node": s.fabricNodeListAll, "GET /nodes/{node}/sdn/fabrics/{fabric}": s.nodeFabricIndex})
	for _, view := range fabricStatusViews {
		rs["GET /nodes/{node}/sdn/fabrics/{fabric}/"+view] = s.nodeFabricStatus
	}
	return rs
}

func (s *Server) fabricIndex(r *reqCtx) (any, error) {
	return subdirs("fabric", "node", "all"), nil
}

func (s *Server) fabricVisible(r *reqCtx, id string) bool {
	return s.st.has(r.who, "/sdn/fabrics/"+id, []string{"SDN.Audit", "SDN.Allocate"}, true)
}

func (s *Server) nodeVisible(r *reqCtx, node string) bool {
	return s.st.has(r.who, "/nodes/"+node, []string{"Sys.Audit", "Sys.Modify"}, true)
}

func (s *Server) fabricList(r *reqCtx) (any, error) {
	return s.visible("fabrics", r, func(o sdnObj) bool { return s.fabricVisible(r, fmt.Sprint(o["id"])) }), nil
}

func (s *Server) fabricNodeObjs(r *reqCtx, fabric string) []sdnObj {
	out := []sdnObj{}
	for _, o := range s.view("fabricnodes", r.params) {
		f := fmt.Sprint(o["fabric_id"])
		if (fabric == "" || f == fabric) && s.fabricVisible(r, f) && s.nodeVisible(r, fmt.Sprint(o["node_id"])) {
			delete(o, "id")
			out = append(out, o)
		}
	}
	return out
}

func (s *Server) fabricNodeListAll(r *reqCtx) (any, error) { return s.fabricNodeObjs(r, ""), nil }

func (s *Server) fabricNodeList(r *reqCtx) (any, error) {
	return s.fabricNodeObjs(r, r.params.Str("fabric_id")), nil
}

func (s *Server) fabricAll(r *reqCtx) (any, error) {
	f, _ := s.fabricList(r)
	return map[string]any{"fabrics": f, "nodes": s.fabricNodeObjs(r, "")}, nil
}

func (s *Server) fabricGet(r *reqCtx) (any, error) {
	id := r.params.Str("id")
	o, ok := s.st.SDN.Current["fabrics"][id]
	if !ok {
		return nil, plainErr("fabric '%s' does not exist in configuration", id)
	}
	return copyObj(o), nil
}

// fabricRules checks protocol rules and prefix overlap; it canonicalises ip_prefix.
func (s *Server) fabricRules(id string, o sdnObj) string {
	proto := o["protocol"]
	_, v4 := o["ip_prefix"]
	_, v6 := o["ip6_prefix"]
	switch proto {
	case "openfabric":
		if !v4 && !v6 {
			return "openfabric fabric needs an ip_prefix or ip6_prefix"
		}
	case "ospf":
		if v6 {
			return "IPv6 is currently not supported for protocol ospf"
		}
		if !v4 {
			return "ospf fabric needs an ip_prefix"
		}
		if _, ok := o["area"]; !ok {
			return "missing area for ospf fabric"
		}
	}
	for _, k := range []string{"ip_prefix", "ip6_prefix"} {
		if v, ok := o[k]; ok {
			p, err := netip.ParsePrefix(fmt.Sprint(v))
			if err != nil {
				return fmt.Sprintf("invalid %s '%v'", k, v)
			}
			o[k] = p.Masked().String()
		}
	}
	for oid, other := range s.st.SDN.Current["fabrics"] {
		if oid == id {
			continue
		}
		if proto == "ospf" && other["protocol"] == "ospf" && jsonEqual(other["area"], o["area"]) {
			return "duplicate OSPF area"
		}
		for _, k := range []string{"ip_prefix", "ip6_prefix"} {
			a, e1 := netip.ParsePrefix(fmt.Sprint(o[k]))
			b, e2 := netip.ParsePrefix(fmt.Sprint(other[k]))
			if e1 == nil && e2 == nil && a.Overlaps(b) {
				return fmt.Sprintf("prefix %s overlaps with fabric '%s'", a, oid)
			}
		}
	}
	return ""
}

func (s *Server) fabricCreate(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, fabricKind, opCreate)
	if err := w.lockNew(); err != nil {
		return nil, err
	}
	o := w.created()
	return w.store(o, s.fabricRules(w.id, o))
}

func (s *Server) fabricUpdate(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, fabricKind, opUpdate)
	old, ok := w.objects()[w.id]
	if !ok {
		return nil, w.failed("fabric '%s' does not exist in configuration", w.id)
	}
	if err := w.lockAndDigest(); err != nil {
		return nil, err
	}
	if r.params.Str("protocol") != old["protocol"] {
		return nil, w.failed("cannot change protocol of fabric '%s'", w.id)
	}
	o, err := w.update(old)
	if err != nil {
		return nil, err
	}
	return w.store(o, s.fabricRules(w.id, o))
}

func (s *Server) fabricDelete(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, fabricKind, opDelete)
	id, cur := w.id, s.st.SDN.Current
	if _, ok := w.objects()[id]; !ok {
		return nil, w.failed("fabric '%s' does not exist in configuration", id)
	}
	if err := w.lock(); err != nil {
		return nil, err
	}
	if cid := w.usedBy("controllers", "fabric", id); cid != "" {
		return nil, w.failed("this fabric is still used in the EVPN controller \"%s\"", cid)
	}
	for _, zid := range sortedKeys(cur["zones"]) {
		if z := cur["zones"][zid]; z["type"] == "vxlan" && z["fabric"] == id {
			return nil, w.failed("this fabric is still used in the VXLAN zone \"%s\"", zid)
		}
	}
	// removing a fabric removes its nodes: Sys.Modify on each node first, then all of them
	for _, n := range cur["fabricnodes"] {
		if n["fabric_id"] == id {
			if err := s.st.check(r.who, "/nodes/"+fmt.Sprint(n["node_id"]), []string{"Sys.Modify"}, false); err != nil {
				return nil, err
			}
		}
	}
	for key, n := range cur["fabricnodes"] {
		if n["fabric_id"] == id {
			delete(cur["fabricnodes"], key)
		}
	}
	return w.remove()
}

// fabricNodeWrite is a write of the request's node of fabric f, keyed "<fabric>/<node>": one
// node may be in several fabrics.
func (s *Server) fabricNodeWrite(r *reqCtx, op sdnOp) (w sdnWrite, f, n string) {
	w = s.sdnWrite(r, fabricNodeKind, op)
	f, n = r.params.Str("fabric_id"), w.id
	w.id = f + "/" + n
	return w, f, n
}

func (s *Server) fabricNodeGet(r *reqCtx) (any, error) {
	f, n := r.params.Str("fabric_id"), r.params.Str("node_id")
	o, ok := s.st.SDN.Current["fabricnodes"][f+"/"+n]
	if !ok {
		return nil, plainErr("node '%s' does not exist in fabric '%s'", n, f)
	}
	c := copyObj(o)
	delete(c, "id")
	return c, nil
}

// fabricNodeRules checks node IPs against the fabric prefixes and interface reuse.
func (s *Server) fabricNodeRules(fab sdnObj, key string, o sdnObj) string {
	node := fmt.Sprint(o["node_id"])
	for _, fam := range []struct{ pfx, ip string }{{"ip_prefix", "ip"}, {"ip6_prefix", "ip6"}} {
		pv, hasP := fab[fam.pfx]
		iv, hasIP := o[fam.ip]
		if hasP && !hasIP {
			return fmt.Sprintf("node '%s' does not have an IP configured for this fabric prefix %v", node, pv)
		}
		if hasP && hasIP {
			p, _ := netip.ParsePrefix(fmt.Sprint(pv))
			a, err := netip.ParseAddr(fmt.Sprint(iv))
			if err != nil || !p.Contains(a) {
				return fmt.Sprintf("node IP %v is outside the IP prefix %v of the fabric", iv, pv)
			}
		}
	}
	ifaces := map[string]bool{}
	if l, ok := o["interfaces"].([]any); ok {
		for _, it := range l {
			for _, part := range strings.Split(fmt.Sprint(it), ",") {
				if name, ok := strings.CutPrefix(part, "name="); ok {
					ifaces[name] = true
				} else if !strings.Contains(part, "=") {
					ifaces[part] = true
				}
			}
		}
	}
	for k, other := range s.st.SDN.Current["fabricnodes"] {
		if k == key {
			continue
		}
		if other["fabric_id"] == o["fabric_id"] {
			for _, f := range []string{"ip", "ip6"} {
				if _, ok := o[f]; ok && jsonEqual(other[f], o[f]) {
					return fmt.Sprintf("node IP %v is already used by node '%v'", o[f], other["node_id"])
				}
			}
		}
		if other["node_id"] == o["node_id"] && other["fabric_id"] != o["fabric_id"] {
			if l, ok := other["interfaces"].([]any); ok {
				for _, it := range l {
					for _, part := range strings.Split(fmt.Sprint(it), ",") {
						if name, ok := strings.CutPrefix(part, "name="); ok && ifaces[name] {
							return "interface is already in use by another fabric"
						}
					}
				}
			}
		}
	}
	return ""
}

func (s *Server) fabricNodeCreate(r *reqCtx) (any, error) {
	w, f, n := s.fabricNodeWrite(r, opCreate)
	if err := w.lock(); err != nil {
		return nil, err
	}
	fab, ok := s.st.SDN.Current["fabrics"][f]
	if !ok {
		return nil, w.failed("fabric '%s' does not exist in configuration", f)
	}
	if _, ok := w.objects()[w.id]; ok {
		return nil, w.failed("node '%s' already exists in config for fabric %s", n, f)
	}
	if r.params.Str("protocol") != fab["protocol"] {
		return nil, w.failed("protocol '%s' does not match fabric '%s'", r.params.Str("protocol"), f)
	}
	o := w.created()
	if m := s.fabricNodeRules(fab, w.id, o); m != "" {
		return nil, w.failed("%s", m)
	}
	o["id"] = w.id
	return w.store(o, "")
}

func (s *Server) fabricNodeUpdate(r *reqCtx) (any, error) {
	w, f, n := s.fabricNodeWrite(r, opUpdate)
	old, ok := w.objects()[w.id]
	if !ok {
		return nil, w.failed("node '%s' does not exist in fabric '%s'", n, f)
	}
	if err := w.lockAndDigest(); err != nil {
		return nil, err
	}
	o, err := w.update(old)
	if err != nil {
		return nil, err
	}
	return w.store(o, s.fabricNodeRules(s.st.SDN.Current["fabrics"][f], w.id, o))
}

func (s *Server) fabricNodeDelete(r *reqCtx) (any, error) {
	w, f, n := s.fabricNodeWrite(r, opDelete)
	if _, ok := w.objects()[w.id]; !ok {
		return nil, w.failed("node '%s' does not exist in fabric '%s'", n, f)
	}
	if err := w.lock(); err != nil {
		return nil, err
	}
	return w.remove()
}

// ---- node-level fabric status ----

// fabricStatusViews are what a node reports for a fabric, in PVE's index order.
var fabricStatusViews = []string{"routes", "neighbors", "interfaces"}

func (s *Server) nodeFabricIndex(r *reqCtx) (any, error) {
	if _, err := s.runningFabricNode(r); err != nil {
		return nil, err
	}
	return subdirs(fabricStatusViews...), nil
}

func (s *Server) runningFabricNode(r *reqCtx) (sdnObj, error) {
	f := r.params.Str("fabric")
	if s.st.SDN.Running == nil || s.st.SDN.Running["fabrics"][f] == nil {
		return nil, plainErr("fabric '%s' does not exist in configuration", f)
	}
	return s.st.SDN.Running["fabricnodes"][f+"/"+r.params.Str("node")], nil
}

// nodeFabricStatus: interfaces of the applied node config; no routing
// daemon runs, so routes and neighbors are empty.
func (s *Server) nodeFabricStatus(r *reqCtx) (any, error) {
	n, err := s.runningFabricNode(r)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	if !strings.HasSuffix(r.path, "/interfaces") || n == nil {
		return out, nil
	}
	if l, ok := n["interfaces"].([]any); ok {
		for _, it := range l {
			for _, part := range strings.Split(fmt.Sprint(it), ",") {
				if name, ok := strings.CutPrefix(part, "name="); ok {
					out = append(out, map[string]any{"name": name, "state": "up", "type": "point-to-point"})
				}
			}
		}
	}
	return out, nil
}
