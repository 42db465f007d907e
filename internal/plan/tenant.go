package plan

import (
	"fmt"
	"net/netip"
	"strings"
)

// Limits of the derivation (ADR-0002).
const (
	maxVNets = 16 // VNet tags are 20000+16*index+n
	maxVMs   = 99 // vmids are 10000+100*index+k
	// ReservedIndex belongs to the reference tenant (examples/tenant): it is rejected so that the
	// reference cannot be applied by accident.
	ReservedIndex = 0
)

// VNet is one of a tenant's VNets with its slice of the tenant /24.
type VNet struct {
	ID       string // tn01v0
	Tag      int    // the VNet's VNI
	Subnet   netip.Prefix
	Gateway  netip.Addr
	SubnetID string // PVE's canonical subnet id: <zone>-<network>-<prefixlen>
}

// VM is one of a tenant's VMs.
type VM struct {
	Index   int // 1-based
	Name    string
	VMID    int
	VNet    int // 0-based number of the VNet its NIC is on (VNet 0 unless PlaceVMs says otherwise)
	Address netip.Addr
	CIDR    string // address/prefixlen in its VNet's subnet, as ipconfig0 wants it
	Gateway netip.Addr
	FQDN    string
}

// Tenant is every identifier derived from a tenant's name and index.
type Tenant struct {
	Name        string
	Index       int
	Subnet      netip.Prefix
	Gateway     netip.Addr
	Zone        string // the PVE SDN zone id, which is the tenant's VRF
	VRFDevice   string // the VRF device PVE creates on a node for the zone
	VRFVXLAN    int
	VNets       []VNet
	DNSZone     string
	ReverseZone string
	Pool        string
	User        string
	TokenID     string // the token's name; its full id is User + "!" + TokenID
	TSIGKey     string
	OwnerTag    string // the PVE tag marking objects the tenant owns
	// Storage is the tenant's own storage id, an lvmthin storage on ThinPool, the tenant's thin
	// pool in each node's volume group (ADR-0014 decision 2).
	Storage  string
	ThinPool string
	VMs      []VM
}

// FullTokenID is the API token id as PVE spells it: user@realm!name.
func (t Tenant) FullTokenID() string { return t.User + "!" + t.TokenID }

// Tenant derives every identifier of tenant name at index, with vms VMs and vnets VNets.
func (s Site) Tenant(name string, index, vms, vnets int) (Tenant, error) {
	if err := s.Validate(); err != nil {
		return Tenant{}, err
	}
	if err := checkFormat(fmtTenantName, name); err != nil {
		return Tenant{}, fmt.Errorf("name: %w: a tenant name is a DNS label and part of PVE ids: lowercase letters, digits and '-', starting with a letter, 2 to 20 characters", err)
	}
	if index == ReservedIndex {
		return Tenant{}, fmt.Errorf("index: 0 is reserved for the reference implementation (examples/tenant), which must not be applied; copy it and ask the substrate operator for an index: playbooks/onboard.yml allocates the next free one (1..%d)", s.MaxIndex())
	}
	if index < 1 || index > s.MaxIndex() {
		return Tenant{}, fmt.Errorf("index: %d is outside 1..%d, what the overlay %s holds (one /24 per tenant)", index, s.MaxIndex(), s.Overlay)
	}
	if vms < 0 || vms > maxVMs {
		return Tenant{}, fmt.Errorf("vms: %d is outside 0..%d (vmids are 10000+100*index+k)", vms, maxVMs)
	}
	if vnets < 1 || vnets > maxVNets || vnets&(vnets-1) != 0 {
		return Tenant{}, fmt.Errorf("vnets: %d must be 1, 2, 4, 8 or 16 (the tenant /24 is split evenly between its VNets)", vnets)
	}

	subnet := netip.PrefixFrom(addOffset(s.Overlay.Masked().Addr(), index*256), 24)
	b := subnet.Addr().As4()
	zone := fmt.Sprintf("tn%02d", index)
	t := Tenant{
		Name:        name,
		Index:       index,
		Subnet:      subnet,
		Gateway:     addOffset(subnet.Addr(), 1),
		Zone:        zone,
		VRFDevice:   "vrf_" + zone,
		VRFVXLAN:    10000 + index,
		DNSZone:     name + "." + s.Zone,
		ReverseZone: fmt.Sprintf("%d.%d.%d.in-addr.arpa", b[2], b[1], b[0]),
		Pool:        "tenant-" + name,
		User:        "tenant-" + name + "@pve",
		TokenID:     "iac",
		TSIGKey:     "tenant-" + name,
		OwnerTag:    "tenant-" + name,
		Storage:     "tenant-" + name,
		ThinPool:    "tenant-" + name,
	}
	bits := 24
	for n := vnets; n > 1; n >>= 1 {
		bits++
	}
	size := 1 << (32 - bits)
	for n := 0; n < vnets; n++ {
		p := netip.PrefixFrom(addOffset(subnet.Addr(), n*size), bits)
		t.VNets = append(t.VNets, VNet{
			ID:       fmt.Sprintf("%sv%d", zone, n),
			Tag:      20000 + 16*index + n,
			Subnet:   p,
			Gateway:  addOffset(p.Addr(), 1),
			SubnetID: fmt.Sprintf("%s-%s-%d", zone, p.Addr(), bits),
		})
	}
	// VMs live on VNet 0 from .10 up; the broadcast address of VNet 0 bounds them.
	if 9+vms > size-2 {
		return Tenant{}, fmt.Errorf("vms: %d VMs from .10 do not fit VNet 0's /%d; use fewer VNets or fewer VMs", vms, bits)
	}
	first, _ := VMIDRange(index)
	for k := 1; k <= vms; k++ {
		vmName := fmt.Sprintf("%s-%d", name, k)
		addr := addOffset(subnet.Addr(), 9+k)
		t.VMs = append(t.VMs, VM{
			Index:   k,
			Name:    vmName,
			VMID:    first + k,
			Address: addr,
			CIDR:    fmt.Sprintf("%s/%d", addr, bits),
			Gateway: t.VNets[0].Gateway,
			FQDN:    vmName + "." + t.DNSZone,
		})
	}
	if err := t.checkIDs(); err != nil {
		return Tenant{}, err
	}
	return t, nil
}

