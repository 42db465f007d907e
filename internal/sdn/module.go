package sdn

// The SDN modules (pve_sdn_fabric, tenant_vrf, pve_sdn_apply) are declared in module_<name>.go:
// each one's options struct, argument spec and handler (module.Declare). This file holds what
// they share: the timing and staging options, and the staging flow and its result.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pve"
)

// Timing bounds a run: how long to wait for the SDN lock, and the deadline of the whole run.
type Timing struct {
	ApplyTimeout int `opt:"apply_timeout"`
	LockWait     int `opt:"lock_wait"`
}

func timingOptions() map[string]*module.Option {
	return map[string]*module.Option{
		"apply_timeout": {Type: module.TypeInt, Default: 300},
		"lock_wait":     {Type: module.TypeInt, Default: 0},
	}
}

// Staging holds the options shared by the modules that stage SDN objects.
type Staging struct {
	pve.Connection
	Timing
	State       string         `opt:"state"`
	Apply       bool           `opt:"apply"`
	Site        map[string]any `opt:"site"`
	Maintenance []string       `opt:"maintenance"`
}

// stagingSpec is the spec of the Staging options plus opts, and the connection options.
func stagingSpec(opts map[string]*module.Option) map[string]*module.Option {
	all := timingOptions()
	all["state"] = &module.Option{Type: module.TypeStr, Default: "present", Choices: []any{"present", "absent"}}
	all["apply"] = &module.Option{Type: module.TypeBool, Default: false}
	all["site"] = &module.Option{Type: module.TypeDict}
	all["maintenance"] = maintenanceOption()
	for k, v := range opts {
		all[k] = v
	}
	return pve.WithConnectionOptions(all)
}

// check refuses negative or unbounded waits before anything is read.
func (t Timing) check() error {
	if v := t.LockWait; v < 0 || v > 3600 {
		return fmt.Errorf("lock_wait: %d seconds is outside 0..3600", v)
	}
	if v := t.ApplyTimeout; v < 1 || v > 86400 {
		return fmt.Errorf("apply_timeout: %d seconds is outside 1..86400", v)
	}
	if t.LockWait >= t.ApplyTimeout {
		return fmt.Errorf("lock_wait: %d seconds must be shorter than apply_timeout (%d s), which bounds the whole run", t.LockWait, t.ApplyTimeout)
	}
	return nil
}

// open checks the timing, connects, and bounds the whole run by apply_timeout: reads, waiting
// for the lock (lock_wait, at most), writes and the apply task all share this one deadline.
func open(m *module.Module, conn pve.Connection, t Timing) (context.Context, context.CancelFunc, API, error) {
	if err := t.check(); err != nil {
		return nil, nil, API{}, err
	}
	c, err := conn.Client(m)
	if err != nil {
		return nil, nil, API{}, err
	}
	ctx, cancel := context.WithTimeout(m.Context(), time.Duration(t.ApplyTimeout)*time.Second)
	return ctx, cancel, API{C: c, LockWait: time.Duration(t.LockWait) * time.Second}, nil
}

// stage runs the flow shared by the staging modules: open, plan the work, converge it. The
// result names the converged object (key: id). first are the GETs planWork is sure to make
// before any other: they are sent side by side with /nodes.
func stage(m *module.Module, o *Staging, key string, id any, first []pve.Read, planWork func(context.Context, API) (Work, error)) (module.Result, error) {
	ctx, cancel, api, err := open(m, o.Connection, o.Timing)
	if err != nil {
		return module.Result{}, err
	}
	defer cancel()
	api.C.Prefetch(ctx, append([]pve.Read{pve.NodesRead()}, first...)...)
	// before anything is written: a node the apply cannot reach fails the run unless it is in
	// maintenance (nodes.go)
	api.Maintenance = o.Maintenance
	away, err := api.Unreachable(ctx)
	if err != nil {
		return module.Result{}, err
	}
	w, err := planWork(ctx, api)
	if err != nil {
		return module.Result{}, err
	}
	res, err := converge(ctx, m, api, w, o.Apply)
	res.Values[key] = id
	res.Values["pending_nodes"] = nonNil(away)
	if len(away) > 0 && o.Apply {
		m.Warn(pendingNodesWarning(away))
	}
	return res, err
}

