# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/tenant_vrf.

from __future__ import annotations

DOCUMENTATION = r'''
module: tenant_vrf
short_description: A tenant's EVPN zone (its VRF), VNets and subnets on Proxmox VE SDN
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Stages the network half of a tenant on Proxmox VE 9 SDN, every identifier derived from the tenant's
    name and index by the site plan (ADR-0002) unless given explicitly - the EVPN zone C(tn<ii>) with the
    site's controller, C(vrf-vxlan) 10000+index, the site's nodes and MTU and B(no exit nodes) (egress goes
    through the perimeter, ADR-0003); VNets C(tn<ii>v<n>) with VNI tags 20000+16*index+n; one subnet per VNet
    with its gateway and SNAT off.
  - Compares against PVE's pending view (C(?pending=1)), so a second run after an unapplied first run
    changes nothing. Only the keys the module owns are compared; the server-generated C(mac) and the
    C(digest) never count as a difference.
  - B(Staging and applying are separate) (docs/adr/0008-sdn-apply.md). By default the module only stages
    (PVE's pending configuration) and returns RV(pending_objects); one M(deevnet.tenant.pve_sdn_apply) task
    applies everything the run staged, once. With O(apply=true) the module applies its own changes itself,
    under the SDN lock, and refuses when somebody else's changes are pending.
  - B(Ownership.) PVE 9.1 zones have no free-text field, so ownership is marked on each VNet's C(alias),
    set to O(owner) (default C(tenant-<name>), the plan's owner tag). The module refuses to change or remove
    a zone holding a VNet with another mark (or none), to move a VNet from another zone, or to use a VNI or
    C(vrf-vxlan) another zone already uses. An existing empty EVPN zone is adopted.
  - O(state=absent) removes the subnets, the VNets and the zone, in that order, and succeeds when some or all
    of them are already gone.
options:
  name:
    description:
      - The tenant's name (a DNS label); marks ownership and derives the identifiers with O(index).
      - One of O(name) and O(tenants) is required.
    type: str
    aliases: [tenant]
  tenants:
    description:
      - Many tenants in one run, instead of O(name) and O(index) (a play over many tenants). Each entry derives a
        tenant's zone, VNets and subnets as O(name), O(index) and O(vnet_count) do for one; the other options apply
        to every tenant.
      - One run reads the zones, the VNets and the nodes once for all of them and each tenant's subnets once, and
        with O(apply=true) applies once; a task looped over the tenants reads every list again for each tenant.
      - A name or index listed twice is refused; an error names the entry (C(tenants[i] (name))), and nothing is
        written when any entry is refused.
      - Mutually exclusive with O(name), O(index), O(zone), O(vrf_vxlan), O(owner), O(vnets) and O(vnet_count).
    type: list
    elements: dict
    version_added: 0.2.0
    suboptions:
      name:
        description: The tenant's name, as O(name).
        type: str
        required: true
        aliases: [tenant]
      index:
        description: The tenant's allocated index, as O(index).
        type: int
        required: true
      vnet_count:
        description: Its number of VNets, as O(vnet_count).
        type: int
        default: 1
  index:
    description:
      - The tenant's allocated index (1..63 on the default site). Every identifier below is derived from it.
      - Index 0 is reserved for the reference tenant and rejected.
      - One of O(index), O(zone) and O(tenants) is required.
    type: int
  site:
    description:
      - Overrides of the site plan, as for M(deevnet.tenant.tenant_plan) (keys C(overlay), C(controller),
        C(mtu), C(nodes), ...). Unset keys keep the seed's values.
    type: dict
  vnet_count:
    description: Number of VNets (1, 2, 4, 8 or 16); the tenant /24 is split evenly between them.
    type: int
    default: 1
  zone:
    description: Explicit EVPN zone id (2..8 letters and digits), instead of the derived C(tn<ii>).
    type: str
  vrf_vxlan:
    description: Explicit L3 VNI of the zone, instead of 10000+index. Must differ from every other zone's and VNet's VNI.
    type: int
  controller:
    description: The EVPN controller of the zone; default the site's (C(evpnctl)). It must exist (M(deevnet.tenant.pve_sdn_fabric)).
    type: str
  mtu:
    description: MTU of the zone's VNets; default the site's (1450, VXLAN over a 1500 underlay).
    type: int
  nodes:
    description: PVE nodes the zone is deployed on; default the site's nodes.
    type: list
    elements: str
  owner:
    description: The ownership mark written to each VNet's C(alias); default the plan's owner tag C(tenant-<name>).
    type: str
  adopt:
    description:
      - Take over a zone another tool built (for example the Terraform module, see docs/migrate-from-terraform.md)
        whose VNets carry no ownership mark, which is otherwise refused as someone else's.
      - The zone is taken only when it is the plan's by identity. It must be an EVPN zone with the plan's
        C(vrf-vxlan), each VNet in it one of the plan's with its VNI, and each subnet the plan's; the error lists every
        field that differs. A VNet marked by another owner is refused as without I(adopt).
      - It writes only what the plan needs, the mark on each VNet's C(alias) and any owned key that differs. It never
        deletes or renumbers a zone, VNet or subnet. Check mode shows exactly these writes.
      - Needs O(state=present). Once taken over, a run without I(adopt) manages the zone as usual.
    type: bool
    default: false
  vnets:
    description: Explicit VNets instead of the derived ones; each gets one subnet.
    type: list
    elements: dict
    suboptions:
      id:
        description: VNet id (2..8 letters and digits).
        type: str
        required: true
      tag:
        description: The VNet's VNI (1..16777215), unique in the cluster.
        type: int
        required: true
      subnet:
        description: The subnet's CIDR, without host bits.
        type: str
        required: true
      gateway:
        description: The anycast gateway address inside O(vnets[].subnet).
        type: str
extends_documentation_fragment:
  - deevnet.tenant.proxmox
  - deevnet.tenant.sdn_lock
  - deevnet.tenant.sdn_nodes
  - deevnet.tenant.sdn_objects
notes:
  - Needs C(SDN.Allocate) on C(/sdn/zones) to create a zone; a tenant's own token cannot hold it without reaching
    every tenant, so the substrate runs this module at onboarding (docs/adr/0008-sdn-apply.md).
  - PVE's apply is global. A pending change by somebody else is never applied by this module; with O(apply=true) it fails naming it.
  - Errors are raised before any write for invalid or too long ids, VNIs used elsewhere, another tenant's zone and a
    missing controller. An SDN lock held by another client fails the task (see O(lock_wait)).
seealso:
  - module: deevnet.tenant.pve_sdn_apply
  - module: deevnet.tenant.pve_sdn_fabric
  - module: deevnet.tenant.tenant_plan
'''

