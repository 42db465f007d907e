package plan

import "github.com/deevnet/tenant/internal/module"

// ModuleOptions are tenant_plan's options (spec declares their rules).
type ModuleOptions struct {
	Name  string         `opt:"name"`
	Index int            `opt:"index"`
	Site  map[string]any `opt:"site"`
	VMs   int            `opt:"vms"`
	VNets int            `opt:"vnets"`
	// VM k on VNet VMVNet[k-1] (tenant.vms.vnet); empty: every VM on VNet 0
	VMVNet []int `opt:"vm_vnet"`
}

// Module is tenant_plan: it derives every identifier of a tenant from its name and index
// (ADR-0002); no I/O. plugins/modules/tenant_plan.py documents it.
func Module() module.Entry { return module.Declare(spec(), handle) }

func spec() module.Spec {
	return module.Spec{
		SupportsCheckMode: true,
		Options: map[string]*module.Option{
			"name":    {Type: module.TypeStr, Required: true},
			"index":   {Type: module.TypeInt, Required: true},
			"site":    {Type: module.TypeDict, Default: map[string]any{}},
			"vms":     {Type: module.TypeInt, Default: 1},
			"vnets":   {Type: module.TypeInt, Default: 1},
			"vm_vnet": {Type: module.TypeList, Elements: module.TypeInt, Default: []any{}},
		},
	}
}

func handle(_ *module.Module, o *ModuleOptions) (module.Result, error) {
	site, err := SiteFromMap(o.Site)
	if err != nil {
		return module.Result{}, err
	}
	t, err := site.Tenant(o.Name, o.Index, o.VMs, o.VNets)
	if err != nil {
		return module.Result{}, err
	}
	if err := t.PlaceVMs("vm_vnet", o.VMVNet); err != nil {
		return module.Result{}, err
	}
	return module.Result{Values: map[string]any{"tenant": t.Map(), "site": site.Map()}}, nil
}
