package pvesim

// SDN subnets (/cluster/sdn/vnets/{vnet}/subnets); ids are <zone>-<network>-<mask>.

import (
	"fmt"
	"net/netip"
	"strings"
)

// subnetKind: a subnet's id is "<zone>-<net>-<len>" (subnetID), not the path's subnet parameter.
var subnetKind = sdnObjectKind("subnets", "/cluster/sdn/vnets/{vnet}/subnets", "subnet", "subnet", "vnet")

func (s *Server) subnetRoutes() routes {
	return subnetKind.routes(crud{s.subnetList, s.subnetCreate, s.subnetGet, s.subnetUpdate, s.subnetDelete})
}

func (s *Server) subnetList(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	out := []sdnObj{}
	zone, err := s.vnetZone(vnet)
	if err != nil {
		return nil, err
	}
	if !s.st.has(r.who, "/sdn/zones/"+zone+"/"+vnet, []string{"SDN.Audit", "SDN.Allocate"}, true) {
		return out, nil
	}
	for _, o := range s.view("subnets", r.params) {
		if o["vnet"] == vnet {
			out = append(out, o)
		}
	}
	return out, nil
}

// subnetID turns a CIDR or an id into the canonical "<zone>-<net>-<len>".
func subnetID(zone, v string) string {
	if strings.Contains(v, "/") {
		return zone + "-" + strings.ReplaceAll(v, "/", "-")
	}
	return v
}

func (s *Server) subnetGet(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	if err := s.vnetPerm(r, vnet, "SDN.Audit", "SDN.Allocate"); err != nil {
		return nil, err
	}
	zone, _ := s.vnetZone(vnet)
	id := subnetID(zone, r.params.Str("subnet"))
	o, err := s.itemGet("subnets", id, r.params, fmt.Sprintf("sdn subnet '%s' does not exist", id))
	if err != nil {
		return nil, err
	}
	if o.(sdnObj)["vnet"] != vnet {
		return nil, paramErr(map[string]string{"vnet": "wrong vnet"})
	}
	return o, nil
}

func (s *Server) subnetSemantic(cidr string, o sdnObj) string {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "400 Parameter verification failed.\nsubnet: invalid subnet\n"
	}
	if gw, ok := o["gateway"]; ok {
		a, err := netip.ParseAddr(fmt.Sprint(gw))
		if err != nil || (!pfx.Masked().Contains(a) && (!a.Is4() || pfx.Bits() != 32)) {
			return fmt.Sprintf("400 Parameter verification failed.\ngateway: gateway %v is not in subnet %s\n", gw, cidr)
		}
	}
	if rs, ok := o["dhcp-range"].([]any); ok {
		var parsed []sdnObj
		var ranges [][2]netip.Addr
		for _, it := range rs {
			kv := sdnObj{}
			for _, part := range strings.Split(fmt.Sprint(it), ",") {
				k, v, _ := strings.Cut(part, "=")
				kv[k] = v
			}
			a, e1 := netip.ParseAddr(fmt.Sprint(kv["start-address"]))
			b, e2 := netip.ParseAddr(fmt.Sprint(kv["end-address"]))
			if e1 != nil || e2 != nil || b.Less(a) || !pfx.Masked().Contains(a) || !pfx.Masked().Contains(b) {
				return "400 Parameter verification failed.\ndhcp-range: invalid dhcp range\n"
			}
			for _, rg := range ranges {
				if !b.Less(rg[0]) && !rg[1].Less(a) {
					return "400 Parameter verification failed.\ndhcp-range: dhcp ranges overlap\n"
				}
			}
			ranges = append(ranges, [2]netip.Addr{a, b})
			parsed = append(parsed, kv)
		}
		arr := []any{}
		for _, p := range parsed {
			arr = append(arr, map[string]any(p))
		}
		o["dhcp-range"] = arr
	}
	return ""
}

func (s *Server) subnetCreate(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	w := s.sdnWrite(r, subnetKind, opCreate)
	if err := w.lockVNet(vnet); err != nil {
		return nil, err
	}
	v := s.st.SDN.Current["vnets"][vnet]
	zone := fmt.Sprint(v["zone"])
	cidr := r.params.Str("subnet")
	if !strings.Contains(cidr, "/") {
		return nil, paramErr(map[string]string{"subnet": "invalid format - value does not look like a valid CIDR network\n"})
	}
	w.id = subnetID(zone, cidr)
	if _, ok := w.objects()[w.id]; ok {
		return nil, w.failed(w.kind.exists, w.id)
	}
	if v["vlanaware"] == int64(1) {
		return nil, w.failed("you can't add a subnet on a vlanaware vnet")
	}
	o := w.created()
	o["subnet"], o["type"], o["vnet"] = w.id, "subnet", vnet
	return w.store(o, s.subnetSemantic(cidr, o))
}

func (s *Server) subnetUpdate(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	w := s.sdnWrite(r, subnetKind, opUpdate)
	id, err := s.subnetOf(r, vnet)
	if err != nil {
		return nil, err
	}
	w.id = id
	old := w.objects()[id]
	if old["vnet"] != vnet {
		return nil, paramErr(map[string]string{"vnet": "wrong vnet"})
	}
	if err := w.lockAndDigest(); err != nil {
		return nil, err
	}
	o, err := w.update(old)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(id, "-")
	cidr := strings.Join(parts[1:len(parts)-1], "-") + "/" + parts[len(parts)-1]
	return w.store(o, s.subnetSemantic(cidr, o))
}

// subnetOf is the id of the request's subnet of vnet, after the write permission on the vnet and
// the subnet's existence.
func (s *Server) subnetOf(r *reqCtx, vnet string) (string, error) {
	if err := s.vnetPerm(r, vnet, "SDN.Allocate"); err != nil {
		return "", err
	}
	zone, _ := s.vnetZone(vnet)
	id := subnetID(zone, r.params.Str("subnet"))
	if _, ok := s.st.SDN.Current["subnets"][id]; !ok {
		return "", plainErr("sdn subnet '%s' does not exist", id)
	}
	return id, nil
}

func (s *Server) subnetDelete(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, subnetKind, opDelete)
	id, err := s.subnetOf(r, r.params.Str("vnet"))
	if err != nil {
		return nil, err
	}
	w.id = id
	if err := w.lock(); err != nil {
		return nil, err
	}
	return w.remove()
}
