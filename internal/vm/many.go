package vm

import (
	"fmt"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
)

// tenant_vm's tenants option: many tenants' VMs in one run. Converge reads /cluster/resources
// and the nodes once for all of them, where a task looped over the tenants read them again for
// each tenant (issue #29: a 63-tenant no-op). Every other option applies to each tenant.

// TenantOption is one entry of tenants: a tenant and its VMs, as name, index, count, vms and
// vnet_count give them for one tenant.
type TenantOption struct {
	Name      string     `opt:"name"`
	Index     int        `opt:"index"`
	Count     *int       `opt:"count"`
	VMs       []VMOption `opt:"vms"`
	VNetCount int        `opt:"vnet_count"`
}

func tenantsOption(vmOpts map[string]*module.Option) *module.Option {
	return &module.Option{Type: module.TypeList, Elements: module.TypeDict, Options: map[string]*module.Option{
		"name":       {Type: module.TypeStr, Required: true, Aliases: []string{"tenant"}},
		"index":      {Type: module.TypeInt, Required: true},
		"count":      {Type: module.TypeInt},
		"vms":        {Type: module.TypeList, Elements: module.TypeDict, Options: vmOpts},
		"vnet_count": {Type: module.TypeInt, Default: 1},
	}, MutuallyExclusive: [][]string{{"vms", "count"}}, RequiredOneOf: [][]string{{"vms", "count"}}}
}

// declarationsOf is Declarations of the one tenant the options name, or of each entry of tenants
// in order; a name or index listed twice is refused (their vmids would collide), and each error
// names the entry.
func declarationsOf(o *ModuleOptions) ([]Desired, error) {
	if o.Tenants == nil {
		return Declarations(o)
	}
	refs := make([]plan.TenantRef, len(*o.Tenants))
	for i, t := range *o.Tenants {
		refs[i] = plan.TenantRef{Name: t.Name, Index: t.Index}
	}
	if err := plan.DistinctTenants(refs); err != nil {
		return nil, err
	}
	var out []Desired
	for i, t := range *o.Tenants {
		one := *o
		one.Tenants, one.Name, one.Index, one.Count, one.VMs, one.VNetCount = nil, t.Name, t.Index, t.Count, t.VMs, t.VNetCount
		d, err := Declarations(&one)
		if err != nil {
			return nil, fmt.Errorf("tenants[%d] (%s): %w", i, t.Name, err)
		}
		out = append(out, d...)
	}
	return out, nil
}
