package access

// The deevnet.tenant.pve_tenant_storages Ansible module: every tenant's own storage (the lvmthin
// storage tenant-<name> that onboarding registers, ADR-0014 decision 2) extended to the fabric's
// members. Onboarding registers a tenant's storage on the members of its day; a node that joins
// later (Phase 2) would otherwise refuse the tenant's clones there ("storage 'tenant-x' is not
// available on node"), and the tenant's token cannot change a storage (Sys.Modify on /storage).

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/jsonval"
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/reconcile"
)

// StoragesOptions are pve_tenant_storages' options.
type StoragesOptions struct {
	pve.Connection
	Nodes        []string       `opt:"nodes"`
	EnvelopeDisk map[string]any `opt:"envelope_disk"`
}

// StoragesModule is pve_tenant_storages: plugins/modules/pve_tenant_storages.py documents it.
func StoragesModule() module.Entry {
	return module.Declare(module.Spec{
		Options: pve.WithConnectionOptions(map[string]*module.Option{
			"nodes":         {Type: module.TypeList, Elements: module.TypeStr, Required: true},
			"envelope_disk": {Type: module.TypeDict},
		}),
		SupportsCheckMode: true,
	}, extendStorages)
}

// tenantStorage is one tenant's own storage as GET /storage lists it.
type tenantStorage struct {
	ID, VGName string
	Nodes      []string // sorted; empty: every node (PVE's storage_check_node)
}

// isTenantStorage is onboarding's shape of a tenant's storage: lvmthin, id tenant-<name> on the
// thin pool of the same name (plan.Tenant's Storage and ThinPool). Shared or other storages are
// the operator's, and are left alone.
func isTenantStorage(typ, id, thinpool string) bool {
	return typ == "lvmthin" && strings.HasPrefix(id, "tenant-") && len(id) > len("tenant-") && thinpool == id
}

