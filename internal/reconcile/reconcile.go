// Package reconcile is the vocabulary the converging modules share: observe what is, plan the
// changes (each with a kind, an id, and its state before and after, for the diff), act on them.
// Check mode stops before act, and diff mode renders the very plan that act would run.
//
// Each domain keeps its own observe and act (PVE SDN, PVE access, netlink, DNS UPDATE); this
// package holds only what is the same in all of them.
package reconcile

import (
	"context"
	"slices"

	"github.com/deevnet/tenant/internal/module"
)

// Action is what a change does to its object.
type Action string

// The actions of a change.
const (
	Create Action = "create"
	Update Action = "update"
	Delete Action = "delete"
	// Unchanged is an object the run leaves as it is. A plan lists one only where its diff
	// shows every object, changed or not (tenant_vm's shows every declared VM); Diffs renders
	// it like any other change, with Before and After alike.
	Unchanged Action = "unchanged"
)

// Change is one planned change of one object. Before and After are the object's state in the
// shape the diff shows; nil is "absent" (After of a delete, Before of a create).
type Change struct {
	Kind   string
	ID     string
	Action Action
	Before any
	After  any
}

// Plan is the changes of one run, in the order act makes them.
type Plan []Change

// Diffs renders the plan for diff mode: one before/after pair per change, headed by the
// change's ID; an absent side shows as {} so the diff callback prints an addition or removal.
func (p Plan) Diffs() []module.Diff {
	out := make([]module.Diff, 0, len(p))
	for _, c := range p {
		d := module.Diff{BeforeHeader: c.ID, AfterHeader: c.ID, Before: c.Before, After: c.After}
		if d.Before == nil {
			d.Before = map[string]any{}
		}
		if d.After == nil {
			d.After = map[string]any{}
		}
		out = append(out, d)
	}
	return out
}

// Run observes and plans (plan reads what it needs and says whether anything changes), then
// acts on the plan unless in check mode or nothing changes. acted says whether act ran: a
// failed act may have changed part of what it planned, which the caller reports.
func Run[P any](ctx context.Context, check bool, plan func(context.Context) (P, bool, error), act func(context.Context, P) error) (p P, acted bool, err error) {
	p, changes, err := plan(ctx)
	if err != nil || check || !changes {
		return p, false, err
	}
	return p, true, act(ctx, p)
}

// SortedValues returns m's values ordered by cmp: the stable order a plan and its diff show.
func SortedValues[K comparable, V any](m map[K]V, cmp func(a, b V) int) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, cmp)
	return out
}

// BoolInt is a boolean as PVE's API takes it: 1 or 0.
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
