package sdnmod

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/sdn"
)

// VRFSpec is tenant_vrf's argument spec.
func VRFSpec() module.Spec {
	opts := stagingOptions()
	opts["name"] = &module.Option{Type: module.TypeStr, Required: true, Aliases: []string{"tenant"}}
	opts["index"] = &module.Option{Type: module.TypeInt}
	opts["vnet_count"] = &module.Option{Type: module.TypeInt, Default: 1}
	opts["zone"] = &module.Option{Type: module.TypeStr}
	opts["vrf_vxlan"] = &module.Option{Type: module.TypeInt}
	opts["controller"] = &module.Option{Type: module.TypeStr}
	opts["mtu"] = &module.Option{Type: module.TypeInt}
	opts["nodes"] = &module.Option{Type: module.TypeList, Elements: module.TypeStr}
	opts["owner"] = &module.Option{Type: module.TypeStr}
	opts["vnets"] = &module.Option{Type: module.TypeList, Elements: module.TypeDict, Options: map[string]*module.Option{
		"id":      {Type: module.TypeStr, Required: true},
		"tag":     {Type: module.TypeInt, Required: true},
		"subnet":  {Type: module.TypeStr, Required: true},
		"gateway": {Type: module.TypeStr},
	}}
	return module.Spec{
		Options:           pve.WithConnectionOptions(opts),
		RequiredOneOf:     [][]string{{"index", "zone"}},
		SupportsCheckMode: true,
	}
}

// vrfSpecFrom derives the zone, VNets and subnets from the plan (index) and explicit overrides.
func vrfSpecFrom(m *module.Module) (sdn.VRFSpec, error) {
	site, err := plan.SiteFromMap(m.Dict("site"))
	if err != nil {
		return sdn.VRFSpec{}, err
	}
	name := m.Str("name")
	v := sdn.VRFSpec{Tenant: name, Owner: "tenant-" + name, Controller: site.Controller, MTU: site.MTU, Nodes: site.Nodes}
	if m.IsSet("index") {
		t, err := site.Tenant(name, m.Int("index"), 0, m.Int("vnet_count"))
		if err != nil {
			// The plan calls the count "vnets"; here that is the explicit list, so name the
			// option the user set.
			if rest, ok := strings.CutPrefix(err.Error(), "vnets: "); ok {
				return v, fmt.Errorf("vnet_count: %s", rest)
			}
			return v, err
		}
		v.Owner, v.Zone, v.VRFVXLAN = t.OwnerTag, t.Zone, t.VRFVXLAN
		for _, n := range t.VNets {
			v.VNets = append(v.VNets, sdn.VNetSpec{ID: n.ID, Tag: n.Tag, Subnet: n.Subnet, Gateway: n.Gateway})
		}
	}
	if m.IsSet("zone") {
		v.Zone = m.Str("zone")
	}
	if m.IsSet("vrf_vxlan") {
		v.VRFVXLAN = m.Int("vrf_vxlan")
	}
	if m.IsSet("controller") {
		v.Controller = m.Str("controller")
	}
	if m.IsSet("mtu") {
		v.MTU = m.Int("mtu")
	}
	if m.IsSet("nodes") {
		v.Nodes = m.StrList("nodes")
	}
	if m.IsSet("owner") {
		v.Owner = m.Str("owner")
	}
	if m.IsSet("vnets") {
		v.VNets = nil
		for i, e := range m.List("vnets") {
			d, _ := e.(map[string]any)
			n := sdn.VNetSpec{ID: fmt.Sprint(d["id"])}
			n.Tag, _ = d["tag"].(int)
			if n.Subnet, err = netip.ParsePrefix(fmt.Sprint(d["subnet"])); err != nil {
				return v, fmt.Errorf("vnets[%d].subnet: %w", i, err)
			}
			if g, ok := d["gateway"].(string); ok && g != "" {
				if n.Gateway, err = netip.ParseAddr(g); err != nil {
					return v, fmt.Errorf("vnets[%d].gateway: %w", i, err)
				}
			}
			v.VNets = append(v.VNets, n)
		}
	}
	present := m.Str("state") == "present"
	if !present {
		// Removal needs only the zone and the owner mark.
		if err := sdn.CheckID(sdn.KindZone, "zone", v.Zone); err != nil {
			return v, err
		}
		return v, nil
	}
	if v.VRFVXLAN == 0 || len(v.VNets) == 0 {
		return v, fmt.Errorf("without index, state=present needs zone, vrf_vxlan and vnets")
	}
	return v, v.Validate()
}

// VRF is tenant_vrf's handler.
func VRF(m *module.Module) (module.Result, error) {
	spec, err := vrfSpecFrom(m)
	if err != nil {
		return module.Result{}, err
	}
	if err := checkTimes(m); err != nil {
		return module.Result{}, err
	}
	api, err := connect(m)
	if err != nil {
		return module.Result{}, err
	}
	ctx, cancel := withTimeout(m)
	defer cancel()
	w, err := sdn.PlanVRF(ctx, api, spec, m.Str("state") == "present")
	if err != nil {
		return module.Result{}, err
	}
	res, err := converge(ctx, m, api, w)
	res.Values["zone"] = spec.Zone
	return res, err
}
