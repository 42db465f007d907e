package pve

import (
	"context"
	"time"
)

// Sleep waits d unless ctx ends first, and says whether the whole wait passed. Every poll and
// retry loop of the modules waits through it, so a cancelled run (Ansible's timeout) never
// sits out a backoff.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
