package vm

import (
	"testing"

	"github.com/deevnet/tenant/internal/reconcile"
)

// The diff plan's action follows what the run did to the VM: a rebuild is a create (the VM
// after is a fresh clone), a destroy alone a delete, a power action alone an update.
func TestVMAction(t *testing.T) {
	for _, tc := range []struct {
		actions []string
		want    reconcile.Action
	}{
		{[]string{"clone", "config", "resize", "start"}, reconcile.Create},
		{[]string{"stop", "destroy", "clone", "config", "start"}, reconcile.Create},
		{[]string{"stop", "destroy"}, reconcile.Delete},
		{[]string{"config"}, reconcile.Update},
		{[]string{"start"}, reconcile.Update},
		{[]string{}, reconcile.Unchanged},
	} {
		if got := vmAction(tc.actions); got != tc.want {
			t.Errorf("vmAction(%v) = %s, want %s", tc.actions, got, tc.want)
		}
	}
}
