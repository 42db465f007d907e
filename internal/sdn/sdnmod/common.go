// Package sdnmod holds the handlers and argument specs of the SDN modules (pve_sdn_fabric,
// tenant_vrf, pve_sdn_apply); cmd/<module>/main.go only calls module.Run with them.
package sdnmod

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/sdn"
)

// stagingOptions are shared by the modules that stage SDN objects.
func stagingOptions() map[string]*module.Option {
	return map[string]*module.Option{
		"state":         {Type: module.TypeStr, Default: "present", Choices: []any{"present", "absent"}},
		"apply":         {Type: module.TypeBool, Default: false},
		"apply_timeout": {Type: module.TypeInt, Default: 300},
		"site":          {Type: module.TypeDict},
		"lock_wait":     {Type: module.TypeInt, Default: 0},
	}
}

func connect(m *module.Module) (sdn.API, error) {
	c, err := pve.FromModule(m)
	if err != nil {
		return sdn.API{}, err
	}
	return sdn.API{C: c, LockWait: time.Duration(m.Int("lock_wait")) * time.Second}, nil
}

// withTimeout bounds a run that may wait for an apply task.
func withTimeout(m *module.Module) (context.Context, context.CancelFunc) {
	d := time.Duration(m.Int("apply_timeout")) * time.Second
	if d <= 0 {
		d = 300 * time.Second
	}
	// Reads and writes are bounded by api_timeout each; this bounds the whole run.
	d += time.Duration(m.Int("lock_wait")) * time.Second
	return context.WithTimeout(m.Context(), d+time.Duration(m.Int("api_timeout"))*time.Second*4)
}

// stageResult turns a converge outcome into the module result shared by the staging modules.
func stageResult(out sdn.Outcome, check, apply bool) module.Result {
	res := module.Result{Changed: out.Changed()}
	for _, op := range out.Ops {
		d := module.Diff{BeforeHeader: op.Object.Key(), AfterHeader: op.Object.Key()}
		d.Before, d.After = map[string]any{}, map[string]any{}
		if op.Before != nil {
			d.Before = op.Before.Map()
		}
		if op.After != nil {
			d.After = op.After.Map()
		}
		res.Diffs = append(res.Diffs, d)
	}
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

func summary(out sdn.Outcome, check, apply bool) string {
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
	byAction := map[sdn.Action][]string{}
	for _, op := range out.Ops {
		byAction[op.Action] = append(byAction[op.Action], op.Object.Key())
	}
	var parts []string
	for _, a := range []sdn.Action{sdn.Create, sdn.Update, sdn.Remove} {
		if keys := byAction[a]; len(keys) > 0 {
			verb := map[sdn.Action]string{sdn.Create: "create", sdn.Update: "update", sdn.Remove: "delete"}[a]
			parts = append(parts, verb+" "+strings.Join(keys, ", "))
		}
	}
	msg := strings.Join(parts, "; ")
	switch {
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

func zoneList(zs []sdn.ZoneStatus) []string {
	parts := make([]string, len(zs))
	for i, z := range zs {
		parts[i] = z.String()
	}
	return parts
}

// converge runs the shared staging flow for a planned work.
func converge(ctx context.Context, m *module.Module, api sdn.API, w sdn.Work) (module.Result, error) {
	apply := m.Bool("apply")
	var foreign []sdn.Observed
	if apply {
		pending, err := sdn.PendingSet(ctx, api, w.Views)
		if err != nil {
			// Values is never nil: the handlers add the object's id to it on every path.
			return module.Result{Values: map[string]any{}}, err
		}
		foreign = sdn.ForeignPending(pending, w.Managed())
	}
	out, err := sdn.Converge(ctx, api, w.Desired, w.Remove, w.Index, m.CheckMode, apply, foreign)
	res := stageResult(out, m.CheckMode, apply)
	if err != nil {
		res.Changed = out.Staged > 0 || out.Applied
		return res, module.Fail(err.Error(), res.Values)
	}
	return res, nil
}

// strList reads a list option of strings from a suboption map.
func strList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, fmt.Sprint(e))
	}
	return out
}
