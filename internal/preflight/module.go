package preflight

// The deevnet.tenant.substrate_preflight Ansible module (plugins/modules/substrate_preflight.py).

import (
	"context"
	"fmt"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pve"
)

// Options are substrate_preflight's options.
type Options struct {
	pve.Connection
	Nodes        []string       `opt:"nodes"`
	Template     int            `opt:"template"`
	Storages     []string       `opt:"storages"`
	TenantVG     string         `opt:"tenant_vgname"`
	Tenants      []string       `opt:"tenants"`
	Hookscript   bool           `opt:"hookscript"`
	SnippetsDir  string         `opt:"snippets_dir"`
	QDevice      string         `opt:"qdevice"`
	NodePackages map[string]any `opt:"node_packages"`
}

// Module is substrate_preflight.
func Module() module.Entry {
	return module.Declare(module.Spec{
		Options: pve.WithConnectionOptions(map[string]*module.Option{
			"nodes":         {Type: module.TypeList, Elements: module.TypeStr, Required: true},
			"template":      {Type: module.TypeInt, Default: 9000},
			"storages":      {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
			"tenant_vgname": {Type: module.TypeStr, Default: "pve"},
			"tenants":       {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
			"hookscript":    {Type: module.TypeBool, Default: true},
			"snippets_dir":  {Type: module.TypeStr, Default: "/var/lib/vz/snippets"},
			"qdevice":       {Type: module.TypeStr, Default: ""},
			"node_packages": {Type: module.TypeDict, Default: map[string]any{}},
		}),
		SupportsCheckMode: true,
	}, handle)
}

// handle only reads, so check mode runs it unchanged; changed is always false. It fails only
// when the options are wrong or the context ends: every difference is a finding the playbook
// reports before it fails.
func handle(m *module.Module, o *Options) (module.Result, error) {
	if len(o.Nodes) == 0 {
		return module.Result{}, fmt.Errorf("nodes: empty; list the hypervisors (the fabric's members)")
	}
	if o.Template < 100 {
		return module.Result{}, fmt.Errorf("template: %d is not a vmid (100 or more)", o.Template)
	}
	in := Input{Nodes: o.Nodes, Template: o.Template, Storages: o.Storages, TenantVG: o.TenantVG, Tenants: o.Tenants,
		Hookscript: o.Hookscript, SnippetsDir: o.SnippetsDir, QDevice: o.QDevice, Packages: map[string]Packages{}}
	for node, raw := range o.NodePackages {
		p, ok := raw.(map[string]any)
		if !ok {
			return module.Result{}, fmt.Errorf("node_packages.%s: a %T, not a dict of frr, ifupdown2 (versions, \"\" when not installed) or error", node, raw)
		}
		for k := range p {
			if k != "frr" && k != "ifupdown2" && k != "error" {
				return module.Result{}, fmt.Errorf("node_packages.%s.%s: unknown key; the keys are frr, ifupdown2 and error", node, k)
			}
		}
		str := func(k string) string {
			if v, ok := p[k]; ok && v != nil {
				return fmt.Sprint(v)
			}
			return ""
		}
		in.Packages[node] = Packages{FRR: str("frr"), Ifupdown2: str("ifupdown2"), Error: str("error")}
	}
	c, err := o.Client(m)
	if err != nil {
		return module.Result{}, fmt.Errorf("PVE client: %w", err)
	}
	ctx, cancel := context.WithTimeout(m.Context(), time.Duration(o.Timeout)*time.Second*4)
	defer cancel()
	checks, err := Run(ctx, c, in)
	if err != nil {
		return module.Result{}, err
	}
	rows := make([]any, len(checks))
	for i, ch := range checks {
		differs := make([]any, len(ch.Differs))
		for j, d := range ch.Differs {
			differs[j] = d
		}
		rows[i] = map[string]any{"name": ch.Name, "assumption": ch.Assumption, "status": ch.Status, "found": ch.Found,
			"differs": differs, "breaks": ch.Breaks, "fatal": ch.Fatal}
	}
	failed := []any{}
	for _, n := range Failed(checks) {
		failed = append(failed, n)
	}
	lines := []any{}
	for _, l := range Lines(checks) {
		lines = append(lines, l)
	}
	return module.Result{Msg: Summary(checks), Values: map[string]any{"checks": rows, "failed_checks": failed, "table": lines}}, nil
}
