package sdn

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
)

// VRFOptions are tenant_vrf's options (vrfSpec declares their rules).
type VRFOptions struct {
	Staging
	Name       string        `opt:"name"`
	Index      *int          `opt:"index"`
	VNetCount  int           `opt:"vnet_count"`
	Zone       *string       `opt:"zone"`
	VRFVXLAN   *int          `opt:"vrf_vxlan"`
	Controller *string       `opt:"controller"`
	MTU        *int          `opt:"mtu"`
	Nodes      *[]string     `opt:"nodes"`
	Owner      *string       `opt:"owner"`
	VNets      *[]VNetOption `opt:"vnets"`
	Adopt      bool          `opt:"adopt"`
	// Tenants converges many tenants in one run (module_vrf_many.go): name and index per entry.
	Tenants *[]VRFTenant `opt:"tenants"`
}

// VNetOption is one entry of vnets.
type VNetOption struct {
	ID      string `opt:"id"`
	Tag     int    `opt:"tag"`
	Subnet  string `opt:"subnet"`
	Gateway string `opt:"gateway"`
}

// VRFModule is tenant_vrf: plugins/modules/tenant_vrf.py documents it.
func VRFModule() module.Entry { return module.Declare(vrfSpec(), vrf) }

func vrfSpec() module.Spec {
	return module.Spec{
		Options: stagingSpec(map[string]*module.Option{
			"name":       {Type: module.TypeStr, Aliases: []string{"tenant"}},
			"index":      {Type: module.TypeInt},
			"vnet_count": {Type: module.TypeInt, Default: 1},
			"zone":       {Type: module.TypeStr},
			"vrf_vxlan":  {Type: module.TypeInt},
			"controller": {Type: module.TypeStr},
			"mtu":        {Type: module.TypeInt},
			"nodes":      {Type: module.TypeList, Elements: module.TypeStr},
			"owner":      {Type: module.TypeStr},
			"adopt":      {Type: module.TypeBool, Default: false},
			"vnets": {Type: module.TypeList, Elements: module.TypeDict, Options: map[string]*module.Option{
				"id":      {Type: module.TypeStr, Required: true},
				"tag":     {Type: module.TypeInt, Required: true},
				"subnet":  {Type: module.TypeStr, Required: true},
				"gateway": {Type: module.TypeStr},
			}},
			"tenants": tenantsOption(),
		}),
		// tenants stands for name and index (and for what each tenant's index derives)
		MutuallyExclusive: [][]string{{"name", "tenants"}, {"index", "tenants"}, {"zone", "tenants"}, {"vrf_vxlan", "tenants"},
			{"owner", "tenants"}, {"vnets", "tenants"}, {"vnet_count", "tenants"}},
		RequiredOneOf:     [][]string{{"name", "tenants"}, {"index", "zone", "tenants"}},
		SupportsCheckMode: true,
	}
}

// spec derives the zone, VNets and subnets from the plan (index) and explicit overrides.
func (o *VRFOptions) spec() (VRFSpec, error) {
	site, err := plan.SiteFromMap(o.Site)
	if err != nil {
		return VRFSpec{}, err
	}
	v := VRFSpec{Tenant: o.Name, Owner: "tenant-" + o.Name, Controller: site.Controller, MTU: site.MTU, Nodes: site.Nodes, Adopt: o.Adopt}
	if o.Index != nil {
		t, err := site.Tenant(o.Name, *o.Index, 0, o.VNetCount)
		if err != nil {
			// The plan calls the count "vnets"; here that is the explicit list, so name the
			// option the user set.
			if rest, ok := strings.CutPrefix(err.Error(), "vnets: "); ok {
				return v, fmt.Errorf("vnet_count: %s", rest)
			}
			return v, err
		}
		v.Owner, v.Zone, v.VRFVXLAN, v.VNets = t.OwnerTag, t.Zone, t.VRFVXLAN, PlannedVNets(t)
	}
	override(&v.Zone, o.Zone)
	override(&v.VRFVXLAN, o.VRFVXLAN)
	override(&v.Controller, o.Controller)
	override(&v.MTU, o.MTU)
	override(&v.Nodes, o.Nodes)
	override(&v.Owner, o.Owner)
	if o.VNets != nil {
		if v.VNets, err = vnetsOf(*o.VNets); err != nil {
			return v, err
		}
	}
	if o.Adopt && o.State != "present" {
		return v, fmt.Errorf("adopt: takes over a zone, so it needs state=present, not %s", o.State)
	}
	if o.State != "present" {
		// Removal needs only the zone and the owner mark.
		return v, CheckID(KindZone, "zone", v.Zone)
	}
	if v.VRFVXLAN == 0 || len(v.VNets) == 0 {
		return v, fmt.Errorf("without index, state=present needs zone, vrf_vxlan and vnets")
	}
	return v, v.Validate()
}

// PlannedVNets are the plan's VNets of tenant t, each with its subnet.
func PlannedVNets(t plan.Tenant) []VNetSpec {
	var out []VNetSpec
	for _, n := range t.VNets {
		out = append(out, VNetSpec{ID: n.ID, Tag: n.Tag, Subnet: n.Subnet, Gateway: n.Gateway})
	}
	return out
}

func vnetsOf(list []VNetOption) ([]VNetSpec, error) {
	var out []VNetSpec
	for i, e := range list {
		n := VNetSpec{ID: e.ID, Tag: e.Tag}
		var err error
		if n.Subnet, err = netip.ParsePrefix(e.Subnet); err != nil {
			return nil, fmt.Errorf("vnets[%d].subnet: %w", i, err)
		}
		if e.Gateway != "" {
			if n.Gateway, err = netip.ParseAddr(e.Gateway); err != nil {
				return nil, fmt.Errorf("vnets[%d].gateway: %w", i, err)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// vrfReads are the lists PlanVRF reads first.
func vrfReads() []pve.Read { return []pve.Read{listRead(zonesPath), listRead(vnetsPath)} }

// vrf is tenant_vrf's handler.
func vrf(m *module.Module, o *VRFOptions) (module.Result, error) {
	if o.Tenants != nil {
		return vrfMany(m, o)
	}
	spec, err := o.spec()
	if err != nil {
		return module.Result{}, err
	}
	return stage(m, &o.Staging, "zone", spec.Zone, vrfReads(), func(ctx context.Context, api API) (Work, error) {
		return PlanVRF(ctx, api, spec, o.State == "present")
	})
}
