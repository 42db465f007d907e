package sdn

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/deevnet/tenant/internal/pve"
)

// Work is what a module converges: objects to have, objects to remove, and the views it read.
type Work struct {
	Desired []Desired
	Remove  []Object
	Index   Index
	Views   map[Kind][]Observed // views read so far, reusable by PendingSet
}

// Managed returns the keys of every object the work manages.
func (w Work) Managed() map[string]bool {
	m := map[string]bool{}
	for _, d := range w.Desired {
		m[d.Key()] = true
	}
	for _, r := range w.Remove {
		m[r.Key()] = true
	}
	return m
}

// PlanVRF reads the zone, VNets, subnets (and, when needed, controllers) and returns the work
// for a tenant's VRF. Ownership is marked on each VNet's alias (zones have no free-text field in
// PVE 9.1): a zone whose VNets carry another mark is never touched. present=false removes
// subnets, VNets and the zone.
func PlanVRF(ctx context.Context, api API, spec VRFSpec, present bool) (Work, error) {
	return planVRF(ctx, api, spec, present, nil)
}

// planVRF is PlanVRF; it also prefetches the subnets the plans of later, the tenants planned
// next from the same lists, will read.
func planVRF(ctx context.Context, api API, spec VRFSpec, present bool, later []VRFSpec) (Work, error) {
	w := Work{Views: map[Kind][]Observed{}}
	zones, err := api.Zones(ctx)
	if err != nil {
		return w, err
	}
	vnets, err := api.VNets(ctx)
	if err != nil {
		return w, err
	}
	w.Views[KindZone], w.Views[KindVNet] = zones, vnets
	ix := NewIndex(zones, vnets)
	zone, zoneExists := ix[ObjectKey(KindZone, "", spec.Zone)]
	zoneExists = zoneExists && zone.Exists()
	if !spec.Adopt {
		if err := CheckZoneOwner(zones, vnets, spec.Zone, spec.Tenant, spec.Owner); err != nil {
			return w, err
		}
	}
	ours, deleted, err := zoneVNets(spec, vnets)
	if err != nil {
		return w, err
	}
	if present {
		if err := checkNumbers(spec, zones, vnets); err != nil {
			return w, err
		}
		if !zoneExists || zone.Props["controller"] != spec.Controller {
			// A zone already bound to the controller proves it exists (PVE refuses to delete a
			// used controller), so the controller is only read when that proof is missing.
			ctrls, err := checkController(ctx, api, spec.Controller)
			if ctrls != nil {
				w.Views[KindController] = ctrls
			}
			if err != nil {
				return w, err
			}
		}
	}
	api.C.Prefetch(ctx, subnetReads(vnets, append([]VRFSpec{spec}, later...))...)
	var subnets []Observed
	for _, v := range ours {
		s, err := api.Subnets(ctx, v.ID)
		if err != nil {
			return w, err
		}
		subnets = append(subnets, s...)
	}
	w.Views[KindSubnet] = subnets
	if spec.Adopt {
		if err := checkAdopt(spec, zones, vnets, subnets); err != nil {
			return w, err
		}
	}
	ix = NewIndex(zones, vnets, subnets)
	w.Index = ix
	if present {
		w.Desired = spec.Desired()
	}
	want := map[string]bool{}
	for _, d := range w.Desired {
		want[d.Key()] = true
	}
	// Objects already deleted but not applied stay in Remove: Plan skips them, and they
	// count as managed, so an apply by this module may commit their deletion.
	for _, s := range subnets {
		if !want[s.Key()] {
			w.Remove = append(w.Remove, s.Object)
		}
	}
	for _, v := range append(ours, deleted...) {
		if !want[v.Key()] {
			w.Remove = append(w.Remove, v.Object)
		}
	}
	if !present {
		w.Remove = append(w.Remove, Object{Kind: KindZone, ID: spec.Zone})
	}
	return w, nil
}

