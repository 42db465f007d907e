package pve

import "testing"

func TestReadOnlyPVEFS(t *testing.T) {
	for msg, want := range map[string]bool{
		"unable to open file '/etc/pve/nodes/p02/qemu-server/10201.conf.tmp.45034' - Permission denied": true,
		"cluster not ready - no quorum?":                                 false, // names quorum already
		"create pool failed: cfs-lock 'file-user_cfg' error: no quorum!": false,
		"unable to open file '/var/lib/x' - Permission denied":           false,
		"VM 10201 already running":                                       false,
	} {
		if got := readOnlyPVEFS(msg); got != want {
			t.Errorf("readOnlyPVEFS(%q) = %v, want %v", msg, got, want)
		}
	}
}
