package access

import (
	"context"
	"fmt"

	"github.com/deevnet/tenant/internal/envelope"
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/reconcile"
)

// Options are pve_tenant_access's options (spec declares their rules).
type Options struct {
	pve.Connection
	plan.TenantOptions
	State           string             `opt:"state"`
	TenantStorage   *TenantStorage     `opt:"tenant_storage"`
	Envelope        *envelope.Envelope `opt:"envelope"`
	Template        int                `opt:"template"`
	Storages        []string           `opt:"storages"`
	Bridges         []string           `opt:"bridges"`
	Privsep         bool               `opt:"privsep"`
	RegenerateToken bool               `opt:"regenerate_token"`
	Adopt           bool               `opt:"adopt"`
}

// Module is pve_tenant_access: plugins/modules/pve_tenant_access.py documents it.
func Module() module.Entry { return module.Declare(spec(), handle) }

// spec is the module's argument spec: the tenant, the shared objects a clone needs, and the
// standard PVE connection options.
func spec() module.Spec {
	return module.Spec{
		Options: pve.WithConnectionOptions(plan.WithTenantOptions(map[string]*module.Option{
			"state":            {Type: module.TypeStr, Default: "present", Choices: []any{"present", "absent"}},
			"template":         {Type: module.TypeInt, Default: 9000},
			"storages":         {Type: module.TypeList, Elements: module.TypeStr, Default: []any{"local-lvm"}},
			"bridges":          {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
			"privsep":          {Type: module.TypeBool, Default: true},
			"regenerate_token": {Type: module.TypeBool, Default: false},
			"adopt":            {Type: module.TypeBool, Default: false},
			"envelope":         plan.EnvelopeOption(),
			"tenant_storage": {Type: module.TypeDict, Options: map[string]*module.Option{
				"vgname": {Type: module.TypeStr, Default: "pve"},
				"nodes":  {Type: module.TypeList, Elements: module.TypeStr, Required: true},
			}},
		})),
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
	if opts.Adopt && opts.State == "absent" {
		return module.Result{}, fmt.Errorf("adopt: grants a tenant what another tool built, so it needs state=present, not absent")
	}
	tg := Targets{Template: opts.Template, Storages: opts.Storages, Bridges: opts.Bridges, Adopt: opts.Adopt}
	if err := tg.CheckFormats(); err != nil {
		return module.Result{}, err
	}
	d := desired(t, index, tg.Template, tg.Storages, tg.Bridges, opts.Privsep)
	if ts := opts.TenantStorage; ts != nil && opts.State == "present" {
		// its own storage, the one grant on storage beside storages (ADR-0014 decision 2)
		d.Storage = wantStorage(t, *ts)
		d.Grants = append(d.Grants, storageGrant(t, tg.Template))
		sortGrants(d.Grants)
	}

	c, err := opts.Client(m)
	if err != nil {
		return module.Result{}, fmt.Errorf("PVE client: %w", err)
	}
	a := Access{C: c}
	var secret string
	var done int
	p, acted, err := reconcile.Run(m.Context(), m.CheckMode, func(ctx context.Context) (planned, bool, error) {
		p, err := a.plan(ctx, d, t, tg, opts)
		return p, len(p.ops) > 0, err
	}, func(ctx context.Context, p planned) (err error) {
		secret, done, err = a.Apply(ctx, p.ops)
		return err
	})
	if err != nil && !acted {
		return module.Result{}, err
	}
	ops := p.ops
	changes := make([]string, len(ops))
	for i, op := range ops {
		changes[i] = op.Describe
	}
	res := module.Result{
		Changed: len(ops) > 0,
		Diffs: []module.Diff{{Before: p.before, After: p.after,
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

// planned is one run's plan: the writes in order, and the whole access state before and after
// them that the diff shows.
type planned struct {
	ops           []Op
	before, after map[string]any
}

// plan observes the tenant's access objects and lists the writes state asks for. Present first
// checks, by reads only, what a clone needs, so a refusal leaves PVE as it was.
func (a Access) plan(ctx context.Context, d Desired, t plan.Tenant, tg Targets, opts *Options) (planned, error) {
	o, err := a.Observe(ctx, d)
	if err != nil {
		return planned{}, err
	}
	p := planned{before: view(d, &o, false)}
	if opts.State == "absent" {
		// The custom role is shared by every tenant: it stays.
		p.after = map[string]any{"acl": map[string]any{"user": []Grant{}, "token": []Grant{}}, "roles": p.before["roles"]}
		p.ops, err = PlanAbsent(d, o)
		return p, err
	}
	if err := a.CheckPresent(ctx, t, opts.Index, tg); err != nil {
		return planned{}, err
	}
	if d.Storage != nil {
		diskGiB := 0
		if opts.Envelope != nil {
			diskGiB = opts.Envelope.Disk
		}
		if err := a.checkStorage(ctx, *d.Storage, o.Storage, diskGiB); err != nil {
			return planned{}, err
		}
	}
	if opts.Envelope != nil {
		if err := a.checkEnvelope(ctx, t.Name, d.Pool, *opts.Envelope); err != nil {
			return planned{}, err
		}
	}
	p.after = view(d, &o, true)
	p.ops = PlanPresent(d, o, opts.RegenerateToken)
	return p, nil
}
