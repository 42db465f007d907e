package access

import (
	"fmt"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
)

// Options are pve_tenant_access's options (spec declares their rules).
type Options struct {
	pve.Connection
	Name            string         `opt:"name"`
	Index           int            `opt:"index"`
	Site            map[string]any `opt:"site"`
	State           string         `opt:"state"`
	Template        int            `opt:"template"`
	Storages        []string       `opt:"storages"`
	Bridges         []string       `opt:"bridges"`
	Privsep         bool           `opt:"privsep"`
	RegenerateToken bool           `opt:"regenerate_token"`
}

// Module is pve_tenant_access: plugins/modules/pve_tenant_access.py documents it.
func Module() module.Entry { return module.Declare(spec(), handle) }

// spec is the module's argument spec: the tenant, the shared objects a clone needs, and the
// standard PVE connection options.
func spec() module.Spec {
	return module.Spec{
		Options: pve.WithConnectionOptions(map[string]*module.Option{
			"name":             {Type: module.TypeStr, Required: true},
			"index":            {Type: module.TypeInt, Required: true},
			"site":             {Type: module.TypeDict, Default: map[string]any{}},
			"state":            {Type: module.TypeStr, Default: "present", Choices: []any{"present", "absent"}},
			"template":         {Type: module.TypeInt, Default: 9000},
			"storages":         {Type: module.TypeList, Elements: module.TypeStr, Default: []any{"local-lvm"}},
			"bridges":          {Type: module.TypeList, Elements: module.TypeStr, Default: []any{"vmbr0"}},
			"privsep":          {Type: module.TypeBool, Default: true},
			"regenerate_token": {Type: module.TypeBool, Default: false},
		}),
		SupportsCheckMode: true,
	}
}

// handle is pve_tenant_access's handler.
func handle(m *module.Module, opts *Options) (module.Result, error) {
	name, index := opts.Name, opts.Index
	site, err := plan.SiteFromMap(opts.Site)
	if err != nil {
		return module.Result{}, fmt.Errorf("site: %w", err)
	}
	// The plan checks the name and index rules (ADR-0002) and names the field in its error.
	t, err := site.Tenant(name, index, 0, 1)
	if err != nil {
		return module.Result{}, err
	}
	tg := Targets{Template: opts.Template, Storages: opts.Storages, Bridges: opts.Bridges}
	if err := tg.CheckFormats(); err != nil {
		return module.Result{}, err
	}
	d := desired(t, index, tg.Template, tg.Storages, tg.Bridges, opts.Privsep)

	c, err := opts.Client(m)
	if err != nil {
		return module.Result{}, fmt.Errorf("PVE client: %w", err)
	}
	a := Access{C: c}
	ctx := m.Context()
	o, err := a.Observe(ctx, d)
	if err != nil {
		return module.Result{}, err
	}

	if opts.State != "absent" {
		// Reads only: a refusal leaves PVE as it was.
		if err := a.CheckPresent(ctx, t, index, tg); err != nil {
			return module.Result{}, err
		}
	}
	var ops []Op
	after := view(d, nil)
	if opts.State == "absent" {
		if ops, err = PlanAbsent(d, o); err != nil {
			return module.Result{}, err
		}
		after = map[string]any{"acl": map[string]any{"user": []Grant{}, "token": []Grant{}}}
	} else {
		ops = PlanPresent(d, o, opts.RegenerateToken)
	}

	changes := make([]string, len(ops))
	for i, op := range ops {
		changes[i] = op.Describe
	}
	res := module.Result{
		Changed: len(ops) > 0,
		Diffs: []module.Diff{{Before: view(d, &o), After: after,
			BeforeHeader: "pve access of tenant " + name, AfterHeader: "pve access of tenant " + name}},
		Values: map[string]any{
			"pool": d.Pool, "user": d.User, "token_id": d.FullTokenID(),
			"changes": changes,
		},
	}
	switch {
	case len(ops) == 0:
		res.Msg = "access objects of tenant " + name + " are up to date"
		return res, nil
	case m.CheckMode:
		res.Msg = fmt.Sprintf("would make %d change(s) to tenant %s's access objects", len(ops), name)
		return res, nil
	}
	secret, done, err := a.Apply(ctx, ops)
	if secret != "" {
		// Returned once, for the attachment file; it is never part of msg, changes or diff.
		res.Values["token_secret"] = secret
	}
	if err != nil {
		res.Changed = done > 0
		return res, fmt.Errorf("tenant %s access: %d of %d change(s) made, then: %w", name, done, len(ops), err)
	}
	res.Msg = fmt.Sprintf("made %d change(s) to tenant %s's access objects", len(ops), name)
	return res, nil
}
