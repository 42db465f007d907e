package vm

import (
	"context"
	"fmt"
	"net/url"

	"github.com/deevnet/tenant/internal/jsonval"
	"github.com/deevnet/tenant/internal/pve"
)

// API is the part of the shared PVE client (internal/pve.Client) this package uses.
type API interface {
	Get(ctx context.Context, path string, query url.Values, out any) error
	Post(ctx context.Context, path string, body any, out any) error
	Put(ctx context.Context, path string, body any, out any) error
	Delete(ctx context.Context, path string, query url.Values, out any) error
	// WaitTask returns nil only when the task stopped with exit status "OK".
	WaitTask(ctx context.Context, upid string) error
}

// Observed is one guest as /cluster/resources shows it.
type Observed struct {
	VMID     int
	Name     string
	Node     string
	Pool     string
	Status   string // running, stopped
	Lock     string
	Tags     []string
	Template bool
}

// Inventory is one read of /cluster/resources: every guest, storage and node the token sees.
type Inventory struct {
	VMs      map[int]Observed
	Storages map[string]map[string]string // node -> storage id -> content list
	Nodes    map[string]bool
}

// inventoryRead is ReadInventory's GET, for pve.Client.Prefetch.
func inventoryRead() pve.Read { return pve.Read{Path: "/cluster/resources"} }

// ReadInventory reads /cluster/resources once; one request serves every VM of the run.
func ReadInventory(ctx context.Context, api API) (*Inventory, error) {
	var rows []map[string]any
	if err := api.Get(ctx, inventoryRead().Path, nil, &rows); err != nil {
		return nil, fmt.Errorf("reading /cluster/resources: %w", err)
	}
	inv := &Inventory{VMs: map[int]Observed{}, Storages: map[string]map[string]string{}, Nodes: map[string]bool{}}
	for _, r := range rows {
		switch asString(r["type"]) {
		case "qemu":
			o := Observed{
				VMID: asInt(r["vmid"]), Name: asString(r["name"]), Node: asString(r["node"]),
				Pool: asString(r["pool"]), Status: asString(r["status"]), Lock: asString(r["lock"]),
				Tags: ParseTags(asString(r["tags"])), Template: asInt(r["template"]) == 1,
			}
			inv.VMs[o.VMID] = o
		case "storage":
			node := asString(r["node"])
			if inv.Storages[node] == nil {
				inv.Storages[node] = map[string]string{}
			}
			inv.Storages[node][asString(r["storage"])] = asString(r["content"])
		case "node":
			inv.Nodes[asString(r["node"])] = true
		}
	}
	return inv, nil
}

// ReadConfig reads a VM's config through /pending, which PVE answers with every key's
// committed value and its pending one: the effective view is pending-over-committed, minus
// pending deletions. The second result lists the keys still pending (they need a restart).
func ReadConfig(ctx context.Context, api API, node string, vmid int) (map[string]string, []string, error) {
	var rows []map[string]any
	path := fmt.Sprintf("/nodes/%s/qemu/%d/pending", url.PathEscape(node), vmid)
	if err := api.Get(ctx, path, nil, &rows); err != nil {
		return nil, nil, fmt.Errorf("reading the config of VM %d: %w", vmid, err)
	}
	cfg := map[string]string{}
	var pending []string
	for _, r := range rows {
		k := asString(r["key"])
		if k == "" {
			continue
		}
		if asInt(r["delete"]) != 0 {
			pending = append(pending, k)
			continue
		}
		if p, ok := r["pending"]; ok && p != nil {
			cfg[k] = asString(p)
			pending = append(pending, k)
			continue
		}
		if v, ok := r["value"]; ok && v != nil {
			cfg[k] = asString(v)
		}
	}
	return cfg, pending, nil
}

// asString and asInt read PVE's loosely typed JSON values (internal/jsonval).
func asString(v any) string { return jsonval.String(v) }

func asInt(v any) int { return jsonval.Int(v) }
