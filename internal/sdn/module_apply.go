package sdn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pve"
)

// ApplyOptions are pve_sdn_apply's options (applySpec declares their rules).
type ApplyOptions struct {
	pve.Connection
	Timing
	Expect              []string `opt:"expect"`
	AllowForeignPending bool     `opt:"allow_foreign_pending"`
	OnFailure           string   `opt:"on_failure"`
	Maintenance         []string `opt:"maintenance"`
}

// ApplyModule is pve_sdn_apply: plugins/modules/pve_sdn_apply.py documents it.
func ApplyModule() module.Entry { return module.Declare(applySpec(), apply) }

func applySpec() module.Spec {
	opts := timingOptions()
	opts["expect"] = &module.Option{Type: module.TypeList, Elements: module.TypeStr, Default: []any{}}
	opts["allow_foreign_pending"] = &module.Option{Type: module.TypeBool, Default: false}
	opts["on_failure"] = &module.Option{Type: module.TypeStr, Default: "release", Choices: []any{"release", "rollback"}}
	opts["maintenance"] = maintenanceOption()
	return module.Spec{Options: pve.WithConnectionOptions(opts), SupportsCheckMode: true}
}

func pendingList(objs []Observed) []map[string]any {
	out := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		out = append(out, map[string]any{"key": o.Key(), "kind": string(o.Kind), "id": o.ID, "pending": o.State})
	}
	return out
}

// foreignOf returns the pending objects not expected (none when foreign ones are allowed).
func (o *ApplyOptions) foreignOf(pending []Observed) []Observed {
	if o.AllowForeignPending {
		return nil
	}
	expect := map[string]bool{}
	for _, k := range o.Expect {
		expect[strings.TrimSpace(k)] = true
	}
	return ForeignPending(pending, expect)
}

func keys(objs []Observed) string {
	parts := make([]string, 0, len(objs))
	for _, o := range objs {
		parts = append(parts, fmt.Sprintf("%s (%s)", o.Key(), o.State))
	}
	return strings.Join(parts, ", ")
}

