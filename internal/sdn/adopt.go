package sdn

// Taking over a tenant's VRF another tool built (tenant_vrf adopt: true). Its VNets carry no
// ownership mark, which CheckZoneOwner reads as someone else's; adopt takes the zone when it
// is the plan's by identity (the zone id, its VNI, each VNet's id and VNI, each subnet) and
// leaves the rest to the ordinary plan: the mark on each VNet's alias and any owned key that
// differs. Anything it would have to delete or renumber is refused instead, so a takeover never
// destroys what carries the tenant's traffic.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// CheckAdoptable reads the subnets of spec's zone and refuses, as tenant_vrf's adopt does, a
// zone that is not the plan's by identity. pve_tenant_access's adopt uses it to grant a tenant a
// VRF another tool built only when tenant_vrf would take that VRF over.
func CheckAdoptable(ctx context.Context, api API, spec VRFSpec, zones, vnets []Observed) error {
	var subnets []Observed
	for _, v := range vnets {
		if v.Exists() && v.Props["zone"] == spec.Zone {
			s, err := api.Subnets(ctx, v.ID)
			if err != nil {
				return err
			}
			subnets = append(subnets, s...)
		}
	}
	return checkAdopt(spec, zones, vnets, subnets)
}

// checkAdopt lists every identity field of the existing zone, VNets and subnets that differs
// from spec and refuses the takeover when there is one. A VNet marked by another owner stays
// refused, as without adopt. subnets are the existing subnets of the zone's VNets.
func checkAdopt(spec VRFSpec, zones, vnets, subnets []Observed) error {
	var diffs []string
	z, ok := NewIndex(zones)[ObjectKey(KindZone, "", spec.Zone)]
	if ok && z.Exists() {
		if z.Props["type"] != "evpn" {
			diffs = append(diffs, fmt.Sprintf("type: zone %s is a %s zone (plan evpn)", spec.Zone, z.Props["type"]))
		} else if z.Props["vrf-vxlan"] != strconv.Itoa(spec.VRFVXLAN) {
			diffs = append(diffs, fmt.Sprintf("vrf_vxlan: zone %s has VNI %s (plan %d)", spec.Zone, z.Props["vrf-vxlan"], spec.VRFVXLAN))
		}
	}
	want := map[string]VNetSpec{}
	wantSubnet := map[string]string{}
	for _, n := range spec.VNets {
		want[n.ID] = n
		wantSubnet[SubnetID(spec.Zone, n.Subnet.String())] = n.ID
	}
	for _, v := range vnets {
		if !v.Exists() || v.Props["zone"] != spec.Zone {
			continue
		}
		if mark := v.Props["alias"]; mark != "" && mark != spec.Owner {
			return CheckZoneOwner(zones, vnets, spec.Zone, spec.Tenant, spec.Owner)
		}
		n, planned := want[v.ID]
		switch {
		case !planned:
			diffs = append(diffs, fmt.Sprintf("vnets: zone %s holds vnet %s, which the plan does not", spec.Zone, v.ID))
		case v.Props["tag"] != strconv.Itoa(n.Tag):
			diffs = append(diffs, fmt.Sprintf("vnets.tag: vnet %s has VNI %s (plan %d)", v.ID, v.Props["tag"], n.Tag))
		}
	}
	for _, s := range subnets {
		if !s.Exists() {
			continue
		}
		if vnet, planned := wantSubnet[s.ID]; !planned || vnet != s.Parent {
			diffs = append(diffs, fmt.Sprintf("vnets.subnet: vnet %s holds subnet %s, which the plan does not", s.Parent, s.ID))
		}
	}
	if len(diffs) > 0 {
		return &OwnershipError{fmt.Sprintf("adopt: zone %s does not match tenant %s's plan: %s; refusing to take it over", spec.Zone, spec.Tenant, strings.Join(diffs, "; "))}
	}
	return nil
}
