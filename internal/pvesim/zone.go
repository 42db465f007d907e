package pvesim

// SDN zones (/cluster/sdn/zones): per-type options and create-time checks.

import (
	"fmt"
	"slices"
)

var zoneKind = sdnObjectKind("zones", "/cluster/sdn/zones", "zone", "zone")

func (s *Server) zoneRoutes() routes {
	return zoneKind.routes(crud{s.zoneList, s.zoneCreate, s.zoneGet, s.zoneUpdate, s.zoneDelete})
}

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
		if !slices.Contains(zoneCommon, k) && !slices.Contains(opts.allowed, k) {
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
	return s.visible("zones", r, func(o sdnObj) bool {
		return typeMatches(r, o) && s.st.has(r.who, "/sdn/zones/"+fmt.Sprint(o["zone"]), []string{"SDN.Audit", "SDN.Allocate"}, true)
	}), nil
}

func (s *Server) zoneGet(r *reqCtx) (any, error) {
	return s.itemGet("zones", r.params.Str("zone"), r.params, fmt.Sprintf("sdn '%s' does not exist", r.params.Str("zone")))
}

func (s *Server) zoneCreate(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, zoneKind, opCreate)
	o := w.created()
	if err := s.zoneChecks(w, o, w.lockNew); err != nil {
		return nil, err
	}
	s.zoneMAC(o)
	return w.store(o, "")
}

// zoneChecks are the checks a create and an update of a zone share, in PVE's order: the type's
// options, lock (new id, or digest), then the checks PVE runs inside the lock.
func (s *Server) zoneChecks(w sdnWrite, o sdnObj, lock func() error) error {
	if err := s.zoneTypeCheck(fmt.Sprint(o["type"]), o); err != nil {
		return err
	}
	if err := lock(); err != nil {
		return err
	}
	if m := s.zoneSemantic(w.id, o); m != "" {
		return w.failed("%s", m)
	}
	return nil
}

// zoneMAC gives an EVPN zone without one a generated router MAC, as PVE does.
func (s *Server) zoneMAC(o sdnObj) {
	if o["type"] == "evpn" {
		if _, ok := o["mac"]; !ok {
			o["mac"] = s.macAddr()
		}
	}
}

func (s *Server) zoneUpdate(r *reqCtx) (any, error) {
	w := s.sdnWrite(r, zoneKind, opUpdate)
	old, o, err := w.existingUpdated()
	if err != nil {
		return nil, err
	}
	if err := s.zoneChecks(w, o, w.lockAndDigest); err != nil {
		return nil, err
	}
	if !jsonEqual(o["ipam"], old["ipam"]) && s.zoneHasSubnets(w.id) {
		return nil, w.failed("400 Parameter verification failed.\nipam: can't change ipam if a subnet is already defined in this zone\n")
	}
	s.zoneMAC(o)
	return w.store(o, "")
}

// zoneHasSubnets reports whether a subnet of one of the zone's vnets exists.
func (s *Server) zoneHasSubnets(zone string) bool {
	cur := s.st.SDN.Current
	for _, sn := range cur["subnets"] {
		if vn := cur["vnets"][fmt.Sprint(sn["vnet"])]; vn != nil && vn["zone"] == zone {
			return true
		}
	}
	return false
}

func (s *Server) zoneDelete(r *reqCtx) (any, error) {
	return s.sdnWrite(r, zoneKind, opDelete).removeUnused("vnets", "zone", "zone %s is used by vnet %s")
}
