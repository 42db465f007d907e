package pvesim

import (
	"slices"

	"github.com/deevnet/tenant/internal/sdnrender"
)

// Node-level SDN views (/nodes/{node}/sdn/...): zone status follows the node's rendered files.

// nodeSDNRoutes: a node's view of the applied SDN. A zone's bridges and ip-vrf report nothing.
func (s *Server) nodeSDNRoutes() routes {
	rs := collection("/nodes/{node}/sdn/zones", "zone", crud{list: s.nodeSDNZones, get: s.nodeSDNZone})
	rs.add(routes{"GET /nodes/{node}/sdn": s.nodeSDNIndex, "GET /nodes/{node}/sdn/zones/{zone}/content": s.nodeSDNZoneContent,
		"GET /nodes/{node}/sdn/vnets/{vnet}": s.nodeSDNVnet})
	for _, sub := range []string{"bridges", "ip-vrf"} {
		rs["GET /nodes/{node}/sdn/zones/{zone}/"+sub] = s.nodeSDNEmpty
	}
	return rs
}

func (s *Server) nodeSDNZones(r *reqCtx) (any, error) {
	out := []map[string]any{}
	// the zones as the node's renderer reads them from the running config (only the zones section
	// converted: pve_sdn_apply polls this after every apply)
	run := sdnrender.FromObjects(sdnConfig{"zones": s.st.SDN.Running["zones"]}, nil, 0).Zones
	node := r.params.Str("node")
	status := s.nodeSDNStatus(node)
	for _, z := range sortedKeys(run) {
		// a zone restricted to other nodes is not reported on this one
		if nodes := run[z].Nodes; len(nodes) > 0 && !slices.Contains(nodes, node) {
			continue
		}
		if s.st.has(r.who, "/sdn/zones/"+z, []string{"SDN.Audit"}, false) {
			out = append(out, map[string]any{"zone": z, "status": status, "type": run[z].Type})
		}
	}
	return out, nil
}

func (s *Server) nodeSDNZone(r *reqCtx) (any, error) {
	return subdirs("content", "bridges", "ip-vrf"), nil
}

func (s *Server) nodeSDNIndex(r *reqCtx) (any, error) {
	return subdirs("zones", "vnets", "fabrics"), nil
}

func (s *Server) nodeSDNEmpty(r *reqCtx) (any, error) { return []any{}, nil }

// nodeSDNZoneContent lists the applied vnets of a zone as deployed on the node.
func (s *Server) nodeSDNZoneContent(r *reqCtx) (any, error) {
	out := []map[string]any{}
	if s.st.SDN.Running == nil {
		return out, nil
	}
	zone := r.params.Str("zone")
	for _, v := range sortedKeys(s.st.SDN.Running["vnets"]) {
		if s.st.SDN.Running["vnets"][v]["zone"] == zone {
			out = append(out, map[string]any{"vnet": v, "status": "available"})
		}
	}
	return out, nil
}

func (s *Server) nodeSDNVnet(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	if err := s.vnetPerm(r, vnet, "SDN.Audit"); err != nil {
		return nil, err
	}
	return subdirs("mac-vrf"), nil
}
