package sdn

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ObjectResult is what a module reports for one object it manages.
type ObjectResult struct {
	Key     string         `json:"key"`
	Kind    Kind           `json:"kind"`
	ID      string         `json:"id"`
	Parent  string         `json:"parent,omitempty"`
	Action  string         `json:"action"`  // create, update, delete or none
	Pending string         `json:"pending"` // PVE's pending state after this run: new, changed, deleted or ""
	Props   map[string]any `json:"properties,omitempty"`
}

// Outcome is the result of a Converge call.
type Outcome struct {
	Ops            []Op
	Staged         int // ops sent (0 in check mode)
	Objects        []ObjectResult
	PendingObjects []string // keys of managed objects left pending (not yet applied)
	Applied        bool
	WouldApply     bool // check mode: an apply was asked for and something is pending
	UPID           string
	// Reapply lists the node zones that had not reached the running config
	// (a failed or unfinished reload) when nothing was pending: applying
	// again reloads them.
	Reapply []ZoneStatus
}

// Changed reports whether anything was (or, in check mode, would be) written or applied.
func (o Outcome) Changed() bool { return len(o.Ops) > 0 || o.Applied || o.WouldApply }

// Converge stages the ops that bring ix to desired and remove, then applies them if asked.
//
// With apply, every pending change must be ours (managed objects) before the lock is taken:
// PVE's apply is global, so a foreign pending change is refused, naming it. The lock is taken
// without allow-pending when nothing is pending at all, which proves nobody else stages under
// it, and a failed staging is then rolled back; otherwise a failure only releases the lock.
// foreign returns the pending objects not managed here (see ForeignPending). It is called only
// when an apply is due (something to stage, a managed object pending, or a node to reload), so
// a converged run reads no other kind's pending view; nil means none.
func Converge(ctx context.Context, api API, desired []Desired, remove []Object, ix Index, check, apply bool, foreign func() ([]Observed, error)) (Outcome, error) {
	ops := Plan(desired, remove, ix)
	out := Outcome{Ops: ops}
	out.Objects, out.PendingObjects = results(desired, remove, ix, ops)
	needApply := apply && len(out.PendingObjects) > 0
	if apply && len(ops) == 0 && !needApply {
		// Nothing to stage or apply, unless a node never got the running
		// config (its reload failed): PVE shows that only in node status.
		bad, err := api.Unsettled(ctx)
		if err != nil {
			return out, err
		}
		out.Reapply, needApply = bad, len(bad) > 0
	}
	if apply && foreign != nil && (needApply || len(ops) > 0) {
		f, err := foreign()
		if err != nil {
			out.Objects, out.PendingObjects = results(desired, remove, ix, nil) // nothing staged
			return out, err
		}
		if len(f) > 0 {
			out.Objects, out.PendingObjects = results(desired, remove, ix, nil) // nothing staged
			return out, fmt.Errorf("refusing to apply: SDN has pending changes this module did not make: %s; apply or roll them back first (deevnet.tenant.pve_sdn_apply shows them)", describe(f))
		}
	}
	if check {
		out.WouldApply = needApply
		return out, nil
	}
	if len(ops) == 0 && !needApply {
		return out, nil
	}
	if !apply {
		n, err := api.Stage(ctx, ops, "")
		out.Staged = n
		if err != nil {
			// Report only what was staged.
			out.Objects, out.PendingObjects = results(desired, remove, ix, ops[:n])
		}
		return out, err
	}
	report := func(done []Op) { out.Objects, out.PendingObjects = results(desired, remove, ix, done) }
	if err := lockedApply(ctx, api, ops, ix, &out, report); err != nil {
		return out, err
	}
	out.Applied = true
	for i := range out.Objects {
		out.Objects[i].Pending = StateNone
	}
	out.PendingObjects = nil
	return out, nil
}

// lockedApply takes the SDN lock, stages ops under it and applies them. report(done) resets the
// reported objects to those of done having been staged. On a staging failure it rolls back when
// nothing of ours was pending before (the lock then proves nobody else staged), else it only
// releases the lock; a failed commit releases the lock and leaves the changes staged.
func lockedApply(ctx context.Context, api API, ops []Op, ix Index, out *Outcome, report func(done []Op)) error {
	ownPendingBefore := false
	for _, o := range ix {
		if o.State != StateNone {
			ownPendingBefore = true
		}
	}
	token, err := api.Lock(ctx, ownPendingBefore)
	if err != nil {
		// Refused before staging: report only what was pending already.
		report(nil)
		return err
	}
	n, err := api.Stage(ctx, ops, token)
	out.Staged = n
	if err != nil {
		report(ops[:n])
		if !ownPendingBefore {
			if rerr := api.Rollback(ctx, token); rerr != nil {
				// PVE cannot roll back before the first apply ever: give the lock back at least.
				return errors.Join(err, rerr, api.Unlock(ctx, token))
			}
			out.Staged = 0
			report(nil)
			return fmt.Errorf("%w (rolled back the %d change(s) staged before it)", err, n)
		}
		if uerr := api.Unlock(ctx, token); uerr != nil {
			return errors.Join(err, uerr)
		}
		return err
	}
	upid, err := api.Apply(ctx, token)
	out.UPID = upid
	if err != nil {
		if upid == "" {
			// The commit failed, so PVE kept the lock: release it and leave the changes staged.
			if uerr := api.Unlock(ctx, token); uerr != nil {
				return errors.Join(err, uerr)
			}
		}
		return err
	}
	return nil
}

