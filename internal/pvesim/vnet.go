package pvesim

// SDN vnets (/cluster/sdn/vnets).

import (
	"fmt"
	"sort"
)

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
	out := []sdnObj{}
	for _, o := range s.view("vnets", r.params) {
		zone := fmt.Sprint(o["zone"])
		if p, ok := o["pending"].(sdnObj); ok && o["zone"] == nil {
			zone = fmt.Sprint(p["zone"])
		}
		if s.st.has(r.who, "/sdn/zones/"+zone+"/"+fmt.Sprint(o["vnet"]), []string{"SDN.Audit", "SDN.Allocate"}, true) {
			out = append(out, o)
		}
	}
	return out, nil
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
	id := r.params.Str("vnet")
	const op = "create sdn vnet object"
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	if _, ok := cur["vnets"][id]; ok {
		return nil, plainErr("%s failed: sdn vnet object ID '%s' already defined", op, id)
	}
	o := storeParams(s.schema.Method("/cluster/sdn/vnets", "POST"), r.params)
	o["type"] = "vnet"
	if m := s.vnetSemantic(id, o, false); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["vnets"][id] = o
	return nil, nil
}

func (s *Server) vnetUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("vnet")
	const op = "update sdn vnet object"
	if err := s.vnetPerm(r, id, "SDN.Allocate"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	old := cur["vnets"][id]
	o, bad := applyUpdate(s.schema.Method("/cluster/sdn/vnets/{vnet}", "PUT"), old, r.params, "vnet", "type")
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	if _, ok := o["zone"]; !ok {
		return nil, plainErr("%s failed: cannot delete zone", op)
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if err := s.checkDigest("vnets", r.params, op); err != nil {
		return nil, err
	}
	subs := s.vnetSubnets(id)
	if o["zone"] != old["zone"] {
		if len(subs) > 0 {
			return nil, plainErr("%s failed: can't change zone if subnets exist", op)
		}
		// moving to another zone needs Allocate there too
		if err := s.st.check(r.who, "/sdn/zones/"+fmt.Sprint(o["zone"]), []string{"SDN.Allocate"}, false); err != nil {
			return nil, err
		}
	}
	if m := s.vnetSemantic(id, o, len(subs) > 0); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["vnets"][id] = o
	return nil, nil
}

func (s *Server) vnetDelete(r *reqCtx) (any, error) {
	id := r.params.Str("vnet")
	const op = "delete sdn vnet object"
	if err := s.vnetPerm(r, id, "SDN.Allocate"); err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if len(s.vnetSubnets(id)) > 0 {
		return nil, paramErr(map[string]string{"vnet": "Can't delete vnet if subnets exists"})
	}
	delete(s.st.SDN.Current["vnets"], id)
	return nil, nil
}
