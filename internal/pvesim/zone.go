package pvesim

// SDN zones (/cluster/sdn/zones): per-type options and create-time checks.

import (
	"fmt"
)

var zoneOptions = map[string]struct{ allowed, required []string }{
	"evpn": {[]string{"controller", "vrf-vxlan", "exitnodes", "exitnodes-primary", "exitnodes-local-routing", "advertise-subnets",
		"disable-arp-nd-suppression", "bridge-disable-mac-learning", "rt-import", "vxlan-port", "mac"}, []string{"controller", "vrf-vxlan"}},
	"simple": {[]string{"dhcp"}, nil},
	"vlan":   {[]string{"bridge"}, []string{"bridge"}},
	"qinq":   {[]string{"bridge", "tag", "vlan-protocol"}, []string{"bridge", "tag"}},
	"vxlan":  {[]string{"peers", "fabric", "vxlan-port", "bridge-disable-mac-learning"}, nil},
	"faucet": {[]string{"dp-id"}, []string{"dp-id"}},
}

var zoneCommon = []string{"zone", "type", "nodes", "ipam", "dns", "reversedns", "dnszone", "mtu"}

func (s *Server) zoneTypeCheck(typ string, o sdnObj) error {
	opts := zoneOptions[typ]
	for _, k := range sortedKeys(o) {
		if !contains(zoneCommon, k) && !contains(opts.allowed, k) {
			return plainErr("unexpected property '%s'", k)
		}
	}
	for _, k := range opts.required {
		if _, ok := o[k]; !ok {
			return plainErr("missing value for required option '%s'", k)
		}
	}
	return nil
}

// zoneSemantic runs the checks PVE does inside the SDN lock.
func (s *Server) zoneSemantic(id string, o sdnObj) string {
	cur := s.st.SDN.Current
	if o["type"] == "evpn" {
		c := fmt.Sprint(o["controller"])
		ctl, ok := cur["controllers"][c]
		if !ok {
			return fmt.Sprintf("controller %s don't exist", c)
		}
		if ctl["type"] != "evpn" {
			return fmt.Sprintf("%s is not a evpn controller type", c)
		}
		for _, zid := range sortedKeys(cur["zones"]) {
			if zid != id && jsonEqual(cur["zones"][zid]["vrf-vxlan"], o["vrf-vxlan"]) {
				return fmt.Sprintf("vrf-vxlan %v is already declared in %s", o["vrf-vxlan"], zid)
			}
		}
	}
	if o["type"] == "vxlan" {
		_, p := o["peers"]
		_, f := o["fabric"]
		if p == f {
			return "400 Parameter verification failed.\npeers: must have exactly one of peers / fabric defined\n"
		}
	}
	if ip, ok := o["ipam"]; ok {
		if _, ok := s.st.SDN.IPAMs[fmt.Sprint(ip)]; !ok {
			return fmt.Sprintf("400 Parameter verification failed.\nipam: %v not existing\n", ip)
		}
	}
	for _, k := range []string{"dns", "reversedns"} {
		if d, ok := o[k]; ok {
			if _, ok := s.st.SDN.DNS[fmt.Sprint(d)]; !ok {
				return fmt.Sprintf("400 Parameter verification failed.\n%s: %v don't exist\n", k, d)
			}
		}
	}
	if _, ok := o["dnszone"]; ok {
		if _, ok := o["dns"]; !ok {
			return "400 Parameter verification failed.\ndnszone: missing dns server\n"
		}
	}
	return ""
}

func (s *Server) zoneList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, o := range s.view("zones", r.params) {
		id := fmt.Sprint(o["zone"])
		if t := r.params.Str("type"); t != "" && o["type"] != t {
			continue
		}
		if s.st.has(r.who, "/sdn/zones/"+id, []string{"SDN.Audit", "SDN.Allocate"}, true) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s *Server) zoneGet(r *reqCtx) (any, error) {
	return s.itemGet("zones", r.params.Str("zone"), r.params, fmt.Sprintf("sdn '%s' does not exist", r.params.Str("zone")))
}

func (s *Server) zoneCreate(r *reqCtx) (any, error) {
	mi := s.schema.Method("/cluster/sdn/zones", "POST")
	o := storeParams(mi, r.params)
	id := r.params.Str("zone")
	if err := s.zoneTypeCheck(fmt.Sprint(o["type"]), o); err != nil {
		return nil, err
	}
	const op = "create sdn zone object"
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	if _, ok := cur["zones"][id]; ok {
		return nil, plainErr("%s failed: sdn zone object ID '%s' already defined", op, id)
	}
	if m := s.zoneSemantic(id, o); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	if o["type"] == "evpn" {
		if _, ok := o["mac"]; !ok {
			o["mac"] = s.macAddr()
		}
	}
	cur["zones"][id] = o
	return nil, nil
}

func (s *Server) zoneUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("zone")
	const op = "update sdn zone object"
	cur := s.st.SDN.Current
	old, ok := cur["zones"][id]
	if !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	mi := s.schema.Method("/cluster/sdn/zones/{zone}", "PUT")
	o, bad := applyUpdate(mi, old, r.params, "zone", "type")
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	if err := s.zoneTypeCheck(fmt.Sprint(o["type"]), o); err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if err := s.checkDigest("zones", r.params, op); err != nil {
		return nil, err
	}
	if m := s.zoneSemantic(id, o); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	if !jsonEqual(o["ipam"], old["ipam"]) {
		for _, sn := range cur["subnets"] {
			if vn := cur["vnets"][fmt.Sprint(sn["vnet"])]; vn != nil && vn["zone"] == id {
				return nil, plainErr("%s failed: 400 Parameter verification failed.\nipam: can't change ipam if a subnet is already defined in this zone\n", op)
			}
		}
	}
	if o["type"] == "evpn" {
		if _, ok := o["mac"]; !ok {
			o["mac"] = s.macAddr()
		}
	}
	cur["zones"][id] = o
	return nil, nil
}

func (s *Server) zoneDelete(r *reqCtx) (any, error) {
	id := r.params.Str("zone")
	const op = "delete sdn zone object"
	cur := s.st.SDN.Current
	if _, ok := cur["zones"][id]; !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	for _, vid := range sortedKeys(cur["vnets"]) {
		if cur["vnets"][vid]["zone"] == id {
			return nil, plainErr("%s failed: zone %s is used by vnet %s", op, id, vid)
		}
	}
	delete(cur["zones"], id)
	return nil, nil
}