// results reports every managed object with its action and the pending state it will have.
func results(desired []Desired, remove []Object, ix Index, ops []Op) ([]ObjectResult, []string) {
	byKey := map[string]*Op{}
	for i := range ops {
		byKey[ops[i].Object.Key()] = &ops[i]
	}
	var res []ObjectResult
	var pending []string
	add := func(o Object, props map[string]any) {
		k := o.Key()
		op := byKey[k]
		var obs *Observed
		if v, ok := ix[k]; ok {
			obs = &v
		}
		action := "none"
		if op != nil {
			action = string(op.Action)
		}
		st := PendingAfter(obs, op)
		res = append(res, ObjectResult{Key: k, Kind: o.Kind, ID: o.ID, Parent: o.Parent, Action: action, Pending: st, Props: props})
		if st != StateNone {
			pending = append(pending, k)
		}
	}
	seen := map[string]bool{}
	for _, d := range desired {
		seen[d.Key()] = true
		add(d.Object, normalise(d.Kind, d.Props).Owned(d.Kind, d.Owned).Map())
	}
	for _, r := range remove {
		if !seen[r.Key()] {
			add(r, nil)
		}
	}
	sort.Strings(pending)
	return res, pending
}

// describe names pending objects with their state, for error messages.
func describe(objs []Observed) string {
	parts := make([]string, 0, len(objs))
	for _, o := range objs {
		parts = append(parts, fmt.Sprintf("%s (%s)", o.Key(), o.State))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// PendingSet reads every kind's pending view and returns the objects with a pending change.
// Views already read (in have) are reused: only the kinds in need are fetched.
func PendingSet(ctx context.Context, api API, have map[Kind][]Observed) ([]Observed, error) {
	get := func(k Kind, f func() ([]Observed, error)) ([]Observed, error) {
		if v, ok := have[k]; ok {
			return v, nil
		}
		v, err := f()
		if err == nil {
			have[k] = v
		}
		return v, err
	}
	zones, err := get(KindZone, func() ([]Observed, error) { return api.Zones(ctx) })
	if err != nil {
		return nil, err
	}
	vnets, err := get(KindVNet, func() ([]Observed, error) { return api.VNets(ctx) })
	if err != nil {
		return nil, err
	}
	ctrls, err := get(KindController, func() ([]Observed, error) { return api.Controllers(ctx) })
	if err != nil {
		return nil, err
	}
	_, hf := have[KindFabric]
	_, hn := have[KindFabricNode]
	if !hf || !hn {
		f, n, err := api.Fabrics(ctx)
		if err != nil {
			return nil, err
		}
		have[KindFabric], have[KindFabricNode] = f, n
	}
	all := [][]Observed{zones, vnets, ctrls, have[KindFabric], have[KindFabricNode]}
	// Subnets: have[KindSubnet] holds those already read, one vnet at a time.
	readSubnets := map[string]bool{}
	for _, s := range have[KindSubnet] {
		readSubnets[s.Parent] = true
	}
	subnets := append([]Observed(nil), have[KindSubnet]...)
	for _, v := range vnets {
		if !v.Exists() || readSubnets[v.ID] {
			continue
		}
		s, err := api.Subnets(ctx, v.ID)
		if err != nil {
			return nil, err
		}
		subnets = append(subnets, s...)
		readSubnets[v.ID] = true
	}
	have[KindSubnet] = subnets
	all = append(all, subnets)
	var out []Observed
	for _, list := range all {
		for _, o := range list {
			if o.State != StateNone {
				out = append(out, o)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, nil
}

// ForeignPending returns the pending objects that are not managed (not in keys).
func ForeignPending(pending []Observed, managed map[string]bool) []Observed {
	var out []Observed
	for _, o := range pending {
		if !managed[o.Key()] {
			out = append(out, o)
		}
	}
	return out
}
