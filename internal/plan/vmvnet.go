package plan

import (
	"fmt"
	"net/netip"
)

// PlaceVMs puts VM k on VNet vnetOf[k-1] (tenant.vms.vnet, a per-VM list of 0-based VNet
// numbers). An empty list keeps every VM on VNet 0; otherwise the list names one VNet per VM,
// so growing the VM count means saying where the new VMs go.
//
// VM k keeps host offset 9+k in whichever VNet it is on: its address is the VNet's network
// address + 9 + k. That keeps a VM's address independent of where the other VMs are (moving
// or adding one never renumbers another), keeps VNet 0's addresses what they were before VNets
// could be chosen, and needs no new bound: Tenant already requires 9+k to fit a VNet's share.
// The address stays inside the tenant /24, so its PTR record stays in the tenant's one reverse
// zone. field names the declaration's field in errors.
func (t *Tenant) PlaceVMs(field string, vnetOf []int) error {
	if len(vnetOf) == 0 {
		return nil
	}
	if len(vnetOf) != len(t.VMs) {
		return fmt.Errorf("%s: %d entries for %d VMs: give one VNet number per VM (VM k is on VNet %s[k-1]), or none for all on VNet 0",
			field, len(vnetOf), len(t.VMs), field)
	}
	for i, n := range vnetOf {
		if n < 0 || n >= len(t.VNets) {
			return fmt.Errorf("%s[%d]: VNet %d does not exist: the tenant has %d VNet(s), numbered 0..%d", field, i, n, len(t.VNets), len(t.VNets)-1)
		}
		v := t.VNets[n]
		vm := &t.VMs[i]
		addr := addOffset(v.Subnet.Addr(), 9+vm.Index)
		if !v.Subnet.Contains(addr) || addr == lastAddr(v.Subnet) {
			return fmt.Errorf("%s[%d]: VM %s (.%d of its VNet) does not fit VNet %s's %s", field, i, vm.Name, 9+vm.Index, v.ID, v.Subnet)
		}
		vm.VNet, vm.Address, vm.Gateway = n, addr, v.Gateway
		vm.CIDR = fmt.Sprintf("%s/%d", addr, v.Subnet.Bits())
	}
	return nil
}

// lastAddr is p's broadcast address.
func lastAddr(p netip.Prefix) netip.Addr {
	return addOffset(p.Masked().Addr(), 1<<(32-p.Bits())-1)
}
