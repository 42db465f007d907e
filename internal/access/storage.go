package access

// The tenant's own storage (ADR-0014 decision 2): an lvmthin storage, tenant-<name>, on the thin
// pool <vg>/tenant-<name> that each fabric member has, registered by onboarding (POST /storage),
// the only storage the tenant's token may allocate on.
//
// A full clone of the shared template onto it needs Datastore.AllocateSpace on it and nothing on
// the template's storage: qemu-server's $check_storage_access_clone (API2/Qemu.pm) checks the
// target storage in place of each source disk's, and a CD-ROM or cloud-init drive is "simply
// allowed"; clone_vm reads the source volumes without check_volume_access.

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/deevnet/tenant/internal/plan"
)

// TenantStorage is where the tenant's storage lives: the volume group holding its thin pool on
// each node, and the nodes (the fabric's members).
type TenantStorage struct {
	VGName string   `opt:"vgname"`
	Nodes  []string `opt:"nodes"`
}

// storageWant is the storage section onboarding wants: the tenant's ids (ADR-0002) and where.
type storageWant struct {
	ID, ThinPool, VGName string
	Nodes                []string // sorted
}

func wantStorage(t plan.Tenant, ts TenantStorage) *storageWant {
	nodes := slices.Clone(ts.Nodes)
	slices.Sort(nodes)
	return &storageWant{ID: t.Storage, ThinPool: t.ThinPool, VGName: ts.VGName, Nodes: slices.Compact(nodes)}
}

// storageContent is what the tenant's storage holds: VM disks only (no ISOs, no snippets).
const storageContent = "images"

// storageObserved is the tenant's storage as GET /storage/{storage} shows it.
type storageObserved struct {
	Exists                          bool
	Type, VGName, ThinPool, Content string
	Nodes                           []string
}

// spec is the body of POST /storage.
func (w storageWant) spec() map[string]any {
	return map[string]any{"storage": w.ID, "type": "lvmthin", "vgname": w.VGName, "thinpool": w.ThinPool,
		"content": storageContent, "nodes": strings.Join(w.Nodes, ",")}
}

// readStorage reads the tenant's storage section; a storage that does not exist is no error.
func (a Access) readStorage(ctx context.Context, id string) (storageObserved, error) {
	var cfg struct {
		Type     string `json:"type"`
		VGName   string `json:"vgname"`
		ThinPool string `json:"thinpool"`
		Content  string `json:"content"`
		Nodes    string `json:"nodes"`
	}
	err := a.C.Get(ctx, "/storage/"+url.PathEscape(id), nil, &cfg)
	switch {
	case err == nil:
	case notFound(err):
		return storageObserved{}, nil
	default:
		return storageObserved{}, fmt.Errorf("read storage %s: %w", id, err)
	}
	return storageObserved{Exists: true, Type: cfg.Type, VGName: cfg.VGName, ThinPool: cfg.ThinPool, Content: cfg.Content, Nodes: splitNodes(cfg.Nodes)}, nil
}

// splitNodes is a storage's nodes property (a list PVE writes comma-separated), sorted, without repeats.
func splitNodes(list string) []string {
	nodes := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == ';' })
	slices.Sort(nodes)
	return slices.Compact(nodes)
}