// subnetReads are the subnet lists of the live VNets of the specs' zones: what PlanVRF reads for
// each (zoneVNets' ours), in that order.
func subnetReads(vnets []Observed, specs []VRFSpec) []pve.Read {
	var out []pve.Read
	for _, s := range specs {
		for _, v := range vnets {
			if v.Exists() && v.Props["zone"] == s.Zone {
				out = append(out, listRead(subnetsPath(v.ID)))
			}
		}
	}
	return out
}

// zoneVNets are the zone's live VNets (CheckZoneOwner made sure every one is ours) and those
// deleted but not applied (still ours to apply); a desired VNet living in another zone is refused.
func zoneVNets(spec VRFSpec, vnets []Observed) (ours, deleted []Observed, err error) {
	desiredVNet := map[string]bool{}
	for _, v := range spec.VNets {
		desiredVNet[v.ID] = true
	}
	for _, v := range vnets {
		if !v.Exists() {
			if v.Running["zone"] == spec.Zone && v.Running["alias"] == spec.Owner {
				deleted = append(deleted, v)
			}
			continue
		}
		if v.Props["zone"] == spec.Zone {
			ours = append(ours, v)
		} else if desiredVNet[v.ID] {
			return nil, nil, &OwnershipError{fmt.Sprintf("vnet %s already exists in zone %s (marked %q); refusing to move it into %s", v.ID, v.Props["zone"], v.Props["alias"], spec.Zone)}
		}
	}
	return ours, deleted, nil
}

// checkController reads the controllers and refuses a missing or non-EVPN one; it returns what
// it read, for the diff.
func checkController(ctx context.Context, api API, id string) ([]Observed, error) {
	ctrls, err := api.Controllers(ctx)
	if err != nil {
		return nil, err
	}
	c, ok := NewIndex(ctrls)[ObjectKey(KindController, "", id)]
	if !ok || !c.Exists() {
		return ctrls, fmt.Errorf("controller: EVPN controller %q does not exist (or this credential cannot see it: SDN.Audit on /sdn/controllers); create it and the fabric with deevnet.tenant.pve_sdn_fabric first", id)
	}
	if c.Props["type"] != "evpn" {
		return ctrls, fmt.Errorf("controller: %q is a %s controller, not evpn", id, c.Props["type"])
	}
	return ctrls, nil
}

// CheckZoneOwner refuses a zone that exists and is not owner's: a zone that is not EVPN (not
// made by tenant_vrf), or one whose live VNets carry another ownership mark (alias). A zone that
// without VNets is nobody's yet. tenant_vrf and pve_tenant_access
// share this rule, so a tenant can neither build in nor be granted another tenant's VRF.
func CheckZoneOwner(zones, vnets []Observed, zone, tenant, owner string) error {
	if z, ok := NewIndex(zones)[ObjectKey(KindZone, "", zone)]; ok && z.Exists() && z.Props["type"] != "evpn" {
		return &OwnershipError{fmt.Sprintf("zone %s exists as a %s zone, not an EVPN zone made by tenant_vrf; refusing to touch it", zone, z.Props["type"])}
	}
	for _, v := range vnets {
		if !v.Exists() || v.Props["zone"] != zone || v.Props["alias"] == owner {
			continue
		}
		mark := v.Props["alias"]
		if mark == "" {
			mark = "(no mark)"
		}
		return &OwnershipError{fmt.Sprintf("zone %s is not tenant %s's: its vnet %s is marked %q, not %q; refusing to change it (check the tenant's index)", zone, tenant, v.ID, mark, owner)}
	}
	return nil
}

