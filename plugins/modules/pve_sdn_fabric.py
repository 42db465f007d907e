# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/pve_sdn_fabric.

from __future__ import annotations

DOCUMENTATION = r'''
module: pve_sdn_fabric
short_description: The Proxmox VE 9 SDN fabric, its member nodes (VTEP identity) and the EVPN controller
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Stages the underlay of the tenant compute domain as code (ADR-0001) - the PVE 9 fabric
    (C(/cluster/sdn/fabrics/fabric), OpenFabric by default, OSPF allowed) over the site's loopback prefix
    (10.20.255.0/24), one fabric node per member hypervisor with its VTEP loopback and underlay interfaces,
    and the cluster's single EVPN controller (ASN, bound to the fabric so the VTEP peers are the fabric nodes).
  - A member's loopback is O(nodes[].ip), else the site plan's C(NodeLoopback(number)), C(number) defaulting to
    the member's position in O(nodes) (1-based). Keep the order (or set C(number)) when adding members.
  - B(Phase 2.) Adding a member re-applies the same objects at cluster scope; the existing fabric, members and
    controller are compared and left untouched - only the new node is created. Members missing from O(nodes)
    are kept unless O(purge_nodes=true).
  - Compares against PVE's pending view; staging and applying are separate, as for M(deevnet.tenant.tenant_vrf)
    (docs/adr/0008-sdn-apply.md).
  - O(state=absent) removes the controller (refused while a zone uses it), the listed members (all with
    O(purge_nodes)) and, when no member is left, the fabric.
options:
  fabric:
    description: Fabric id (1..8 letters, digits, inner C(-)); default the site's (C(ufab)).
    type: str
  protocol:
    description: Underlay routing protocol. It cannot be changed on an existing fabric.
    type: str
    default: openfabric
    choices: [openfabric, ospf]
  ip_prefix:
    description: IPv4 prefix of the member loopbacks; default the site's loopback prefix.
    type: str
  area:
    description: OSPF area (O(protocol=ospf) only).
    type: str
    default: "0"
  nodes:
    description: The member hypervisors. Required with O(state=present).
    type: list
    elements: dict
    suboptions:
      name:
        description: PVE node name.
        type: str
        required: true
      ip:
        description: The VTEP loopback (router id) inside O(ip_prefix); default derived from O(nodes[].number).
        type: str
      number:
        description: The member's number in the loopback prefix (1-based); default its position in O(nodes).
        type: int
      interfaces:
        description:
          - Underlay interfaces, from inventory (for example C(vmbr0.51), the underlay VLAN sub-interface).
          - A plain name, or a PVE property string such as C(name=vmbr0.51,hello_multiplier=3).
        type: list
        elements: str
        required: true
  controller:
    description: The EVPN controller id; default the site's (C(evpnctl)). PVE allows one EVPN controller per cluster.
    type: str
  asn:
    description: The controller's BGP ASN; default the site's (65020).
    type: int
  manage_controller:
    description: Manage the EVPN controller too.
    type: bool
    default: true
  purge_nodes:
    description: Remove fabric members not listed in O(nodes).
    type: bool
    default: false
  site:
    description: Overrides of the site plan (C(fabric), C(loopbacks), C(controller), C(asn), ...).
    type: dict
extends_documentation_fragment:
  - deevnet.tenant.proxmox
  - deevnet.tenant.sdn_lock
  - deevnet.tenant.sdn_nodes
  - deevnet.tenant.sdn_objects
notes:
  - Needs C(SDN.Allocate) on C(/sdn/fabrics) and C(/sdn/controllers), and C(Sys.Modify) on each member node.
    This is the substrate's credential, never a tenant's.
seealso:
  - module: deevnet.tenant.pve_sdn_apply
  - module: deevnet.tenant.tenant_vrf
'''

EXAMPLES = r'''
- name: Phase 1 - one member, applied
  deevnet.tenant.pve_sdn_fabric:
    nodes:
      - name: dv02hyp002p02
        interfaces: [vmbr0.51]
    apply: true

- name: Phase 2 - a second member; the first member, fabric and controller are not touched
  deevnet.tenant.pve_sdn_fabric:
    nodes:
      - name: dv02hyp002p02
        interfaces: [vmbr0.51]
      - name: dv02hyp003p02
        interfaces: [vmbr0.51]
  register: fabric

- name: Apply once
  deevnet.tenant.pve_sdn_apply:
    expect: "{{ fabric.pending_objects }}"

- name: OSPF instead of OpenFabric, with explicit loopbacks
  deevnet.tenant.pve_sdn_fabric:
    fabric: ulab
    protocol: ospf
    area: "0"
    ip_prefix: 10.99.255.0/24
    controller: evpnlab
    asn: 65099
    nodes:
      - {name: pve1, ip: 10.99.255.11, interfaces: [eno2]}
'''

RETURN = r'''
fabric:
  description: The fabric id.
  returned: always
  type: str
  sample: ufab
objects:
  description: Every object the task manages (fabric, fabric nodes, controller), with what it did and PVE's pending state.
  returned: always
  type: list
  elements: dict
  contains:
    key:
      description: C(fabric/<id>), C(fabric_node/<fabric>/<node>) or C(controller/<id>).
      type: str
    kind:
      description: C(fabric), C(fabric_node) or C(controller).
      type: str
    id:
      description: The object's id (the node name for a fabric node).
      type: str
    parent:
      description: The fabric of a fabric node.
      type: str
    action:
      description: C(create), C(update), C(delete) or C(none).
      type: str
    pending:
      description: PVE's pending state after the task - C(new), C(changed), C(deleted), or empty.
      type: str
    properties:
      description: The owned properties as desired.
      type: dict
  sample:
    - {key: fabric_node/ufab/dv02hyp002p02, kind: fabric_node, id: dv02hyp002p02, parent: ufab, action: create, pending: new,
       properties: {protocol: openfabric, ip: 10.20.255.1, interfaces: [name=vmbr0.51]}}
pending_objects:
  description: Keys of the managed objects left staged, for M(deevnet.tenant.pve_sdn_apply) O(deevnet.tenant.pve_sdn_apply#module:expect).
  returned: always
  type: list
  elements: str
staged:
  description: Number of writes sent.
  returned: always
  type: int
applied:
  description: Whether this task applied SDN.
  returned: always
  type: bool
apply_task:
  description: UPID of the apply task, or null.
  returned: always
  type: str
pending_nodes:
  description:
    - Offline nodes in O(maintenance); with O(apply=true), the fabric and the controller were applied without them (their
      members stay as declared), and the first run after a node returns reaches it.
  returned: always
  type: list
  elements: str
  sample: [dv02hyp002p03]
reapplied_for:
  description:
    - With O(apply=true), when the fabric, its nodes and the controller needed no write and none was pending, the node
      zones (the tenants' - the fabric has none) whose network reload had failed or not finished, for which this task
      applied again, as M(deevnet.tenant.pve_sdn_apply) would (RV(deevnet.tenant.pve_sdn_apply#module:reapplied_for)).
    - Empty when the apply was for the fabric's changes; if their reload fails, the failure message names the node zones.
  returned: always
  type: list
  elements: str
'''
