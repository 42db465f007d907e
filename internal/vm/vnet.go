package vm

import (
	"fmt"
	"strings"

	"github.com/deevnet/tenant/internal/plan"
)

// vmVNet is one vms[] entry's own vnet: pos is its position in vms, k its VM index.
type vmVNet struct {
	pos, k int
	vnet   *int
}

// placeVNets puts each declared VM on its VNet in t (tenant.vms.vnet): O(vnet) for every VM,
// vms[i].vnet for one. VMs the plan holds but nobody declared keep O(vnet); they are not
// converged, the list only has to be complete for plan.PlaceVMs.
func placeVNets(m *ModuleOptions, t *plan.Tenant, own []vmVNet) error {
	def := m.VNet
	if def < 0 || def >= len(t.VNets) {
		return fmt.Errorf("vnet: VNet %d does not exist: tenant %s has %d VNet(s) (vnet_count), numbered 0..%d", def, t.Name, len(t.VNets), len(t.VNets)-1)
	}
	vnetOf := make([]int, len(t.VMs))
	for i := range vnetOf {
		vnetOf[i] = def
	}
	for _, o := range own {
		if o.vnet == nil {
			continue
		}
		n := *o.vnet
		if n < 0 || n >= len(t.VNets) {
			return fmt.Errorf("vms[%d].vnet: VNet %d does not exist: tenant %s has %d VNet(s) (vnet_count), numbered 0..%d", o.pos, n, t.Name, len(t.VNets), len(t.VNets)-1)
		}
		vnetOf[o.k-1] = n
	}
	if err := t.PlaceVMs("vnet", vnetOf); err != nil {
		return fmt.Errorf("tenant %s: %w", t.Name, err)
	}
	return nil
}

// vnetZone is the SDN zone a tenant VNet id belongs to (tn01v2 -> tn01), "" when id is not
// one (the template's vmbr0, say).
func vnetZone(id string) string {
	i := strings.LastIndexByte(id, 'v')
	if i < 1 || i == len(id)-1 || strings.Trim(id[i+1:], "0123456789") != "" {
		return ""
	}
	return id[:i]
}

// keepVNet refuses to move an existing VM to another VNet of its tenant. Its address, gateway
// and DNS records follow its VNet, so a move would renumber a running guest under it: the
// operator rebuilds it (state rebuilt) or puts the declaration back. A NIC on a bridge that is
// no VNet of the tenant (a clone whose configuration never finished) is set as declared.
func keepVNet(d Desired, cur map[string]string) error {
	have := ParseNIC(cur["net0"]).Bridge
	if d.Bridge == "" || have == d.Bridge || vnetZone(have) == "" || vnetZone(have) != vnetZone(d.Bridge) {
		return nil
	}
	return fmt.Errorf("VM %s (vmid %d) is on VNet %s and is declared on %s: a VM never changes VNet (its address, gateway and records "+
		"would change under it); declare it on %s again, or rebuild it there (state rebuilt, or destroy it and converge)", d.Name, d.VMID, have, d.Bridge, have)
}
