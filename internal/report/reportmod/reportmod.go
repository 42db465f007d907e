// Package reportmod is the deevnet.tenant.substrate_report Ansible module: it reads the substrate
// back (PVE API, resolver) and returns the operator's report as Markdown. It writes nothing; the
// playbook stores the text (ansible.builtin.copy), so check and diff mode come from there.
package reportmod

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/report"
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

// Spec is substrate_report's argument spec.
func Spec() module.Spec {
	return module.Spec{
		Options: pve.WithConnectionOptions(map[string]*module.Option{
			"site": {Type: module.TypeDict, Default: map[string]any{}},
			"tenants": {Type: module.TypeList, Elements: module.TypeDict, Default: []any{}, Options: map[string]*module.Option{
				"name":  {Type: module.TypeStr, Required: true},
				"index": {Type: module.TypeInt, Required: true},
				"vms":   {Type: module.TypeInt, Default: 1},
				"vnets": {Type: module.TypeInt, Default: 1},
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
		}),
		SupportsCheckMode: true,
	}
}

// Handle is substrate_report's handler. It only reads, so check mode runs it unchanged.
func Handle(m *module.Module) (module.Result, error) {
	site, err := plan.SiteFromMap(m.Dict("site"))
	if err != nil {
		return module.Result{}, err
	}
	tenants, err := tenantsOf(m.List("tenants"))
	if err != nil {
		return module.Result{}, err
	}
	// Every tenant is planned before the first request, so a bad one fails naming it and reads nothing.
	plans := make([]plan.Tenant, len(tenants))
	for i, t := range tenants {
		if plans[i], err = site.Tenant(t.Name, t.Index, t.VMs, t.VNets); err != nil {
			return module.Result{}, fmt.Errorf("tenants[%d] (%s): %w", i, t.Name, err)
		}
	}
	c, err := pve.FromModule(m)
	if err != nil {
		return module.Result{}, err
	}
	ctx, cancel := context.WithTimeout(m.Context(), time.Duration(m.Int("api_timeout"))*time.Second*4)
	defer cancel()
	sub, err := report.Read(ctx, c)
	if err != nil {
		return module.Result{}, err
	}
	records := map[string][]report.Record{}
	resolverAt := ""
	if rs := m.Dict("resolver"); rs != nil {
		r := report.Resolver{Server: fmt.Sprint(rs["server"]), Port: toInt(rs["port"])}
		resolverAt = fmt.Sprintf("%s:%d", r.Server, r.Port)
		for i, t := range tenants {
			for _, q := range report.Queries(plans[i], t.Records) {
				records[t.Name] = append(records[t.Name], r.Lookup(ctx, q.Name, q.Type))
			}
		}
	}
	view, err := report.Build(site, sub, tenants, records)
	if err != nil {
		return module.Result{}, fmt.Errorf("tenants: %w", err)
	}
	view.SiteChecks, err = checksOf(m.List("site_checks"))
	if err != nil {
		return module.Result{}, fmt.Errorf("site_checks: %w", err)
	}
	view.Resolver = resolverAt
	view.GeneratedAt = m.Str("generated_at")
	if view.GeneratedAt == "" {
		view.GeneratedAt = time.Now().UTC().Format(time.RFC3339)
	}
	facts, err := asMap(sub)
	if err != nil {
		return module.Result{}, err
	}
	total, failed := 0, 0
	for _, t := range view.Tenants {
		total += len(t.Checks)
		failed += len(t.Failed())
	}
	for _, c := range view.SiteChecks {
		total++
		if !c.OK {
			failed++
		}
	}
	return module.Result{
		Msg: fmt.Sprintf("%d tenants, %d checks, %d failed", len(view.Tenants), total, failed),
		Values: map[string]any{
			"report":    report.Markdown(view),
			"site":      site.Map(),
			"substrate": facts,
			"summary":   map[string]any{"tenants": len(view.Tenants), "checks": total, "failed": failed},
		},
	}, nil
}

func tenantsOf(list []any) ([]report.TenantInput, error) {
	out := make([]report.TenantInput, 0, len(list))
	for i, item := range list {
		t, _ := item.(map[string]any)
		in := report.TenantInput{Name: fmt.Sprint(t["name"]), Index: toInt(t["index"]), VMs: toInt(t["vms"]), VNets: toInt(t["vnets"])}
		recs, _ := t["records"].([]any)
		for _, r := range recs {
			rm, _ := r.(map[string]any)
			in.Records = append(in.Records, report.RecordQuery{Name: fmt.Sprint(rm["name"]), Type: fmt.Sprint(rm["type"])})
		}
		checks, _ := t["checks"].([]any)
		var err error
		if in.Checks, err = checksOf(checks); err != nil {
			return nil, fmt.Errorf("tenants[%d].checks: %w", i, err)
		}
		out = append(out, in)
	}
	return out, nil
}

func checksOf(list []any) ([]report.Check, error) {
	out := make([]report.Check, 0, len(list))
	for i, item := range list {
		c, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("[%d] is not a dict", i)
		}
		okv, _ := c["ok"].(bool)
		out = append(out, report.Check{Name: fmt.Sprint(c["name"]), Target: str(c["target"]), OK: okv, Detail: str(c["detail"]), Time: str(c["time"])})
	}
	return out, nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// toInt reads an option value the validator already coerced to int.
func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
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
