# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/tenant_plan.

DOCUMENTATION = r'''
module: tenant_plan
short_description: Derive every identifier of a tenant from its name and index
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Computes the tenant plan of ADR-0002 from the tenant's name and allocated index and the site plan
    (site prefixes, zone, resolver, VLANs, ASN, fabric). The plan holds the subnet and gateway, the EVPN
    zone (VRF) and its VNI, the VNets with their VNI tags and subnets, the DNS zones, the PVE pool, user
    and API token, the TSIG key name, and the name, VMID, address and FQDN of every VM.
  - Pure computation on the host it runs on; it reads and writes nothing else, so it never reports a change.
  - Every other module and role takes its identifiers from this plan, so templates never re-derive them.
options:
  name:
    description:
      - Tenant name. It becomes a DNS label, so it must follow DNS label rules.
      - Lowercase letters, digits and C(-); starts with a letter; 2 to 20 characters.
    type: str
    required: true
  index:
    description:
      - The tenant's allocated index, 1 to 63 with the default site (the tenant overlay /18 holds 64 /24s;
        the upper bound follows O(site.overlay) and is returned as RV(site.max_index)).
      - Index 0 is reserved for the reference implementation C(examples/tenant), which must never be
        applied, and is rejected.
    type: int
    required: true
  vms:
    description:
      - Number of VMs to plan, 0 to 99. VM k (1-based) is C(<name>-<k>), address C(.(9+k)) of its VNet's
        subnet (the first VNet unless O(vm_vnet) says otherwise), VMID C(10000+100*index+k). C(9+k) must
        fit a VNet's share of the /24.
    type: int
    default: 1
  vm_vnet:
    description:
      - The VNet of each VM (the contract's C(tenant.vms.vnet)). VM k is on VNet C(vm_vnet[k-1]) (0-based,
        below O(vnets)), with address C(.(9+k)) of that VNet's subnet and that VNet's gateway.
      - Empty puts every VM on VNet 0. Otherwise it holds exactly one entry per VM; an error names
        C(vm_vnet) or C(vm_vnet[i]).
    type: list
    elements: int
    default: []
  vnets:
    description:
      - Number of VNets to plan, 1, 2, 4, 8 or 16. The tenant /24 is split evenly between them.
      - VNet n (0-based) is C(tn<ii>v<n>) with VNI tag C(20000+16*index+n).
    type: int
    default: 1
  contract:
    description:
      - The tenant's whole declaration (the tenant contract, docs/tenant-contract.md; the role C(deevnet.tenant.tenant)
        passes its C(tenant) here, with the defaults filled in). When given, the contract's rules
        that an argument spec cannot express are checked before the plan, and every broken one is named in one message
        (C(tenant.name), C(tenant.index), the ranges of C(tenant.vms.*), C(tenant.vms.vnet), C(tenant.records[i])).
      - It must describe the tenant the other options plan (O(name), O(index), O(vms), O(vnets), O(vm_vnet)); a
        difference is refused, naming the option.
    type: dict
    suboptions:
      name:
        description: Tenant name, C(^[a-z][a-z0-9-]*[a-z0-9]$), 2..20 characters.
        type: str
        required: true
      index:
        description: Allocated index, 1..63.
        type: int
        required: true
      vnets:
        description: Number of VNets.
        type: int
        default: 1
      vms:
        description: Compute.
        type: dict
        default: {}
        suboptions:
          count:
            description: Number of VMs, 0..99.
            type: int
            default: 1
          cores:
            description: vCPUs per VM, 1..64.
            type: int
            default: 1
          memory:
            description: Memory per VM in MiB, 256..262144.
            type: int
            default: 1024
          disk:
            description: Boot disk size in GiB, 1..4096.
            type: int
            default: 8
          template:
            description: vmid of the template, 100..999999999.
            type: int
            default: 9000
          ssh_keys:
            description: OpenSSH public keys (not checked here).
            type: list
            elements: str
            default: []
          placement:
            description: Placement of new VMs (not checked here).
            type: str
            default: first
          vnet:
            description: The VNet of each VM, one entry per VM, each 0..vnets-1; empty puts every VM on VNet 0.
            type: list
            elements: int
            default: []
      records:
        description:
          - DNS records; each name is C(@) or a relative DNS name, not a VM name C(<name>-<k>), with values, and a TTL
            of 60..86400.
        type: list
        elements: dict
        default: []
        suboptions:
          name:
            description: Owner name relative to the tenant zone.
            type: str
            required: true
          type:
            description: Record type.
            type: str
            required: true
          values:
            description: Record data.
            type: list
            elements: str
            required: true
          ttl:
            description: TTL.
            type: int
            default: 300
  site:
    description:
      - Overrides of the site plan. Keys not given keep the defaults shown here.
      - Site-level values belong in the inventory; a tenant only ever supplies O(name) and O(index).
    type: dict
    default: {}
    suboptions:
      network:
        description: The site prefix.
        type: str
        default: 10.20.0.0/16
      overlay:
        description: Prefix holding the tenant subnets; tenant i gets the /24 at offset i.
        type: str
        default: 10.20.128.0/18
      loopbacks:
        description: Prefix of the fabric (VTEP) loopbacks; node n gets address n.
        type: str
        default: 10.20.255.0/24
      zone:
        description: The site DNS zone; tenant zones are C(<name>.<zone>).
        type: str
        default: mobile.deevnet.net
      resolver:
        description: Address of the substrate resolver handed to the VMs.
        type: str
        default: 10.20.99.1
      transit_vlan:
        description: VLAN of the transit network to the perimeter.
        type: int
        default: 50
      underlay_vlan:
        description: VLAN of the fabric underlay.
        type: int
        default: 51
      asn:
        description: BGP AS number of the EVPN controller.
        type: int
        default: 65020
      controller:
        description: Id of the one EVPN controller.
        type: str
        default: evpnctl
      fabric:
        description: Id of the PVE SDN fabric.
        type: str
        default: ufab
      mtu:
        description: MTU of the tenant VNets (VXLAN over a 1500 byte underlay).
        type: int
        default: 1450
      nodes:
        description: Hypervisor nodes that are fabric members, in loopback order.
        type: list
        elements: str
        default: [dv02hyp002p02]
attributes:
  check_mode:
    support: full
    description: Computes the same plan in check mode; it never changes anything.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to show a difference of.
  platform:
    support: full
    platforms: posix
    description: Runs wherever the task runs (usually the controller); the binary for that OS/arch is picked by the collection's action plugin.
extends_documentation_fragment:
  - deevnet.tenant.envelope
notes:
  - Always returns C(changed=false).
  - Errors name the field and the rule, for example an index out of 1..63 or a name that is not a DNS label.
'''