EXAMPLES = r'''
- name: Stage tdemo's VRF (zone tn01, vnet tn01v0 with VNI 20016, subnet 10.20.129.0/24)
  deevnet.tenant.tenant_vrf:
    name: tdemo
    index: 1
  register: tdemo_vrf

- name: Apply everything this play staged, once
  deevnet.tenant.pve_sdn_apply:
    expect: "{{ tdemo_vrf.pending_objects }}"

- name: Stage and apply in one task (one tenant, nothing else pending)
  deevnet.tenant.tenant_vrf:
    name: tdemo
    index: 1
    apply: true

- name: A site with its own overlay and controller
  deevnet.tenant.tenant_vrf:
    name: tlab
    index: 7
    vnet_count: 2
    site:
      overlay: 10.30.128.0/18
      controller: evpnlab

- name: Remove tdemo's VRF (subnets, VNets, zone) and apply
  deevnet.tenant.tenant_vrf:
    name: tdemo
    index: 1
    state: absent
    apply: true
'''

RETURN = r'''
zone:
  description: The zone id.
  returned: always
  type: str
  sample: tn01
objects:
  description: Every object the task manages, with what it did and PVE's pending state afterwards.
  returned: always
  type: list
  elements: dict
  contains:
    key:
      description: C(<kind>/<id>), the name M(deevnet.tenant.pve_sdn_apply) expects.
      type: str
      sample: vnet/tn01v0
    kind:
      description: C(zone), C(vnet) or C(subnet).
      type: str
    id:
      description: The object's id; a subnet's is C(<zone>-<network>-<prefixlen>).
      type: str
    parent:
      description: The VNet of a subnet.
      type: str
    action:
      description: C(create), C(update), C(delete) or C(none).
      type: str
    pending:
      description: PVE's pending state after the task - C(new), C(changed), C(deleted), or empty when applied.
      type: str
    properties:
      description: The owned properties as desired (absent for deleted objects).
      type: dict
  sample:
    - {key: zone/tn01, kind: zone, id: tn01, action: create, pending: new,
       properties: {type: evpn, controller: evpnctl, vrf-vxlan: "10001", mtu: "1450", nodes: dv02hyp002p02}}
pending_objects:
  description:
    - Keys of the managed objects left staged but not applied.
    - Pass them to M(deevnet.tenant.pve_sdn_apply) O(deevnet.tenant.pve_sdn_apply#module:expect).
  returned: always
  type: list
  elements: str
  sample: [zone/tn01, vnet/tn01v0, subnet/tn01-10.20.129.0-24]
staged:
  description: Number of writes sent.
  returned: always
  type: int
applied:
  description: Whether this task applied SDN (O(apply=true)).
  returned: always
  type: bool
apply_task:
  description: UPID of the apply's C(reloadnetworkall) task, or null.
  returned: always
  type: str
  sample: "UPID:dv02hyp002p02:0001A2B3:00C0FFEE:6650A1B3:reloadnetworkall::root@pam!iac:"
pending_nodes:
  description:
    - Offline nodes in O(maintenance); with O(apply=true), the tenant's zone was applied without them, and the first run after
      a node returns applies it there (RV(reapplied_for)). Returned whether or not this task applied.
  returned: always
  type: list
  elements: str
  sample: [dv02hyp002p03]
reapplied_for:
  description:
    - With O(apply=true), when none of this tenant's objects needed a write or was pending, the node zones (any tenant's,
      since an apply is cluster-wide) whose network reload had failed or not finished, for which this task applied again;
      in the form of RV(deevnet.tenant.pve_sdn_apply#module:reapplied_for).
    - Empty when the apply was for this tenant's changes; if their reload fails, the failure message names the node zones.
  returned: always
  type: list
  elements: str
'''