// checkNumbers refuses VNIs and vrf-vxlan values another zone already uses: PVE checks VNIs
// across all zones only at write time, after some objects may already be staged.
func checkNumbers(spec VRFSpec, zones, vnets []Observed) error {
	used := map[string]string{} // number -> who
	for _, z := range zones {
		if z.Exists() && z.ID != spec.Zone && z.Props["vrf-vxlan"] != "" {
			used[z.Props["vrf-vxlan"]] = "zone " + z.ID + " (its vrf-vxlan)"
		}
	}
	for _, v := range vnets {
		if v.Exists() && v.Props["zone"] != spec.Zone && v.Props["tag"] != "" {
			used[v.Props["tag"]] = fmt.Sprintf("vnet %s in zone %s", v.ID, v.Props["zone"])
		}
	}
	if who, ok := used[strconv.Itoa(spec.VRFVXLAN)]; ok {
		return fmt.Errorf("vrf_vxlan: VNI %d is already used by %s", spec.VRFVXLAN, who)
	}
	for i, v := range spec.VNets {
		if who, ok := used[strconv.Itoa(v.Tag)]; ok {
			return fmt.Errorf("vnets[%d].tag: VNI %d of vnet %s is already used by %s", i, v.Tag, v.ID, who)
		}
	}
	return nil
}

// PlanFabric reads fabrics, their nodes and the controllers and returns the work for the
// fabric spec. Members not listed are kept unless purgeNodes (adding a member never touches
// the others). present=false removes the controller, the listed members (all of them with
// purgeNodes) and, when no member is left, the fabric.
func PlanFabric(ctx context.Context, api API, spec FabricSpec, present, purgeNodes bool) (Work, error) {
	w := Work{Views: map[Kind][]Observed{}}
	fabrics, nodes, err := api.Fabrics(ctx)
	if err != nil {
		return w, err
	}
	w.Views[KindFabric], w.Views[KindFabricNode] = fabrics, nodes
	lists := [][]Observed{fabrics, nodes}
	if spec.Controller != "" {
		ctrls, err := api.Controllers(ctx)
		if err != nil {
			return w, err
		}
		w.Views[KindController] = ctrls
		lists = append(lists, ctrls)
		for _, c := range ctrls {
			if !c.Exists() {
				continue
			}
			if c.ID == spec.Controller && c.Props["type"] != "evpn" {
				return w, fmt.Errorf("controller: %q exists as a %s controller, not evpn", c.ID, c.Props["type"])
			}
			if c.ID != spec.Controller && c.Props["type"] == "evpn" && present {
				return w, fmt.Errorf("controller: the cluster already has the EVPN controller %q and PVE allows only one; use controller: %s", c.ID, c.ID)
			}
		}
	}
	ix := NewIndex(lists...)
	w.Index = ix
	if f, ok := ix[ObjectKey(KindFabric, "", spec.ID)]; ok && f.Exists() && f.Props["protocol"] != spec.Protocol {
		return w, fmt.Errorf("protocol: fabric %s exists with protocol %s; PVE cannot change a fabric's protocol, delete and recreate it deliberately", spec.ID, f.Props["protocol"])
	}
	listed := map[string]bool{}
	for _, n := range spec.Nodes {
		listed[n.Name] = true
	}
	var members []Observed
	for _, n := range nodes {
		if n.Parent == spec.ID && n.Exists() {
			members = append(members, n)
		}
	}
	sort.Slice(members, func(i, j int) bool { return members[i].ID < members[j].ID })
	if present {
		w.Desired = spec.Desired()
		if purgeNodes {
			for _, m := range members {
				if !listed[m.ID] {
					w.Remove = append(w.Remove, m.Object)
				}
			}
		}
		return w, nil
	}
	if spec.Controller != "" {
		zones, err := api.Zones(ctx)
		if err != nil {
			return w, err
		}
		w.Views[KindZone] = zones
		for _, z := range zones {
			if z.Exists() && z.Props["controller"] == spec.Controller {
				return w, fmt.Errorf("controller: %s is still used by zone %s; remove the tenants' zones (deevnet.tenant.tenant_vrf state=absent) first", spec.Controller, z.ID)
			}
		}
		w.Remove = append(w.Remove, Object{Kind: KindController, ID: spec.Controller})
	}
	left := 0
	for _, m := range members {
		if purgeNodes || listed[m.ID] {
			w.Remove = append(w.Remove, m.Object)
		} else {
			left++
		}
	}
	if left == 0 {
		w.Remove = append(w.Remove, Object{Kind: KindFabric, ID: spec.ID})
	}
	return w, nil
}