EXAMPLES = r'''
- name: Plan tenant tdemo
  deevnet.tenant.tenant_plan:
    name: tdemo
    index: 1
  register: plan

- name: Show the first VM's address and name
  ansible.builtin.debug:
    msg: "{{ plan.tenant.vms[0].fqdn }} is {{ plan.tenant.vms[0].address }}"

- name: Plan a tenant with three VMs and two VNets on a site with its own zone
  deevnet.tenant.tenant_plan:
    name: tblue
    index: 7
    vms: 3
    vnets: 2
    site:
      zone: lab.example.net
      nodes: [hv1, hv2]
  register: plan

- name: Check a declaration against the tenant contract and plan it (what the role deevnet.tenant.tenant does)
  deevnet.tenant.tenant_plan:
    name: "{{ tenant.name }}"
    index: "{{ tenant.index }}"
    contract: "{{ tenant }}"
  register: plan
'''

RETURN = r'''
tenant:
  description: Every identifier of the tenant.
  returned: success
  type: dict
  contains:
    name:
      description: Tenant name.
      type: str
      sample: tdemo
    index:
      description: Allocated index.
      type: int
      sample: 1
    subnet:
      description: The tenant's /24.
      type: str
      sample: 10.20.129.0/24
    gateway:
      description: Gateway address of the tenant subnet.
      type: str
      sample: 10.20.129.1
    zone:
      description: PVE SDN EVPN zone id, that is the VRF.
      type: str
      sample: tn01
    vrf_device:
      description: Name of the VRF device PVE creates on the node.
      type: str
      sample: vrf_tn01
    vrf_vxlan:
      description: The zone's VRF VNI (C(vrf-vxlan)).
      type: int
      sample: 10001
    vnets:
      description: The tenant's VNets.
      type: list
      elements: dict
      contains:
        id:
          description: VNet id.
          type: str
          sample: tn01v0
        tag:
          description: VNI tag.
          type: int
          sample: 20016
        subnet:
          description: Subnet of the VNet (the tenant /24, or an even share of it).
          type: str
          sample: 10.20.129.0/24
        gateway:
          description: Gateway of the VNet's subnet.
          type: str
          sample: 10.20.129.1
        subnet_id:
          description: PVE subnet id.
          type: str
          sample: tn01-10.20.129.0-24
    dns_zone:
      description: Forward DNS zone of the tenant.
      type: str
      sample: tdemo.mobile.deevnet.net
    reverse_zone:
      description: Reverse DNS zone of the tenant subnet.
      type: str
      sample: 129.20.10.in-addr.arpa
    pool:
      description: PVE resource pool.
      type: str
      sample: tenant-tdemo
    user:
      description: PVE user owning the tenant's API token.
      type: str
      sample: tenant-tdemo@pve
    token_id:
      description: Name of the tenant's API token.
      type: str
      sample: iac
    token:
      description: Full id of the tenant's API token, C(<user>!<token_id>).
      type: str
      sample: tenant-tdemo@pve!iac
    owner_tag:
      description:
        - PVE tag that labels the tenant's objects for people.
        - Ownership is never read from it (a tenant's token can set any tag); the pool decides (docs/security.md).
      type: str
      sample: tenant-tdemo
    vmid_range:
      description: First and last vmid of the tenant's range (ADR-0002), 10000+100*index to 10000+100*index+99.
      type: list
      elements: int
      sample: [10100, 10199]
    tsig_key:
      description: Name of the tenant's TSIG key (the name only, never the secret).
      type: str
      sample: tenant-tdemo
    storage:
      description: Id of the tenant's own storage (lvmthin, ADR-0014), where its VMs' disks live.
      type: str
      sample: tenant-tdemo
    thinpool:
      description: Name of the tenant's thin pool in each node's volume group, the backing of RV(tenant.storage).
      type: str
      sample: tenant-tdemo
    vms:
      description: The tenant's VMs.
      type: list
      elements: dict
      contains:
        index:
          description: VM number, 1-based.
          type: int
          sample: 1
        name:
          description: VM name.
          type: str
          sample: tdemo-1
        vmid:
          description: PVE VMID.
          type: int
          sample: 10101
        vnet:
          description: Id of the VNet its NIC is on (O(vm_vnet)).
          type: str
          sample: tn01v0
        address:
          description: IPv4 address, in its VNet's subnet.
          type: str
          sample: 10.20.129.10
        cidr:
          description: Address with prefix length, as cloud-init's C(ipconfig0) wants it.
          type: str
          sample: 10.20.129.10/24
        gateway:
          description: Its VNet's gateway (cloud-init's C(gw)).
          type: str
          sample: 10.20.129.1
        fqdn:
          description: DNS name.
          type: str
          sample: tdemo-1.tdemo.mobile.deevnet.net
site:
  description: The effective site plan (defaults merged with O(site)), plus RV(site.max_index).
  returned: success
  type: dict
  contains:
    max_index:
      description: The highest tenant index the site holds (it follows O(site.overlay)).
      type: int
      returned: success
      sample: 63
  sample:
    network: 10.20.0.0/16
    overlay: 10.20.128.0/18
    loopbacks: 10.20.255.0/24
    zone: mobile.deevnet.net
    resolver: 10.20.99.1
    transit_vlan: 50
    underlay_vlan: 51
    asn: 65020
    controller: evpnctl
    fabric: ufab
    mtu: 1450
    nodes: [dv02hyp002p02]
    max_index: 63
'''