// checkStorage refuses, with reads only, a storage onboarding cannot make the tenant's: an id
// taken by a storage of another kind (PVE cannot change an lvmthin storage's vgname or thinpool,
// they are fixed), a node that is not in the cluster, or a node without the thin pool (POST
// /storage would fail on the API's node; a VM placed on another node could not allocate there).
//
// With diskGiB (the envelope's disk, 0 without an envelope) it also refuses a thin pool larger than
// that: the pool's size is what bounds the tenant's disk (ADR-0014 decision 2), and a thin pool
// cannot be shrunk.
func (a Access) checkStorage(ctx context.Context, w storageWant, o storageObserved, diskGiB int) error {
	where := fmt.Sprintf("tenant_storage: storage %s (lvmthin on %s/%s)", w.ID, w.VGName, w.ThinPool)
	if len(w.Nodes) == 0 {
		return fmt.Errorf("%s: nodes is empty; it lists the fabric's members the storage is on", where)
	}
	if o.Exists && (o.Type != "lvmthin" || o.VGName != w.VGName || o.ThinPool != w.ThinPool) {
		return fmt.Errorf("%s cannot be created: storage %s exists as type %s on %s/%s; vgname and thinpool are fixed in PVE, so remove it (pvesm remove %s) or fix tenant_storage.vgname",
			where, w.ID, o.Type, o.VGName, o.ThinPool, w.ID)
	}
	for _, node := range w.Nodes {
		var pools []lvmThinPool
		if err := a.C.Get(ctx, "/nodes/"+url.PathEscape(node)+"/disks/lvmthin", nil, &pools); err != nil {
			return fmt.Errorf("%s cannot be created: reading node %s's thin pools (GET /nodes/%s/disks/lvmthin): %w", where, node, node, err)
		}
		i := slices.IndexFunc(pools, func(p lvmThinPool) bool { return p.VG == w.VGName && p.LV == w.ThinPool })
		if i < 0 {
			return fmt.Errorf("%s cannot be created: node %s has no thin pool %s/%s (make it on each node first, sized to the envelope's disk: lvcreate --type thin-pool -L <disk>G -n %s %s)",
				where, node, w.VGName, w.ThinPool, w.ThinPool, w.VGName)
		}
		if limit := int64(diskGiB) << 30; diskGiB > 0 && pools[i].Size > limit {
			return fmt.Errorf("%s: node %s's thin pool %s/%s holds %d bytes (%.1f GiB), more than the envelope's disk of %d GiB (envelope.disk): the pool is what bounds the tenant's disk, so make it at most %d GiB (a thin pool cannot shrink: remove and make it again while it is empty) or raise envelope.disk (substrate_tenant_envelopes)",
				where, node, w.VGName, w.ThinPool, pools[i].Size, float64(pools[i].Size)/(1<<30), diskGiB, diskGiB)
		}
	}
	return nil
}

// lvmThinPool is one entry of GET /nodes/<node>/disks/lvmthin (pve-storage's LvmThinPlugin list_thinpools).
type lvmThinPool struct {
	LV   string `json:"lv"`
	VG   string `json:"vg"`
	Size int64  `json:"lv_size"`
}

// storageOps registers the storage when it is missing, or sets its nodes and content back.
func storageOps(w storageWant, o storageObserved) []Op {
	spec := w.spec()
	if !o.Exists {
		return []Op{{Describe: fmt.Sprintf("create storage %s (lvmthin %s/%s, content %s, nodes %s)", w.ID, w.VGName, w.ThinPool, storageContent, spec["nodes"]),
			Method: "POST", Path: "/storage", Body: spec}}
	}
	if o.Content == storageContent && strings.Join(o.Nodes, ",") == spec["nodes"] {
		return nil
	}
	return []Op{{Describe: fmt.Sprintf("update storage %s (content %s, nodes %s)", w.ID, storageContent, spec["nodes"]),
		Method: "PUT", Path: "/storage/" + url.PathEscape(w.ID), Body: map[string]any{"content": storageContent, "nodes": spec["nodes"]}}}
}

// ours is whether the observed storage is the tenant's own (what absent may delete).
func (o storageObserved) ours(id, thinpool string) bool {
	return o.Exists && o.Type == "lvmthin" && o.ThinPool == thinpool && id != ""
}

// storageView is the diff's view of the storage section.
func storageView(o storageObserved) map[string]any {
	if !o.Exists {
		return nil
	}
	return map[string]any{"type": o.Type, "vgname": o.VGName, "thinpool": o.ThinPool, "content": o.Content, "nodes": strings.Join(o.Nodes, ",")}
}

// storageGrant is the tenant's one storage grant: PVEDatastoreUser (Datastore.AllocateSpace and
// Datastore.Audit) on its own storage.
func storageGrant(t plan.Tenant, template int) Grant {
	p := "/storage/" + t.Storage
	// tenant_vm reads the node's storages before any write, and PVE lists a storage only to a
	// token holding Datastore.Audit or AllocateSpace on it, so that read is what fails
	refusal := fmt.Sprintf("storage %q is unknown on node {node} (not registered there, or the token lacks Datastore.AllocateSpace on %s)", t.Storage, p)
	return Grant{Path: p, Role: "PVEDatastoreUser", Propagate: false, Refusal: refusal,
		NeededBy: "tenant_vm: the full clone's disks on its own storage " + t.Storage + " and their resize (Datastore.AllocateSpace)"}
}