// maintenanceOption is the option of every module that applies SDN: the nodes taken out.
func maintenanceOption() *module.Option {
	return &module.Option{Type: module.TypeList, Elements: module.TypeStr, Default: []any{}}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// stageResult turns a converge outcome into the module result shared by the staging modules.
func stageResult(out Outcome, check, apply bool) module.Result {
	res := module.Result{Changed: out.Changed(), Diffs: Changes(out.Ops).Diffs()}
	objs := make([]map[string]any, 0, len(out.Objects))
	for _, o := range out.Objects {
		m := map[string]any{"key": o.Key, "kind": string(o.Kind), "id": o.ID, "action": o.Action, "pending": o.Pending}
		if o.Parent != "" {
			m["parent"] = o.Parent
		}
		if o.Props != nil {
			m["properties"] = o.Props
		}
		objs = append(objs, m)
	}
	pending := out.PendingObjects
	if pending == nil {
		pending = []string{}
	}
	var task any
	if out.UPID != "" {
		task = out.UPID
	}
	reapply := zoneList(out.Reapply)
	res.Values = map[string]any{"objects": objs, "pending_objects": pending, "applied": out.Applied, "apply_task": task, "staged": out.Staged, "reapplied_for": reapply}
	res.Msg = summary(out, check, apply)
	return res
}

func summary(out Outcome, check, apply bool) string {
	if len(out.Reapply) > 0 && len(out.Ops) == 0 {
		if check {
			return "would apply again: the running SDN config has not reached " + strings.Join(zoneList(out.Reapply), ", ")
		}
		return "applied again: the running SDN config had not reached " + strings.Join(zoneList(out.Reapply), ", ") + " (task " + out.UPID + ")"
	}
	if out.Applied && len(out.Ops) == 0 {
		return "applied the changes staged earlier (task " + out.UPID + ")"
	}
	if out.WouldApply && len(out.Ops) == 0 {
		return "would apply " + strings.Join(out.PendingObjects, ", ")
	}
	if len(out.Ops) == 0 && !out.Applied {
		if len(out.PendingObjects) > 0 {
			return "already staged, not yet applied: " + strings.Join(out.PendingObjects, ", ")
		}
		return "no change"
	}
	byAction := map[Action][]string{}
	for _, op := range out.Ops {
		byAction[op.Action] = append(byAction[op.Action], op.Object.Key())
	}
	var parts []string
	for _, a := range []Action{Create, Update, Remove} {
		if keys := byAction[a]; len(keys) > 0 {
			verb := map[Action]string{Create: "create", Update: "update", Remove: "delete"}[a]
			parts = append(parts, verb+" "+strings.Join(keys, ", "))
		}
	}
	msg := strings.Join(parts, "; ")
	switch {
	case check && apply:
		// the apply is a write of its own (the SDN lock, PUT /cluster/sdn, each node's reload): the plan says it
		return "would " + msg + "; then apply"
	case check:
		return "would " + msg
	case out.Applied:
		return msg + "; applied (task " + out.UPID + ")"
	case apply:
		return msg
	default:
		return msg + "; staged, not applied: apply once with deevnet.tenant.pve_sdn_apply"
	}
}

func zoneList(zs []ZoneStatus) []string {
	parts := make([]string, len(zs))
	for i, z := range zs {
		parts[i] = z.String()
	}
	return parts
}

// converge runs the shared staging flow for a planned work.
func converge(ctx context.Context, m *module.Module, api API, w Work, apply bool) (module.Result, error) {
	// Read only when an apply is due: a converged run proves itself from its own objects.
	foreign := func() ([]Observed, error) {
		pending, err := PendingSet(ctx, api, w.Views)
		if err != nil {
			return nil, err
		}
		return ForeignPending(pending, w.Managed()), nil
	}
	out, err := Converge(ctx, api, w.Desired, w.Remove, w.Index, m.CheckMode, apply, foreign)
	res := stageResult(out, m.CheckMode, apply)
	if err != nil {
		res.Changed = out.Staged > 0 || out.Applied
		return res, module.Fail(err.Error(), res.Values)
	}
	return res, nil
}
