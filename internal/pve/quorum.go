package pve

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/jsonval"
)

// readOnlyPVEFS reports whether msg is how PVE fails a write into /etc/pve that pmxcfs refused:
// without quorum pmxcfs makes /etc/pve read-only, and a guest's config, written under a local
// flock, fails as "unable to open file '/etc/pve/nodes/<node>/qemu-server/<vmid>.conf.tmp.<pid>'
// - Permission denied" (PVE::File::file_set_contents; docs/adr/0015-quorum.md), which does not
// say why. The other two ways PVE fails such a write name quorum already ("cluster not ready - no
// quorum?", "cfs-lock '...' error: no quorum!").
func readOnlyPVEFS(msg string) bool {
	return strings.Contains(msg, "'/etc/pve/") && strings.Contains(msg, "Permission denied") && !strings.Contains(msg, "quorum")
}

// quorumHint adds, to an error PVE gave for a write into a read-only /etc/pve, what the cluster's
// status says of quorum: an operator on a bad day reads "no quorum" instead of a permission
// error on a temporary file. One read of GET /cluster/status, only after such a failure; err is
// returned as it was when the cluster is quorate, and named as likely when the read is refused.
func (c *Client) quorumHint(ctx context.Context, msg string, err error) error {
	if !readOnlyPVEFS(msg) {
		return err
	}
	// The caller's context may be spent (a task that timed out); the read gets a moment of its own.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var status []map[string]any
	if e := c.api.Req(rctx, http.MethodGet, "/cluster/status", nil, &status); e != nil {
		// A tenant's token lacks Sys.Audit on / and may not read it: the likeliest cause is said
		// as such, with why it could not be confirmed.
		return fmt.Errorf("/etc/pve is read-only, as pmxcfs keeps it while the cluster has no quorum (not confirmed: GET /cluster/status: %w): %w",
			unwrapTransport(e), err)
	}
	quorate, nodes, online := "", 0, 0
	for _, s := range status {
		switch jsonval.String(s["type"]) {
		case "cluster":
			quorate = jsonval.String(s["quorate"])
		case "node":
			nodes++
			if jsonval.String(s["online"]) == "1" {
				online++
			}
		}
	}
	if quorate != "0" {
		return err
	}
	return fmt.Errorf("the cluster has no quorum (GET /cluster/status: quorate 0, %d of %d nodes online): pmxcfs keeps /etc/pve read-only, so PVE refuses every write until quorum returns (docs/adr/0015-quorum.md): %w",
		online, nodes, err)
}
