package registry

import (
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
)

// planSpec is tenant_plan's argument spec; plugins/modules/tenant_plan.py documents it. The
// module derives every identifier of a tenant from its name and index (ADR-0002); no I/O.
func planSpec() module.Spec {
	return module.Spec{
		SupportsCheckMode: true,
		Options: map[string]*module.Option{
			"name":  {Type: module.TypeStr, Required: true},
			"index": {Type: module.TypeInt, Required: true},
			"site":  {Type: module.TypeDict, Default: map[string]any{}},
			"vms":   {Type: module.TypeInt, Default: 1},
			"vnets": {Type: module.TypeInt, Default: 1},
			// VM k on VNet vm_vnet[k-1] (tenant.vms.vnet); empty: every VM on VNet 0
			"vm_vnet": {Type: module.TypeList, Elements: module.TypeInt, Default: []any{}},
		},
	}
}

func planHandle(m *module.Module) (module.Result, error) {
	site, err := plan.SiteFromMap(m.Dict("site"))
	if err != nil {
		return module.Result{}, err
	}
	t, err := site.Tenant(m.Str("name"), m.Int("index"), m.Int("vms"), m.Int("vnets"))
	if err != nil {
		return module.Result{}, err
	}
	var vnetOf []int
	for _, v := range m.List("vm_vnet") {
		n, _ := v.(int)
		vnetOf = append(vnetOf, n)
	}
	if err := t.PlaceVMs("vm_vnet", vnetOf); err != nil {
		return module.Result{}, err
	}
	return module.Result{Values: map[string]any{"tenant": t.Map(), "site": site.Map()}}, nil
}
