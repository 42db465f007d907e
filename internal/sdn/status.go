package sdn

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"time"

	"github.com/deevnet/tenant/internal/pve"
)

// ZoneStatus is one zone's SDN status on one node, as GET
// /nodes/{node}/sdn/zones reports it: available, pending (the node's files
// are older than the running config) or error (the node's reload failed).
type ZoneStatus struct {
	Node   string
	Zone   string
	Status string
}

func (z ZoneStatus) String() string {
	if z.Zone == "" { // the node itself: offline
		return z.Node + " (" + z.Status + ")"
	}
	return z.Node + "/" + z.Zone + " (" + z.Status + ")"
}

// defaultSettle is how long a pending node is given to finish its reload:
// PVE's apply task ends when it has started the node reloads, not when they end.
const defaultSettle = 30 * time.Second

// NodeZones reads every online node's zone statuses. A node that is not online has none to
// read (PVE answers 595): one in maintenance is left out (Unreachable reports it), any other
// is one entry with the node's status and no zone, which is never settled.
func (a API) NodeZones(ctx context.Context) ([]ZoneStatus, error) {
	status, err := a.NodeStatus(ctx)
	if err != nil {
		return nil, err
	}
	var out []ZoneStatus
	var reads []pve.Read
	for _, name := range pve.SortedNodes(status) {
		if status[name] == "online" {
			reads = append(reads, pve.Read{Path: nodeZonesPath(name)})
		}
	}
	a.C.Prefetch(ctx, reads...)
	for _, name := range pve.SortedNodes(status) {
		if status[name] != "online" {
			if !slices.Contains(a.Maintenance, name) {
				out = append(out, ZoneStatus{Node: name, Status: status[name]})
			}
			continue
		}
		var zones []map[string]any
		if err := a.C.Get(ctx, nodeZonesPath(name), nil, &zones); err != nil {
			return nil, fmt.Errorf("reading the SDN status of node %s: %w", name, err)
		}
		for _, z := range zones {
			zs := ZoneStatus{Node: name, Zone: fmt.Sprint(z["zone"]), Status: fmt.Sprint(z["status"])}
			out = append(out, zs)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

func nodeZonesPath(node string) string { return "/nodes/" + url.PathEscape(node) + "/sdn/zones" }

// Unsettled returns the zones whose status on some node is not available,
// after giving pending ones up to a.Settle to finish their reload. A node in
// error, or still pending, has not reached the running config: applying
// again regenerates its files and reloads it.
func (a API) Unsettled(ctx context.Context) ([]ZoneStatus, error) {
	settle := a.Settle
	if settle <= 0 {
		settle = defaultSettle
	}
	deadline := time.Now().Add(settle)
	for {
		zs, err := a.NodeZones(ctx)
		if err != nil {
			return nil, err
		}
		var bad []ZoneStatus
		waiting := false
		for _, z := range zs {
			if z.Status != "available" {
				bad = append(bad, z)
				waiting = waiting || z.Status == "pending"
			}
		}
		if !waiting || time.Now().After(deadline) {
			return bad, nil
		}
		if !pve.Sleep(ctx, 250*time.Millisecond) {
			return bad, nil
		}
		// the run's read cache would answer the same "pending" until the deadline
		a.C.ForgetReads()
	}
}
