package sdn

import (
	"context"
	"fmt"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
)

// tenant_vrf's tenants option: many tenants' VRFs in one run. One module run reads the zones,
// the VNets and the node status once for all of them (the client's read cache), each tenant's
// subnets once, and applies once, where a task looped over the tenants read every list again
// for each tenant and needed its own apply (issue #29: a 63-tenant no-op).

// VRFTenant is one entry of tenants: what a tenant's identifiers are derived from.
type VRFTenant struct {
	Name      string `opt:"name"`
	Index     int    `opt:"index"`
	VNetCount int    `opt:"vnet_count"`
}

func tenantsOption() *module.Option {
	return &module.Option{Type: module.TypeList, Elements: module.TypeDict, Options: map[string]*module.Option{
		"name":       {Type: module.TypeStr, Required: true, Aliases: []string{"tenant"}},
		"index":      {Type: module.TypeInt, Required: true},
		"vnet_count": {Type: module.TypeInt, Default: 1},
	}}
}

// specs derives each listed tenant's VRF as the module derives one tenant's, refusing a name or
// an index listed twice (their zones and VNIs would collide); each error names the entry.
func (o *VRFOptions) specs() ([]VRFSpec, error) {
	refs := make([]plan.TenantRef, len(*o.Tenants))
	for i, t := range *o.Tenants {
		refs[i] = plan.TenantRef{Name: t.Name, Index: t.Index}
	}
	if err := plan.DistinctTenants(refs); err != nil {
		return nil, err
	}
	out := make([]VRFSpec, 0, len(*o.Tenants))
	for i, t := range *o.Tenants {
		one := *o
		one.Tenants, one.Name, one.Index, one.VNetCount = nil, t.Name, &t.Index, t.VNetCount
		s, err := one.spec()
		if err != nil {
			return nil, fmt.Errorf("tenants[%d] (%s): %w", i, t.Name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// vrfMany is tenant_vrf with tenants: every tenant planned from the same reads, then one
// converge (one apply with apply=true) for all of them. The result's zones lists each tenant's zone.
func vrfMany(m *module.Module, o *VRFOptions) (module.Result, error) {
	specs, err := o.specs()
	if err != nil {
		return module.Result{}, err
	}
	zones := make([]string, len(specs))
	for i, s := range specs {
		zones[i] = s.Zone
	}
	var first []pve.Read
	if len(specs) > 0 {
		first = vrfReads()
	}
	return stage(m, &o.Staging, "zones", zones, first, func(ctx context.Context, api API) (Work, error) {
		works := make([]Work, 0, len(specs))
		for i, s := range specs {
			// The first tenant's plan prefetches every tenant's subnets: they are read from
			// the same VNet list.
			var later []VRFSpec
			if i == 0 {
				later = specs[1:]
			}
			w, err := planVRF(ctx, api, s, o.State == "present", later)
			if err != nil {
				return Work{}, fmt.Errorf("tenants[%d] (%s): %w", i, s.Tenant, err)
			}
			works = append(works, w)
		}
		return mergeWorks(works), nil
	})
}

// mergeWorks is the work of many tenants as one: every tenant's objects, and the views and index
// of what was read (the lists each tenant read are the same lists; each one's subnets are its own).
func mergeWorks(works []Work) Work {
	out := Work{Index: Index{}, Views: map[Kind][]Observed{}}
	seen := map[Kind]map[string]bool{}
	for _, w := range works {
		out.Desired = append(out.Desired, w.Desired...)
		out.Remove = append(out.Remove, w.Remove...)
		for k, o := range w.Index {
			out.Index[k] = o
		}
		for kind, list := range w.Views {
			if seen[kind] == nil {
				seen[kind] = map[string]bool{}
			}
			for _, o := range list {
				if !seen[kind][o.Key()] {
					seen[kind][o.Key()] = true
					out.Views[kind] = append(out.Views[kind], o)
				}
			}
		}
	}
	return out
}
