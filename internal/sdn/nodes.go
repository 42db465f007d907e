package sdn

// Nodes an SDN apply cannot reach (issue 25, item 3). PVE's reloadnetworkall task ends OK even
// when a node is offline (it only logs the node's failure), and an offline node's zone status
// cannot be read (595), so a run decides explicitly before it writes: an offline node fails the
// run, naming it, unless the operator put it in maintenance; then the run converges the other
// nodes and reports the node as pending, and the first run after it returns applies again there
// (its zones are pending: its files are older than the running config).

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/deevnet/tenant/internal/pve"
)

// NodeOfflineError says a node is offline and not in maintenance.
type NodeOfflineError struct {
	Node   string
	Status string // /nodes status: offline or unknown
}

func (e *NodeOfflineError) Error() string {
	return fmt.Sprintf("node %s is %s (GET /nodes): an SDN apply cannot reach it, and PVE would still report the apply OK; "+
		"bring %s back, or put it in maintenance (maintenance: [%s]; substrate_maintenance in the inventory) to converge the other nodes now "+
		"and finish %s at the first run after it returns", e.Node, e.Status, e.Node, e.Node, e.Node)
}

// NodeStatus reads every cluster node's status (GET /nodes).
func (a API) NodeStatus(ctx context.Context) (map[string]string, error) {
	return pve.NodeStatus(ctx, a.C)
}

// Unreachable reads /nodes and returns the offline nodes in maintenance (sorted): the apply
// leaves them pending. An offline node not in maintenance is a *NodeOfflineError.
func (a API) Unreachable(ctx context.Context) ([]string, error) {
	status, err := a.NodeStatus(ctx)
	if err != nil {
		return nil, err
	}
	if err := pve.CheckMaintenance(a.Maintenance, status); err != nil {
		return nil, err
	}
	var away []string
	for _, n := range pve.SortedNodes(status) {
		if status[n] == "online" {
			continue
		}
		if !slices.Contains(a.Maintenance, n) {
			return nil, &NodeOfflineError{Node: n, Status: status[n]}
		}
		away = append(away, n)
	}
	return away, nil
}

// pendingNodesWarning is the warning of a run that left nodes in maintenance behind.
func pendingNodesWarning(away []string) string {
	return fmt.Sprintf("node(s) %s offline in maintenance: the SDN configuration applied now has not reached them; "+
		"the first run after they return applies it there (pending_nodes)", strings.Join(away, ", "))
}