// readTenantStorages lists the tenants' own storages, sorted by id.
func readTenantStorages(ctx context.Context, c *pve.Client) ([]tenantStorage, error) {
	var list []struct {
		Storage  string `json:"storage"`
		Type     string `json:"type"`
		VGName   string `json:"vgname"`
		ThinPool string `json:"thinpool"`
		Nodes    string `json:"nodes"`
	}
	if err := c.Get(ctx, "/storage", url.Values{"type": {"lvmthin"}}, &list); err != nil {
		return nil, fmt.Errorf("read the storages (GET /storage): %w", err)
	}
	var out []tenantStorage
	for _, s := range list {
		if !isTenantStorage(s.Type, s.Storage, s.ThinPool) {
			continue
		}
		out = append(out, tenantStorage{ID: s.Storage, VGName: s.VGName, Nodes: splitNodes(s.Nodes)})
	}
	slices.SortFunc(out, func(a, b tenantStorage) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// storageExtension is one storage's nodes before and after: the members it lacks added, none
// removed (a node that leaves the fabric may still hold the tenant's disks; removing it from the
// storage would hide them from PVE).
type storageExtension struct {
	ID, VGName    string
	Before, After []string
	Added         []string
}

// planExtensions lists, for every tenant storage with a node list, the members it lacks.
func planExtensions(storages []tenantStorage, members []string) []storageExtension {
	var out []storageExtension
	for _, s := range storages {
		if len(s.Nodes) == 0 {
			continue // on every node already
		}
		var added []string
		for _, n := range members {
			if !slices.Contains(s.Nodes, n) && !slices.Contains(added, n) {
				added = append(added, n)
			}
		}
		if len(added) == 0 {
			continue
		}
		after := append(slices.Clone(s.Nodes), added...)
		slices.Sort(after)
		slices.Sort(added)
		out = append(out, storageExtension{ID: s.ID, VGName: s.VGName, Before: s.Nodes, After: after, Added: added})
	}
	return out
}

// envelopeDisks reads envelope_disk (tenant name -> the envelope's disk in GiB), refusing a value
// that is not a whole number of at least 1, naming it.
func envelopeDisks(opt map[string]any) (map[string]int, error) {
	out := make(map[string]int, len(opt))
	for _, name := range slices.Sorted(maps.Keys(opt)) {
		n, err := strconv.Atoi(strings.TrimSpace(jsonval.String(opt[name])))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("envelope_disk.%s: %q must be a whole number of GiB of at least 1 (the tenant's envelope.disk)", name, jsonval.String(opt[name]))
		}
		out[name] = n
	}
	return out, nil
}

// checkExtensions refuses, by reads only, a storage extended to a node without its thin pool (a
// clone placed there would fail on lvcreate instead), or, for a tenant in diskGiB, to a node whose
// thin pool is larger than the tenant's envelope disk: the pool's size is what bounds the tenant's
// disk (ADR-0014 decision 2), as onboarding checks on the nodes of its day. Each node's pools are
// read once.
func checkExtensions(ctx context.Context, c *pve.Client, exts []storageExtension, diskGiB map[string]int) error {
	pools := map[string][]lvmThinPool{}
	for _, e := range exts {
		for _, node := range e.Added {
			have, ok := pools[node]
			if !ok {
				if err := c.Get(ctx, "/nodes/"+url.PathEscape(node)+"/disks/lvmthin", nil, &have); err != nil {
					return fmt.Errorf("nodes: storage %s cannot be extended to node %s: reading its thin pools (GET /nodes/%s/disks/lvmthin): %w", e.ID, node, node, err)
				}
				pools[node] = have
			}
			i := slices.IndexFunc(have, func(p lvmThinPool) bool { return p.VG == e.VGName && p.LV == e.ID })
			if i < 0 {
				return fmt.Errorf("nodes: storage %s cannot be extended to node %s: it has no thin pool %s/%s (make it first, sized to the tenant's envelope disk: lvcreate --type thin-pool -L <disk>G -n %s %s)",
					e.ID, node, e.VGName, e.ID, e.ID, e.VGName)
			}
			tenant := strings.TrimPrefix(e.ID, "tenant-")
			if limit, ok := diskGiB[tenant]; ok && have[i].Size > int64(limit)<<30 {
				return fmt.Errorf("nodes: storage %s cannot be extended to node %s: its thin pool %s/%s holds %d bytes (%.1f GiB), more than tenant %s's envelope disk of %d GiB (envelope_disk.%s): the pool is what bounds the tenant's disk, so make it at most %d GiB (a thin pool cannot shrink: remove and make it again while it is empty) or raise the envelope (substrate_tenant_envelopes)",
					e.ID, node, e.VGName, e.ID, have[i].Size, float64(have[i].Size)/(1<<30), tenant, limit, tenant, limit)
			}
		}
	}
	return nil
}

// extendStorages is pve_tenant_storages' handler.
func extendStorages(m *module.Module, o *StoragesOptions) (module.Result, error) {
	members := slices.Clone(o.Nodes)
	for i, n := range members {
		if strings.TrimSpace(n) == "" {
			return module.Result{}, fmt.Errorf("nodes[%d]: a node name is empty", i)
		}
	}
	diskGiB, err := envelopeDisks(o.EnvelopeDisk)
	if err != nil {
		return module.Result{}, err
	}
	c, err := o.Client(m)
	if err != nil {
		return module.Result{}, fmt.Errorf("PVE client: %w", err)
	}
	ctx, cancel := context.WithTimeout(m.Context(), time.Duration(o.Timeout)*time.Second*4)
	defer cancel()
	var exts []storageExtension
	var done int
	_, _, err = reconcile.Run(ctx, m.CheckMode, func(ctx context.Context) ([]storageExtension, bool, error) {
		storages, err := readTenantStorages(ctx, c)
		if err != nil {
			return nil, false, err
		}
		exts = planExtensions(storages, members)
		if err := checkExtensions(ctx, c, exts, diskGiB); err != nil {
			return nil, false, err
		}
		return exts, len(exts) > 0, nil
	}, func(ctx context.Context, exts []storageExtension) error {
		for _, e := range exts {
			if err := c.Put(ctx, "/storage/"+url.PathEscape(e.ID), map[string]any{"nodes": strings.Join(e.After, ",")}, nil); err != nil {
				return fmt.Errorf("extend storage %s to %s: %w", e.ID, strings.Join(e.Added, ","), err)
			}
			done++
		}
		return nil
	})
	if err != nil && done == 0 {
		return module.Result{}, err
	}
	changes := make([]string, len(exts))
	before, after := map[string]any{}, map[string]any{}
	for i, e := range exts {
		changes[i] = fmt.Sprintf("extend storage %s to %s (nodes %s)", e.ID, strings.Join(e.Added, ","), strings.Join(e.After, ","))
		before[e.ID] = map[string]any{"nodes": strings.Join(e.Before, ",")}
		after[e.ID] = map[string]any{"nodes": strings.Join(e.After, ",")}
	}
	res := module.Result{
		Changed: len(exts) > 0,
		Diffs:   []module.Diff{{Before: before, After: after, BeforeHeader: "tenant storages", AfterHeader: "tenant storages"}},
		Values:  map[string]any{"changes": changes},
	}
	switch {
	case err != nil:
		res.Changed = done > 0
		return res, fmt.Errorf("%d of %d storage(s) extended, then: %w", done, len(exts), err)
	case len(exts) == 0:
		res.Msg = "every tenant storage is on the fabric's members"
	case m.CheckMode:
		res.Msg = fmt.Sprintf("would extend %d tenant storage(s) to the fabric's members", len(exts))
	default:
		res.Msg = fmt.Sprintf("extended %d tenant storage(s) to the fabric's members", len(exts))
	}
	return res, nil
}
