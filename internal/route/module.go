package route

import (
	"context"
	"fmt"
	"strings"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/reconcile"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Options are transit_route's options (spec declares their rules).
type Options struct {
	Routes        []RouteOption `opt:"routes"`
	State         string        `opt:"state"`
	Exclusive     bool          `opt:"exclusive"`
	Forwarding    []string      `opt:"forwarding"`
	Persist       bool          `opt:"persist"`
	PersistPath   string        `opt:"persist_path"`
	Ifupdown2Conf string        `opt:"ifupdown2_conf"`
}

// RouteOption is one entry of routes.
type RouteOption struct {
	Dest    string `opt:"dest"`
	Gateway string `opt:"gateway"`
	Device  string `opt:"device"`
	Metric  int    `opt:"metric"`
	Table   string `opt:"table"`
}

// Module is transit_route run on the node: netlink and /proc/sys of the namespace the module
// was started in. plugins/modules/transit_route.py documents it.
func Module() module.Entry { return module.Declare(spec(), handleNetlink) }

// ModuleWith is transit_route against a given Manager (tests pass one bound to a namespace).
func ModuleWith(mgr *Manager) module.Entry {
	return module.Declare(spec(), func(m *module.Module, o *Options) (module.Result, error) { return handle(m, o, mgr) })
}

func spec() module.Spec {
	return module.Spec{
		Options: map[string]*module.Option{
			"routes": {Type: module.TypeList, Elements: module.TypeDict, Default: []any{}, Options: map[string]*module.Option{
				"dest":    {Type: module.TypeStr, Required: true, Aliases: []string{"dst", "destination"}},
				"gateway": {Type: module.TypeStr, Aliases: []string{"via", "gw"}},
				"device":  {Type: module.TypeStr, Aliases: []string{"dev"}},
				"metric":  {Type: module.TypeInt, Default: 0},
				"table":   {Type: module.TypeStr, Default: MainTable, Aliases: []string{"vrf"}},
			}},
			"state":          {Type: module.TypeStr, Default: string(Present), Choices: []any{string(Present), string(Absent)}},
			"exclusive":      {Type: module.TypeBool, Default: false},
			"forwarding":     {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
			"persist":        {Type: module.TypeBool, Default: false},
			"persist_path":   {Type: module.TypePath, Default: DefaultHookPath},
			"ifupdown2_conf": {Type: module.TypePath, Default: DefaultIfupdown2Conf},
		},
		SupportsCheckMode: true,
	}
}

// config builds a Config from the options, naming the field in every error.
func (o *Options) config() (Config, error) {
	cfg := Config{State: State(o.State), Exclusive: o.Exclusive, Forwarding: o.Forwarding}
	for i, d := range o.Routes {
		r := Route{Device: d.Device, Table: d.Table, Metric: d.Metric}
		var err error
		if r.Dest, err = ParseDest(d.Dest); err != nil {
			return cfg, fmt.Errorf("routes[%d].dest: %w", i, err)
		}
		if r.Gateway, err = ParseGateway(d.Gateway); err != nil {
			return cfg, fmt.Errorf("routes[%d].gateway: %w", i, err)
		}
		cfg.Routes = append(cfg.Routes, r)
	}
	return cfg, cfg.Validate()
}

func handleNetlink(m *module.Module, o *Options) (module.Result, error) {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE) // rtnetlink only: kernels without XFRM refuse the default set
	if err != nil {
		return module.Result{}, fmt.Errorf("open rtnetlink: %w", err)
	}
	defer h.Close()
	return handle(m, o, &Manager{Handle: h, Sysctl: ProcSys{}})
}

// planned is one run's plan: the route and forwarding changes, and the boot hook's (nil
// without persist).
type planned struct {
	routes *Plan
	hook   *HookChange
}

func (p planned) changed() bool { return p.routes.Changed() || (p.hook != nil && p.hook.Changed()) }

// plan reads the kernel (and the hook file) and plans what cfg asks for.
func (o *Options) plan(m *module.Module, mgr *Manager, cfg Config) (planned, error) {
	var p planned
	var err error
	if p.routes, err = mgr.Plan(cfg); err != nil {
		return p, err
	}
	for _, w := range p.routes.Warnings {
		m.Warn(w)
	}
	if !o.Persist {
		return p, nil
	}
	hc, err := PlanHook(o.PersistPath, cfg)
	if err != nil {
		return p, err
	}
	p.hook = &hc
	if cfg.State == Present {
		disabled, err := ScriptsDisabled(o.Ifupdown2Conf)
		if err != nil {
			return p, fmt.Errorf("ifupdown2_conf: %w", err)
		}
		if disabled {
			m.Warn(fmt.Sprintf("persist: %s does not set addon_scripts_support=1, so ifupdown2 will not run %s at boot or ifreload", o.Ifupdown2Conf, hc.Path))
		}
	}
	return p, nil
}

// act applies the route and forwarding changes, then writes (or removes) the hook.
func (p planned) act(mgr *Manager) error {
	if _, err := mgr.Apply(p.routes); err != nil {
		return err
	}
	if p.hook != nil {
		return ApplyHook(*p.hook)
	}
	return nil
}

// handle is the module's logic against a Manager.
func handle(m *module.Module, o *Options, mgr *Manager) (module.Result, error) {
	cfg, err := o.config()
	if err != nil {
		return module.Result{}, err
	}
	p, _, err := reconcile.Run(m.Context(), m.CheckMode, func(context.Context) (planned, bool, error) {
		p, err := o.plan(m, mgr, cfg)
		return p, err == nil && p.changed(), err
	}, func(_ context.Context, p planned) error { return p.act(mgr) })
	if err != nil {
		return module.Result{}, err
	}
	return result(p, m.CheckMode), nil
}

// result reports the plan: the changes, the routes and forwarding before and after (the diff),
// and the hook's.
func result(p planned, check bool) module.Result {
	plan, hook := p.routes, p.hook
	changes := make([]map[string]any, 0, len(plan.Changes))
	for _, c := range plan.Changes {
		e := map[string]any{"op": string(c.Op), "route": c.Text}
		if c.Reason != "" {
			e["reason"] = c.Reason
		}
		changes = append(changes, e)
	}
	fwd := make([]string, 0, len(plan.Forwarding))
	for _, f := range plan.Forwarding {
		fwd = append(fwd, f.Iface)
	}
	res := module.Result{
		Changed: p.changed(),
		Values: map[string]any{
			"routes":             plan.After,
			"route_changes":      changes,
			"forwarding_enabled": fwd,
		},
		Diffs: []module.Diff{{
			Before:       map[string]any{"routes": plan.Before, "forwarding": plan.ForwardingBefore},
			After:        map[string]any{"routes": plan.After, "forwarding": plan.ForwardingAfter},
			BeforeHeader: "routes and forwarding (before)",
			AfterHeader:  "routes and forwarding (after)",
		}},
	}
	if hook != nil {
		res.Values["persist_path"] = hook.Path
		res.Values["persist_changed"] = hook.Changed()
		res.Diffs = append(res.Diffs, module.Diff{Before: hook.Before, After: hook.After, BeforeHeader: hook.Path, AfterHeader: hook.Path})
	}

	var parts []string
	if n := len(plan.Changes); n > 0 {
		parts = append(parts, fmt.Sprintf("%d route change(s)", n))
	}
	if n := len(plan.Forwarding); n > 0 {
		parts = append(parts, fmt.Sprintf("forwarding enabled on %s", strings.Join(fwd, ", ")))
	}
	if hook != nil && hook.Changed() {
		if hook.After == "" {
			parts = append(parts, "hook "+hook.Path+" removed")
		} else {
			parts = append(parts, "hook "+hook.Path+" written")
		}
	}
	switch {
	case len(parts) == 0:
		res.Msg = "routes and forwarding already as declared"
	case check:
		res.Msg = "would apply: " + strings.Join(parts, "; ")
	default:
		res.Msg = "applied: " + strings.Join(parts, "; ")
	}
	return res
}
