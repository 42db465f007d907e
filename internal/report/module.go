package report

// The deevnet.tenant.substrate_report Ansible module: it reads the substrate back (PVE API,
// resolver) and returns the operator's report as Markdown. It writes nothing; the playbook
// stores the text (ansible.builtin.copy), so check and diff mode come from there.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
)

func checkOptions() *module.Option {
	return &module.Option{Type: module.TypeList, Elements: module.TypeDict, Default: []any{}, Options: map[string]*module.Option{
		"name":   {Type: module.TypeStr, Required: true},
		"target": {Type: module.TypeStr, Default: ""},
		"ok":     {Type: module.TypeBool, Required: true},
		"detail": {Type: module.TypeStr, Default: ""},
		"time":   {Type: module.TypeStr, Default: ""},
	}}
}

// Options are substrate_report's options (spec declares their rules).
type Options struct {
	pve.Connection
	Site        map[string]any   `opt:"site"`
	Tenants     []TenantInput    `opt:"tenants"`
	SiteChecks  []Check          `opt:"site_checks"`
	Resolver    *ResolverOptions `opt:"resolver"`
	GeneratedAt string           `opt:"generated_at"`
	GeneratedBy string           `opt:"generated_by"`
}

// ResolverOptions say where the report resolves the tenants' records.
type ResolverOptions struct {
	Server string `opt:"server"`
	Port   int    `opt:"port"`
}

// Module is substrate_report: plugins/modules/substrate_report.py documents it.
func Module() module.Entry { return module.Declare(spec(), handle) }

func spec() module.Spec {
	return module.Spec{
		Options: pve.WithConnectionOptions(map[string]*module.Option{
			"site": {Type: module.TypeDict, Default: map[string]any{}},
			"tenants": {Type: module.TypeList, Elements: module.TypeDict, Default: []any{}, Options: map[string]*module.Option{
				"name":    {Type: module.TypeStr, Required: true},
				"index":   {Type: module.TypeInt, Required: true},
				"vms":     {Type: module.TypeInt, Default: 1},
				"vnets":   {Type: module.TypeInt, Default: 1},
				"vm_vnet": {Type: module.TypeList, Elements: module.TypeInt, Default: []any{}},
				"records": {Type: module.TypeList, Elements: module.TypeDict, Default: []any{}, Options: map[string]*module.Option{
					"name": {Type: module.TypeStr, Required: true},
					"type": {Type: module.TypeStr, Required: true},
				}},
				"checks": checkOptions(),
			}},
			"site_checks": checkOptions(),
			"resolver": {Type: module.TypeDict, Options: map[string]*module.Option{
				"server": {Type: module.TypeStr, Required: true},
				"port":   {Type: module.TypeInt, Default: 53},
			}},
			"generated_at": {Type: module.TypeStr},
			// the playbook that asked for the report, named in its first line
			"generated_by": {Type: module.TypeStr, Default: "deevnet.tenant.verify"},
		}),
		SupportsCheckMode: true,
	}
}

// handle is substrate_report's handler. It only reads, so check mode runs it unchanged.
func handle(m *module.Module, o *Options) (module.Result, error) {
	site, err := plan.SiteFromMap(o.Site)
	if err != nil {
		return module.Result{}, err
	}
	tenants := o.Tenants
	// Every tenant is planned before the first request, so a bad one fails naming it and reads nothing.
	plans := make([]plan.Tenant, len(tenants))
	for i, t := range tenants {
		if plans[i], err = t.Plan(site); err != nil {
			return module.Result{}, fmt.Errorf("tenants[%d] (%s): %w", i, t.Name, err)
		}
	}
	c, err := o.Client(m)
	if err != nil {
		return module.Result{}, err
	}
	ctx, cancel := context.WithTimeout(m.Context(), time.Duration(o.Timeout)*time.Second*4)
	defer cancel()
	sub, err := Read(ctx, c)
	if err != nil {
		return module.Result{}, err
	}
	records := map[string][]Record{}
	resolverAt := ""
	if rs := o.Resolver; rs != nil {
		r := Resolver{Server: rs.Server, Port: rs.Port}
		resolverAt = fmt.Sprintf("%s:%d", r.Server, r.Port)
		for i, t := range tenants {
			for _, q := range Queries(plans[i], t.Records) {
				records[t.Name] = append(records[t.Name], r.Lookup(ctx, q.Name, q.Type))
			}
		}
	}
	view, err := Build(site, sub, tenants, records)
	if err != nil {
		return module.Result{}, fmt.Errorf("tenants: %w", err)
	}
	view.SiteChecks = o.SiteChecks
	view.Resolver = resolverAt
	view.GeneratedAt, view.GeneratedBy = o.GeneratedAt, o.GeneratedBy
	if view.GeneratedAt == "" {
		view.GeneratedAt = time.Now().UTC().Format(time.RFC3339)
	}
	facts, err := asMap(sub)
	if err != nil {
		return module.Result{}, err
	}
	total, failed := view.Counts()
	return module.Result{
		Msg: fmt.Sprintf("%d tenants, %d checks, %d failed", len(view.Tenants), total, failed),
		Values: map[string]any{
			"report":    Markdown(view),
			"site":      site.Map(),
			"substrate": facts,
			"summary":   map[string]any{"tenants": len(view.Tenants), "checks": total, "failed": failed},
		},
	}, nil
}

// asMap returns v as plain JSON values, the shape the module result carries.
func asMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the read-back substrate: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("encoding the read-back substrate: %w", err)
	}
	return out, nil
}
