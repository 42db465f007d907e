package vm

// Nodes that are offline or in maintenance (#25). A VM on an offline node cannot be read or
// written (PVE answers 595), so the run decides before any write: the node is in the operator's
// maintenance list, and the VM is left as it is and reported (a warning, pending_node); or it is
// not, and the run fails naming the node and the VM. New VMs are never placed on a node in
// maintenance (placement), nor cloned on a node or from a template that is not online.

import (
	"fmt"
	"slices"
)

// Nodes is what a run knows of the cluster's nodes.
type Nodes struct {
	// Status is each node's GET /nodes status; nil when not read (every node counts as online).
	Status map[string]string
	// Maintenance are the nodes the operator took out of service.
	Maintenance []string
}

// online: a node GET /nodes does not list counts as online here; precheck refuses it by name.
func (n Nodes) online(node string) bool {
	st, ok := n.Status[node]
	return !ok || st == "online"
}

func (n Nodes) inMaintenance(node string) bool { return slices.Contains(n.Maintenance, node) }

// leave says whether an existing VM on node is left as it is this run (its node is offline and
// in maintenance); an offline node not in maintenance refuses the run.
func (n Nodes) leave(d Desired, node string) (bool, error) {
	if n.online(node) {
		return false, nil
	}
	if n.inMaintenance(node) {
		return true, nil
	}
	return false, fmt.Errorf("VM %s (vmid %d) is on node %s, which is %s: it cannot be read or changed; bring %s back, "+
		"or put it in maintenance (maintenance: [%s]; substrate_maintenance in the inventory) to converge the other VMs and leave %s for the first run after %s returns",
		d.Name, d.VMID, node, n.Status[node], node, node, d.Name, node)
}

// cloneOn refuses a clone onto a node in maintenance or not online, or from a template whose
// node is not online (PVE clones on the template's node).
func (n Nodes) cloneOn(d Desired, template int, tmplNode string) error {
	if n.inMaintenance(d.Node) {
		return fmt.Errorf("VM %s: node %s is in maintenance: no new VM is placed there (leave node out and use placement, or take %s out of maintenance)", d.Name, d.Node, d.Node)
	}
	if !n.online(d.Node) {
		return fmt.Errorf("VM %s: node %s is %s: the VM cannot be created there; put it in maintenance (maintenance: [%s]) to place new VMs on the other nodes", d.Name, d.Node, n.Status[d.Node], d.Node)
	}
	if !n.online(tmplNode) {
		return fmt.Errorf("VM %s: template %d is on node %s, which is %s: PVE clones there; bring it back", d.Name, template, tmplNode, n.Status[tmplNode])
	}
	return nil
}

// leaveVM fills the result of a VM left on its offline node.
func (p *vmPlan) leaveVM(node string) {
	p.away = true
	r := p.res
	r.PendingNode = node
	r.Before, r.After = map[string]any{}, map[string]any{}
	r.Warnings = append(r.Warnings, fmt.Sprintf("VM %s is on node %s, offline in maintenance: left as it is; the first run after %s returns converges it (pending_nodes)", p.d.Name, node, node))
}

// pendingNodes are the nodes of the VMs left this run, sorted, without repeats.
func pendingNodes(results []*Result) []string {
	out := []string{}
	for _, r := range results {
		if r.PendingNode != "" && !slices.Contains(out, r.PendingNode) {
			out = append(out, r.PendingNode)
		}
	}
	slices.Sort(out)
	return out
}

// available are the nodes new VMs may be placed on: the site's, less those in maintenance.
func available(nodes, maintenance []string) []string {
	var out []string
	for _, n := range nodes {
		if !slices.Contains(maintenance, n) {
			out = append(out, n)
		}
	}
	return out
}