// apply is pve_sdn_apply's handler: one apply for everything the run staged.
//
// It reads the pending set; nothing pending is a no-op with no write. Otherwise every pending
// object must be expected (or allow_foreign_pending given). It then takes the lock, reads the
// pending set again under it (nobody can stage in between any more), checks it again, and
// applies with the lock token; PVE releases the lock when the commit succeeds.
func apply(m *module.Module, o *ApplyOptions) (module.Result, error) {
	for i, k := range o.Expect {
		if err := CheckKey(fmt.Sprintf("expect[%d]", i), strings.TrimSpace(k)); err != nil {
			return module.Result{}, err
		}
	}
	ctx, cancel, api, err := open(m, o.Connection, o.Timing)
	if err != nil {
		return module.Result{}, err
	}
	defer cancel()
	// before anything is written: a node the apply cannot reach fails the run unless it is in
	// maintenance (nodes.go); one in maintenance is reported, never passed over in silence
	api.Maintenance = o.Maintenance
	away, err := api.Unreachable(ctx)
	if err != nil {
		return module.Result{}, err
	}
	if len(away) > 0 {
		m.Warn(pendingNodesWarning(away))
	}
	pending, err := PendingSet(ctx, api, map[Kind][]Observed{})
	if err != nil {
		return module.Result{}, err
	}
	values := map[string]any{"pending_objects": pendingList(pending), "apply_task": nil, "applied": false, "reapplied_for": []string{},
		"pending_nodes": nonNil(away)}
	var reapply []ZoneStatus
	if len(pending) == 0 && m.CheckMode && len(o.Expect) > 0 {
		// Check mode staged nothing: what this run's staging task would stage is not pending yet, and
		// the real run applies it; the plan says so rather than "nothing pending".
		return module.Result{Changed: true, Msg: "would apply " + strings.Join(o.Expect, ", ") + " (staged by this run before it; in check mode nothing is staged)",
			Diffs: []module.Diff{{BeforeHeader: "SDN changes this run stages", AfterHeader: "applied", Before: expectList(o.Expect), After: []any{}}}, Values: values}, nil
	}
	if len(pending) == 0 {
		// Nothing staged; but a node whose reload failed (or never came)
		// still runs an older config: only applying again reloads it.
		if reapply, err = api.Unsettled(ctx); err != nil {
			return module.Result{}, err
		}
		if len(reapply) == 0 {
			return module.Result{Msg: "nothing pending", Values: values}, nil
		}
		values["reapplied_for"] = zoneList(reapply)
	}
	if foreign := o.foreignOf(pending); len(foreign) > 0 {
		return module.Result{}, module.Fail(fmt.Sprintf("refusing to apply pending SDN changes this run did not stage: %s; add them to expect, set allow_foreign_pending: true, or roll them back", keys(foreign)), values)
	}
	diff := module.Diff{BeforeHeader: "pending SDN changes", AfterHeader: "applied", Before: pendingList(pending), After: []any{}}
	if m.CheckMode {
		if len(reapply) > 0 {
			return module.Result{Changed: true, Msg: "would apply again: the running SDN config has not reached " + strings.Join(zoneList(reapply), ", "), Values: values}, nil
		}
		return module.Result{Changed: true, Msg: "would apply " + keys(pending), Diffs: []module.Diff{diff}, Values: values}, nil
	}
	token, err := api.Lock(ctx, true)
	if err != nil {
		return module.Result{}, module.Fail(err.Error(), values)
	}
	again, err := PendingSet(ctx, api, map[Kind][]Observed{})
	if err == nil {
		if foreign := o.foreignOf(again); len(foreign) > 0 {
			err = fmt.Errorf("refusing to apply: pending SDN changes appeared before the lock was taken: %s", keys(foreign))
		}
	}
	if err != nil {
		return module.Result{}, module.Fail(release(ctx, api, token, "release", err, o.grace()).Error(), values)
	}
	values["pending_objects"] = pendingList(again)
	upid, err := api.Apply(ctx, token)
	values["apply_task"] = nilIfEmpty(upid)
	if err != nil {
		if upid == "" {
			// The commit failed and PVE kept the lock.
			err = release(ctx, api, token, o.OnFailure, err, o.grace())
			return module.Result{}, module.Fail(err.Error(), values)
		}
		// The running config is already written: a rollback would change nothing, so the
		// failure is reported with PVE's message for the operator.
		values["applied"] = true
		var re *ReloadError
		if errors.As(err, &re) {
			values["reapplied_for"] = zoneList(re.Zones)
			return module.Result{Changed: true, Values: values}, module.Fail(err.Error(), values)
		}
		return module.Result{Changed: true, Values: values}, module.Fail(err.Error()+"; the configuration was committed but the network reload failed on a node: check its task log", values)
	}
	values["applied"] = true
	if len(reapply) > 0 && len(again) == 0 {
		return module.Result{Changed: true, Msg: fmt.Sprintf("applied again: the running SDN config had not reached %s (task %s)", strings.Join(zoneList(reapply), ", "), upid), Values: values}, nil
	}
	return module.Result{Changed: true, Msg: fmt.Sprintf("applied %s (task %s)", keys(again), upid), Diffs: []module.Diff{diff}, Values: values}, nil
}

// grace is how long giving the lock back may take once the run has failed: one api_timeout, even
// after apply_timeout has passed, since a lock left held would block every other client.
func (o *ApplyOptions) grace() time.Duration { return time.Duration(o.Timeout) * time.Second }

// release gives the lock back after a failure: by rolling back every pending change, or by
// releasing it and leaving the changes staged.
func release(ctx context.Context, api API, token, how string, cause error, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	var err error
	if how == "rollback" {
		err = api.Rollback(ctx, token)
		if err == nil {
			return fmt.Errorf("%w (pending changes rolled back, lock released)", cause)
		}
		// The rollback failed (PVE has none before the first apply): release the lock at least.
		err = errors.Join(err, api.Unlock(ctx, token))
	} else {
		err = api.Unlock(ctx, token)
		if err == nil {
			return fmt.Errorf("%w (lock released, changes left staged)", cause)
		}
	}
	return errors.Join(cause, err)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func expectList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
