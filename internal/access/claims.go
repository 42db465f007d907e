package access

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/sdn"
	"github.com/deevnet/tenant/internal/vm"
)

// zoneID is the zone ADR-0002 derives from an index (plan.Site.Tenant: tn%02d).
var zoneID = regexp.MustCompile(`^tn(\d{2})$`)

// Claim is one PVE object that says a tenant holds an index: the comment onboarding writes on
// its pool and user, the ownership mark on a VNet of the zone the index names, a guest of its
// pool in the index's vmid range. The allocation registry (ADR-0009) can be lost; these cannot
// be, as long as the tenant exists, so they are what a lost registry is rebuilt from and what
// onboarding checks a new allocation against.
type Claim struct {
	Tenant string `json:"tenant"`
	Index  int    `json:"index"`
	Object string `json:"object"` // "pool tenant-tdemo", "vnet tn01v0 of zone tn01", "vm 10101"
	// kind and id of the object ("pool", "tenant-tdemo"); set for the comment claims
	kind, id string
}

// commentClaims reads the comments onboarding writes on pools and users (two GETs): all that
// pve_tenant_access's index check needs, so it does not pay for the VNet and guest reads.
func commentClaims(ctx context.Context, c *pve.Client) ([]Claim, error) {
	var out []Claim
	for _, src := range []struct{ kind, path, id string }{
		{"pool", "/pools", "poolid"},
		{"user", "/access/users", "userid"},
	} {
		var rows []map[string]any
		if err := c.Get(ctx, src.path, nil, &rows); err != nil {
			return nil, fmt.Errorf("read %s: %w", src.path, err)
		}
		for _, r := range rows {
			comment, _ := r["comment"].(string)
			if m := claim.FindStringSubmatch(comment); m != nil {
				n, _ := strconv.Atoi(m[2])
				id, _ := r[src.id].(string)
				out = append(out, Claim{Tenant: m[1], Index: n, Object: src.kind + " " + id, kind: src.kind, id: id})
			}
		}
	}
	return out, nil
}

// ReadClaims reads every claim PVE holds, with GETs only: pools and users, the SDN zones and
// VNets as staged (a VRF not yet applied already holds its index), and the guests.
func ReadClaims(ctx context.Context, c *pve.Client) ([]Claim, error) {
	out, err := commentClaims(ctx, c)
	if err != nil {
		return nil, err
	}
	vnets, err := sdn.API{C: c}.VNets(ctx)
	if err != nil {
		return nil, err
	}
	for _, v := range vnets {
		m := zoneID.FindStringSubmatch(v.Props["zone"])
		owner, ok := strings.CutPrefix(v.Props["alias"], "tenant-")
		if !v.Exists() || m == nil || !ok || owner == "" {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		out = append(out, Claim{Tenant: owner, Index: n, Object: fmt.Sprintf("vnet %s of zone %s", v.ID, v.Props["zone"])})
	}
	inv, err := vm.ReadInventory(ctx, c)
	if err != nil {
		return nil, err
	}
	for id, g := range inv.VMs {
		n, ok := plan.VMIDIndex(id)
		if owner := vm.OwnerOf(g); ok && n >= 1 && owner != "" && !g.Template {
			out = append(out, Claim{Tenant: owner, Index: n, Object: fmt.Sprintf("vm %d (%s)", id, g.Name)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		if a.Tenant != b.Tenant {
			return a.Tenant < b.Tenant
		}
		return a.Object < b.Object
	})
	return out, nil
}

// Holders folds the claims into tenant -> index. PVE's objects must agree: a tenant that two
// objects give two indexes, or an index two objects give two tenants, is refused naming both
// objects, since any registry rebuilt from them, or any allocation checked against them, would
// be a guess.
func Holders(claims []Claim) (map[string]int, error) {
	byName := map[string]Claim{}
	byIndex := map[int]Claim{}
	for _, c := range claims {
		if o, ok := byName[c.Tenant]; ok && o.Index != c.Index {
			return nil, fmt.Errorf("tenant %s: %s says index %d, %s says index %d; PVE disagrees with itself, refusing to guess",
				c.Tenant, o.Object, o.Index, c.Object, c.Index)
		}
		if o, ok := byIndex[c.Index]; ok && o.Tenant != c.Tenant {
			return nil, fmt.Errorf("index %d: %s says tenant %s, %s says tenant %s; PVE disagrees with itself, refusing to guess",
				c.Index, o.Object, o.Tenant, c.Object, c.Tenant)
		}
		if _, ok := byName[c.Tenant]; !ok {
			byName[c.Tenant] = c
		}
		if _, ok := byIndex[c.Index]; !ok {
			byIndex[c.Index] = c
		}
	}
	out := make(map[string]int, len(byName))
	for name, c := range byName {
		out[name] = c.Index
	}
	return out, nil
}
