package pvesim

// SDN vnets (/cluster/sdn/vnets).

import (
	"fmt"
	"sort"
)

var vnetKind = sdnObjectKind("vnets", "/cluster/sdn/vnets", "vnet", "vnet")

func (s *Server) vnetRoutes() routes {
	return vnetKind.routes(crud{s.vnetList, s.vnetCreate, s.vnetGet, s.vnetUpdate, s.vnetDelete})
}

func (s *Server) vnetZone(vnet string) (string, error) {
	v, ok := s.st.SDN.Current["vnets"][vnet]
	if !ok {
		return "", plainErr("sdn vnet '%s' does not exist", vnet)
	}
	return fmt.Sprint(v["zone"]), nil
}

// vnetPerm checks privs on /sdn/zones/<zone>/<vnet>, the zone looked up in
// the current config (so a pending-deleted vnet is "does not exist").
func (s *Server) vnetPerm(r *reqCtx, vnet string, privs ...string) error {
	zone, err := s.vnetZone(vnet)
	if err != nil {
		return err
	}
	return s.st.check(r.who, "/sdn/zones/"+zone+"/"+vnet, privs, true)
}

func (s *Server) vnetList(r *reqCtx) (any, error) {
	return s.visible("vnets", r, func(o sdnObj) bool {
		zone := fmt.Sprint(o["zone"])
		if p, ok := o["pending"].(sdnObj); ok && o["zone"] == nil {
			zone = fmt.Sprint(p["zone"])
		}
		return s.st.has(r.who, "/sdn/zones/"+zone+"/"+fmt.Sprint(o["vnet"]), []string{"SDN.Audit", "SDN.Allocate"}, true)
	}), nil
}

func (s *Server) vnetGet(r *reqCtx) (any, error) {
	id := r.params.Str("vnet")
	if err := s.vnetPerm(r, id, "SDN.Audit", "SDN.Allocate"); err != nil {
		return nil, err
	}
	return s.itemGet("vnets", id, r.params, fmt.Sprintf("sdn vnet '%s' does not exist", id))
}

func (s *Server) vnetSemantic(id string, o sdnObj, hasSubnets bool) string {
	cur := s.st.SDN.Current
	z := cur["zones"][fmt.Sprint(o["zone"])]
	if z == nil {
		return "unknown section type ''"
	}
	if z["type"] == "evpn" || z["type"] == "vxlan" {
		if _, ok := o["tag"]; !ok {
			return "400 Parameter verification failed.\ntag: missing vxlan tag\n"
		}
		if o["vlanaware"] == int64(1) {
			return "400 Parameter verification failed.\nvlanaware: vlan-aware option can't be enabled with evpn\n"
		}
		for _, vid := range sortedKeys(cur["vnets"]) {
			v := cur["vnets"][vid]
			if vid == id {
				continue
			}
			if vz := cur["zones"][fmt.Sprint(v["zone"])]; vz != nil && (vz["type"] == "evpn" || vz["type"] == "vxlan") && jsonEqual(v["tag"], o["tag"]) {
				return fmt.Sprintf("400 Parameter verification failed.\ntag: vxlan tag %v already exist in vnet %s in zone %v\n", o["tag"], vid, v["zone"])
			}
		}
	}
	if o["vlanaware"] == int64(1) && hasSubnets {
		return "400 Parameter verification failed.\nvlanaware: vlanaware vnet can't have subnets\n"
	}
	return ""
}

func (s *Server) vnetSubnets(vnet string) []string {
	var out []string
	for id, sn := range s.st.SDN.Current["subnets"] {
		if sn["vnet"] == vnet {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func (s *Server) vnetCreate(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, vnetKind, opCreate)
	if err := w.lockNew(); err != nil {
		return nil, err
	}
	o := w.created()
	o["type"] = "vnet"
	return w.store(o, s.vnetSemantic(w.id, o, false))
}

func (s *Server) vnetUpdate(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, vnetKind, opUpdate)
	if err := s.vnetPerm(r, w.id, "SDN.Allocate"); err != nil {
		return nil, err
	}
	old := w.objects()[w.id]
	o, err := w.update(old)
	if err != nil {
		return nil, err
	}
	if _, ok := o["zone"]; !ok {
		return nil, w.failed("cannot delete zone")
	}
	if err := w.lockAndDigest(); err != nil {
		return nil, err
	}
	subs := s.vnetSubnets(w.id)
	if o["zone"] != old["zone"] {
		if len(subs) > 0 {
			return nil, w.failed("can't change zone if subnets exist")
		}
		// moving to another zone needs Allocate there too
		if err := s.st.check(r.who, "/sdn/zones/"+fmt.Sprint(o["zone"]), []string{"SDN.Allocate"}, false); err != nil {
			return nil, err
		}
	}
	return w.store(o, s.vnetSemantic(w.id, o, len(subs) > 0))
}

func (s *Server) vnetDelete(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, vnetKind, opDelete)
	if err := w.lockVNet(w.id); err != nil {
		return nil, err
	}
	if len(s.vnetSubnets(w.id)) > 0 {
		return nil, paramErr(map[string]string{"vnet": "Can't delete vnet if subnets exists"})
	}
	return w.remove()
}
