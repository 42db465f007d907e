package route

import (
	"fmt"
	"strings"

	"github.com/deevnet/tenant/internal/module"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ConfigFromParams builds a Config from transit_route's validated parameters, naming the
// field in every error.
func ConfigFromParams(m *module.Module) (Config, error) {
	cfg := Config{
		State:      State(m.Str("state")),
		Exclusive:  m.Bool("exclusive"),
		Forwarding: m.StrList("forwarding"),
	}
	for i, item := range m.List("routes") {
		d, ok := item.(map[string]any)
		if !ok {
			return cfg, fmt.Errorf("routes[%d]: must be a dict", i)
		}
		str := func(k string) string { s, _ := d[k].(string); return s }
		var r Route
		var err error
		if r.Dest, err = ParseDest(str("dest")); err != nil {
			return cfg, fmt.Errorf("routes[%d].dest: %w", i, err)
		}
		if r.Gateway, err = ParseGateway(str("gateway")); err != nil {
			return cfg, fmt.Errorf("routes[%d].gateway: %w", i, err)
		}
		r.Device = str("device")
		r.Table = str("table")
		if n, ok := d["metric"].(int); ok {
			r.Metric = n
		}
		cfg.Routes = append(cfg.Routes, r)
	}
	return cfg, cfg.Validate()
}

// Handler is transit_route run on the node: netlink and /proc/sys of the namespace the module
// was started in.
func Handler(m *module.Module) (module.Result, error) {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE) // rtnetlink only: kernels without XFRM refuse the default set
	if err != nil {
		return module.Result{}, fmt.Errorf("open rtnetlink: %w", err)
	}
	defer h.Close()
	return Handle(m, &Manager{Handle: h, Sysctl: ProcSys{}})
}

// Handle is the module's logic against a given Manager (tests pass one bound to a namespace).
func Handle(m *module.Module, mgr *Manager) (module.Result, error) {
	cfg, err := ConfigFromParams(m)
	if err != nil {
		return module.Result{}, err
	}
	plan, err := mgr.Plan(cfg)
	if err != nil {
		return module.Result{}, err
	}
	for _, w := range plan.Warnings {
		m.Warn(w)
	}
	var hook *HookChange
	if m.Bool("persist") {
		hc, err := PlanHook(m.Str("persist_path"), cfg)
		if err != nil {
			return module.Result{}, err
		}
		hook = &hc
		if cfg.State == Present {
			disabled, err := ScriptsDisabled(m.Str("ifupdown2_conf"))
			if err != nil {
				return module.Result{}, fmt.Errorf("ifupdown2_conf: %w", err)
			}
			if disabled {
				m.Warn(fmt.Sprintf("persist: %s does not set addon_scripts_support=1, so ifupdown2 will not run %s at boot or ifreload", m.Str("ifupdown2_conf"), hook.Path))
			}
		}
	}

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
		Changed: plan.Changed() || (hook != nil && hook.Changed()),
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
	case m.CheckMode:
		res.Msg = "would apply: " + strings.Join(parts, "; ")
	default:
		res.Msg = "applied: " + strings.Join(parts, "; ")
	}
	if m.CheckMode || !res.Changed {
		return res, nil
	}
	if _, err := mgr.Apply(plan); err != nil {
		return module.Result{}, err
	}
	if hook != nil {
		if err := ApplyHook(*hook); err != nil {
			return module.Result{}, err
		}
	}
	return res, nil
}