// checkIDs checks every derived id against the PVE format it is used as.
func (t Tenant) checkIDs() error {
	checks := []struct {
		field string
		f     format
		v     string
	}{
		{"zone", fmtSDNZoneID, t.Zone},
		{"pool", fmtPoolID, t.Pool},
		{"user", fmtUserID, t.User},
		{"token", fmtTokenID, t.FullTokenID()},
		{"tsig_key", fmtTSIGKeyName, t.TSIGKey},
		{"storage", fmtStorageID, t.Storage},
		{"thinpool", fmtVGName, t.ThinPool},
	}
	for _, v := range t.VNets {
		checks = append(checks, struct {
			field string
			f     format
			v     string
		}{"vnets.id", fmtSDNVNetID, v.ID})
	}
	for _, vm := range t.VMs {
		checks = append(checks,
			struct {
				field string
				f     format
				v     string
			}{"vms.name", fmtDNSName, vm.Name},
			struct {
				field string
				f     format
				v     string
			}{"vms.vmid", fmtVMID, fmt.Sprint(vm.VMID)})
	}
	for _, c := range checks {
		if err := checkFormat(c.f, c.v); err != nil {
			return fmt.Errorf("derived %s: %w", c.field, err)
		}
	}
	for _, z := range []string{t.DNSZone, t.ReverseZone} {
		if err := checkDNSName(z); err != nil {
			return fmt.Errorf("derived dns zone: %w", err)
		}
	}
	return nil
}

// Map is the tenant as tenant_plan returns it.
func (t Tenant) Map() map[string]any {
	vnets := make([]any, len(t.VNets))
	for i, v := range t.VNets {
		vnets[i] = map[string]any{"id": v.ID, "tag": v.Tag, "subnet": v.Subnet.String(), "gateway": v.Gateway.String(), "subnet_id": v.SubnetID}
	}
	vms := make([]any, len(t.VMs))
	for i, vm := range t.VMs {
		vms[i] = map[string]any{"index": vm.Index, "name": vm.Name, "vmid": vm.VMID, "vnet": t.VNets[vm.VNet].ID,
			"address": vm.Address.String(), "cidr": vm.CIDR, "gateway": vm.Gateway.String(), "fqdn": vm.FQDN}
	}
	first, last := VMIDRange(t.Index)
	return map[string]any{
		"name": t.Name, "index": t.Index, "subnet": t.Subnet.String(), "gateway": t.Gateway.String(),
		"zone": t.Zone, "vrf_device": t.VRFDevice, "vrf_vxlan": t.VRFVXLAN, "vnets": vnets,
		"dns_zone": t.DNSZone, "reverse_zone": t.ReverseZone, "pool": t.Pool, "user": t.User,
		"token_id": t.TokenID, "token": t.FullTokenID(), "tsig_key": t.TSIGKey, "owner_tag": t.OwnerTag, "vms": vms,
		"storage": t.Storage, "thinpool": t.ThinPool,
		"vmid_range": []any{first, last},
	}
}

// identifiers lists every identifier of t that must be unique across tenants, by kind.
func (t Tenant) identifiers() map[string][]string {
	ids := map[string][]string{
		"subnet": {t.Subnet.String()}, "zone": {t.Zone}, "vrf_vxlan": {fmt.Sprint(t.VRFVXLAN)},
		"dns_zone": {t.DNSZone, t.ReverseZone}, "pool": {t.Pool}, "user": {t.User}, "tsig": {t.TSIGKey},
		"storage": {t.Storage}, "thinpool": {t.ThinPool},
	}
	for _, v := range t.VNets {
		ids["vnet"] = append(ids["vnet"], v.ID)
		ids["vni"] = append(ids["vni"], fmt.Sprint(v.Tag))
		ids["subnet_id"] = append(ids["subnet_id"], v.SubnetID)
	}
	for _, vm := range t.VMs {
		ids["vmid"] = append(ids["vmid"], fmt.Sprint(vm.VMID))
		ids["address"] = append(ids["address"], vm.Address.String())
		ids["fqdn"] = append(ids["fqdn"], strings.ToLower(vm.FQDN))
	}
	// VRF VNIs and VNet tags share one VXLAN id space on the node.
	ids["vni"] = append(ids["vni"], fmt.Sprint(t.VRFVXLAN))
	return ids
}
