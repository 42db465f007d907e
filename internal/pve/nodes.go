package pve

// The cluster's nodes as GET /nodes reports them, and the operator's maintenance list checked
// against them: what every module that reaches a node decides from when one is offline (#25).

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Getter reads the API: *Client, and the narrower interfaces the modules use.
type Getter interface {
	Get(ctx context.Context, path string, query url.Values, out any) error
}

// NodesRead is NodeStatus's GET, for Prefetch.
func NodesRead() Read { return Read{Path: "/nodes"} }

// NodeStatus reads every cluster node's status from GET /nodes: online, offline or unknown.
func NodeStatus(ctx context.Context, g Getter) (map[string]string, error) {
	var nodes []map[string]any
	if err := g.Get(ctx, NodesRead().Path, nil, &nodes); err != nil {
		return nil, fmt.Errorf("reading the cluster nodes: %w", err)
	}
	out := map[string]string{}
	for _, n := range nodes {
		if name, _ := n["node"].(string); name != "" {
			out[name] = fmt.Sprint(n["status"])
		}
	}
	return out, nil
}

// SortedNodes are the names of status, sorted.
func SortedNodes(status map[string]string) []string { return slices.Sorted(maps.Keys(status)) }

// CheckMaintenance refuses a maintenance entry that names no cluster node: a typo would leave
// the node it meant to excuse failing the run, or excuse nothing.
func CheckMaintenance(maintenance []string, status map[string]string) error {
	for i, n := range maintenance {
		if _, ok := status[n]; !ok {
			return fmt.Errorf("maintenance[%d]: %q is not a cluster node (nodes: %s)", i, n, strings.Join(SortedNodes(status), ", "))
		}
	}
	return nil
}
