package plan

import (
	"fmt"

	"github.com/deevnet/tenant/internal/envelope"
	"github.com/deevnet/tenant/internal/module"
)

// TenantOptions name a tenant and its site: the options of the modules that derive the tenant's
// identifiers from exactly these (tenant_plan, pve_tenant_access). WithTenantOptions declares
// their rules.
type TenantOptions struct {
	Name  string         `opt:"name"`
	Index int            `opt:"index"`
	Site  map[string]any `opt:"site"`
}

// WithTenantOptions returns opts plus name and index (required) and site (the seed's site when
// not given).
func WithTenantOptions(opts map[string]*module.Option) map[string]*module.Option {
	all := map[string]*module.Option{
		"name":  {Type: module.TypeStr, Required: true},
		"index": {Type: module.TypeInt, Required: true},
		"site":  {Type: module.TypeDict, Default: map[string]any{}},
	}
	for k, v := range opts {
		all[k] = v
	}
	return all
}

// ModuleOptions are tenant_plan's options (spec declares their rules).
type ModuleOptions struct {
	TenantOptions
	VMs   int `opt:"vms"`
	VNets int `opt:"vnets"`
	// VM k on VNet VMVNet[k-1] (tenant.vms.vnet); empty: every VM on VNet 0
	VMVNet []int `opt:"vm_vnet"`
	// the tenant's declaration (roles/tenant's tenant), checked against the contract's rules
	Contract *Contract `opt:"contract"`
	// the hardware envelope the substrate set at onboarding (the attachment's envelope): a
	// contract whose totals exceed it is refused (docs/adr/0014-tenant-envelope.md)
	Envelope *envelope.Envelope `opt:"envelope"`
}

// Module is tenant_plan: it derives every identifier of a tenant from its name and index
// (ADR-0002); no I/O. plugins/modules/tenant_plan.py documents it.
func Module() module.Entry { return module.Declare(spec(), handle) }

func spec() module.Spec {
	return module.Spec{
		SupportsCheckMode: true,
		Options: WithTenantOptions(map[string]*module.Option{
			"vms":      {Type: module.TypeInt, Default: 1},
			"vnets":    {Type: module.TypeInt, Default: 1},
			"vm_vnet":  {Type: module.TypeList, Elements: module.TypeInt, Default: []any{}},
			"contract": contractOption(),
			"envelope": EnvelopeOption(),
		}),
	}
}

func handle(_ *module.Module, o *ModuleOptions) (module.Result, error) {
	if o.Contract != nil {
		if err := o.Contract.Check(); err != nil {
			return module.Result{}, err
		}
		if err := o.Contract.agrees(o); err != nil {
			return module.Result{}, err
		}
	}
	if o.Envelope != nil {
		if err := o.Envelope.Validate("envelope"); err != nil {
			return module.Result{}, err
		}
		if c := o.Contract; c != nil {
			if err := o.Envelope.CheckDeclaration(c.VMs.Count, c.VMs.Cores, c.VMs.Memory, c.VMs.Disk); err != nil {
				return module.Result{}, fmt.Errorf("tenant %s: %w", c.Name, err)
			}
		}
	}
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

// EnvelopeOption is the modules' envelope option (tenant_plan, tenant_verify): the attachment's
// envelope, every limit required (plugins/doc_fragments/envelope.py documents it). It lives here,
// not in internal/envelope, so the guard binary, which uses envelope, links no module code.
func EnvelopeOption() *module.Option {
	return &module.Option{Type: module.TypeDict, Options: map[string]*module.Option{
		"vms":    {Type: module.TypeInt, Required: true},
		"cores":  {Type: module.TypeInt, Required: true},
		"memory": {Type: module.TypeInt, Required: true},
		"disk":   {Type: module.TypeInt, Required: true},
		// the wire's (docs/adr/0016-tenant-wire.md): absent from attachments written before it
		"bandwidth": {Type: module.TypeInt},
		"broadcast": {Type: module.TypeInt},
		// the disk I/O rates, optional: an attachment from before them has none
		"disk_read_mbps":  {Type: module.TypeInt},
		"disk_write_mbps": {Type: module.TypeInt},
		"disk_read_iops":  {Type: module.TypeInt},
		"disk_write_iops": {Type: module.TypeInt},
		// the DNS quota (docs/adr/0017-dns-quota.md): not in attachments written before it
		"dns_records": {Type: module.TypeInt},
		"dns_updates": {Type: module.TypeInt},
	}}
}
