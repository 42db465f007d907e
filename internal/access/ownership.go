package access

import (
	"context"
	"fmt"
	"regexp"

	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/sdn"
	"github.com/deevnet/tenant/internal/vm"
)

// PVE's formats for the ids that end up in ACL paths (pve-storage-id, pve-bridge-id).
var (
	storageID = regexp.MustCompile(`(?i)^[a-z][a-z0-9._-]*[a-z0-9]$`)
	bridgeID  = regexp.MustCompile(`^[-_.\w]+$`)
	// The comment desired() writes on the pool and the user: who holds which index.
	claim = regexp.MustCompile(`^deevnet\.tenant (\S+) \(index (\d+)\)$`)
)

// Targets are the shared objects a tenant is granted use of: the clone source and its storages
// and bridges.
type Targets struct {
	Template int
	Storages []string
	Bridges  []string
	// Adopt grants the tenant a VRF another tool built, unmarked, when tenant_vrf's adopt would
	// take it over (sdn.CheckAdoptable): it matches the plan by identity.
	Adopt bool
}

// CheckFormats refuses ids that cannot name a PVE storage or bridge, before any request.
func (tg Targets) CheckFormats() error {
	for i, s := range tg.Storages {
		if !storageID.MatchString(s) {
			return fmt.Errorf("storages[%d]: %q is not a PVE storage id (%s)", i, s, storageID)
		}
	}
	for i, b := range tg.Bridges {
		if !bridgeID.MatchString(b) {
			return fmt.Errorf("bridges[%d]: %q is not a PVE bridge id (%s)", i, b, bridgeID)
		}
	}
	if tg.Template < 100 {
		return fmt.Errorf("template: %d is not a vmid (100..999999999)", tg.Template)
	}
	return nil
}

// CheckPresent refuses, with reads only, to grant tenant t anything that is not its own or
// shared: an index another tenant holds (the comments on its pool and user, the ownership marks
// on its VRF's VNets as tenant_vrf reads them, the owner tags and pools of guests in its vmid
// range as tenant_vm reads them), and ACL paths on a template, storage or bridge that does not
// exist or belongs to a tenant; SDN.Use on a node bridge that connects anything, and a template
// whose NICs would need it (network.go, ADR-0013).
func (a Access) CheckPresent(ctx context.Context, t plan.Tenant, index int, tg Targets) error {
	if err := a.checkClaims(ctx, t, index); err != nil {
		return err
	}
	api := sdn.API{C: a.C}
	zones, err := api.Zones(ctx)
	if err != nil {
		return err
	}
	vnets, err := api.VNets(ctx)
	if err != nil {
		return err
	}
	if tg.Adopt {
		spec := sdn.VRFSpec{Tenant: t.Name, Owner: t.OwnerTag, Zone: t.Zone, VRFVXLAN: t.VRFVXLAN, VNets: sdn.PlannedVNets(t)}
		if err := sdn.CheckAdoptable(ctx, api, spec, zones, vnets); err != nil {
			return fmt.Errorf("adopt: %w", err)
		}
	} else if err := sdn.CheckZoneOwner(zones, vnets, t.Zone, t.Name, t.OwnerTag); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	inv, err := vm.ReadInventory(ctx, a.C)
	if err != nil {
		return err
	}
	first := 10000 + 100*index // ADR-0002: the tenant's vmids are first..first+99
	for id, g := range inv.VMs {
		if owner := vm.OwnerOf(g); id >= first && id < first+100 && owner != "" && owner != t.Name {
			return fmt.Errorf("index: vmid %d (%q) in index %d's range belongs to tenant %s; refusing to grant tenant %s that index", id, g.Name, index, owner, t.Name)
		}
	}
	g, ok := inv.VMs[tg.Template]
	switch owner := vm.OwnerOf(g); {
	case !ok:
		return fmt.Errorf("template: VM %d does not exist; refusing an ACL on /vms/%d", tg.Template, tg.Template)
	case !g.Template:
		return fmt.Errorf("template: vmid %d (%q) is a VM, not a template; refusing to grant use of it", tg.Template, g.Name)
	case owner != "" && owner != t.Name:
		return fmt.Errorf("template: %d (%q) belongs to tenant %s, not a shared template", tg.Template, g.Name, owner)
	}
	for i, s := range tg.Storages {
		found := false
		for _, node := range inv.Storages {
			_, found = node[s]
			if found {
				break
			}
		}
		if !found {
			return fmt.Errorf("storages[%d]: storage %q does not exist on any node", i, s)
		}
	}
	for i, b := range tg.Bridges {
		for _, v := range vnets {
			if v.Exists() && v.ID == b {
				return fmt.Errorf("bridges[%d]: %q is an SDN VNet of zone %s, not a node bridge; VNets are granted by zone", i, b, v.Props["zone"])
			}
		}
	}
	nets, err := a.readNetworks(ctx, inv.Nodes)
	if err != nil {
		return err
	}
	if err := checkBridges(tg.Bridges, nets); err != nil {
		return err
	}
	return a.checkTemplateNICs(ctx, g, tg.Bridges, vnets)
}

// checkClaims reads every pool and user comment (commentClaims): another name that holds the
// index, or this name holding another index, is refused. The VRF's marks and the guests' pools
// are checked by CheckPresent with their own messages.
func (a Access) checkClaims(ctx context.Context, t plan.Tenant, index int) error {
	claims, err := commentClaims(ctx, a.C)
	if err != nil {
		return err
	}
	for _, c := range claims {
		id := c.id
		switch {
		case c.Tenant != t.Name && c.Index == index:
			return fmt.Errorf("index: %d is tenant %s's (%s); refusing to grant tenant %s that index", index, c.Tenant, c.Object, t.Name)
		case c.Tenant == t.Name && c.Index != index && (id == t.Pool || id == t.User):
			return fmt.Errorf("index: tenant %s was onboarded with index %d (%s), not %d; an index never changes (ADR-0009)", t.Name, c.Index, c.Object, index)
		}
	}
	return nil
}
