# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/pve_tenant_access.

from __future__ import annotations

DOCUMENTATION = r'''
module: pve_tenant_access
short_description: A tenant's PVE pool, user, API token and ACLs, from its name and index
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Converges the Proxmox VE access objects of one tenant, every name derived by the tenant plan
    (ADR-0002) - pool C(tenant-<name>), user C(tenant-<name>@pve), API token C(tenant-<name>@pve!iac)
    (privilege separation on), and ACL entries granted to B(both) the user and the token (with
    privsep the token gets the intersection).
  - "The grants (docs/tenant-contract.md, ADR-0013): the custom role C(DeevnetTenantVM) and C(PVEPoolUser) on
    C(/pool/tenant-<name>); C(PVESDNUser) on C(/sdn/zones/<zone>) (SDN.Use on its VNets); C(PVETemplateUser) on
    C(/vms/<template>); C(PVEDatastoreUser) on each of O(storages) and, with O(tenant_storage), on the tenant's own storage
    C(/storage/tenant-<name>); C(PVESDNUser) on C(/sdn/zones/localnetwork/<bridge>)
    for each of O(bridges) (none by default). Nothing on C(/sdn) itself: the SDN apply stays with the substrate (ADR-0010)."
  - "The role C(DeevnetTenantVM) holds only what M(deevnet.tenant.tenant_vm) uses with the tenant's token: C(VM.Allocate),
    C(VM.Audit), C(VM.Config.CPU), C(VM.Config.Disk), C(VM.Config.Memory), C(VM.Config.Network), C(VM.Config.Options),
    C(VM.PowerMgmt). The module creates it (C(POST /access/roles)) or sets its privileges back when they differ, before the
    grants; it is shared by every tenant and left in place by O(state=absent)."
  - The module owns the tenant's user and token whole; ACL entries of them that are not in the list
    above are revoked.
  - "Before any write (state=present) it refuses, naming the field: an O(index) another tenant holds (the
    comment on its pool or user, the ownership marks on the VNets of the index's zone as
    M(deevnet.tenant.tenant_vrf) reads them, the owner tag or pool of a guest in the index's vmid range as
    M(deevnet.tenant.tenant_vm) reads them) or this tenant onboarded with another index; an O(template) that
    does not exist, is not a template or belongs to a tenant; O(storages) that do not exist or are not
    storage ids; O(bridges) that are not bridge ids or are SDN VNets."
  - "No tenant privilege reaches a site network (ADR-0013): it reads C(GET /nodes/{node}/network) of every node and refuses,
    naming the bridge and the node, a bridge in O(bridges) that is missing, is not a bridge, has a port or an address, or is a
    VLAN of the site (C(vmbr0.50)); and it refuses a O(template) with a NIC on a bridge not in O(bridges), with a VLAN tag or
    trunks, or on a VNet, naming the template, the NIC and the bridge (the fix: a template without a NIC,
    C(qm set <template> --delete net0))."
  - Run it with the substrate's credential (User.Modify and Permissions.Modify are site-wide).
  - The token secret can only be read when the token is created. It is returned once, in
    RV(token_secret), for the attachment file (ADR-0006); it never appears in C(msg), RV(changes) or the diff.
options:
  name:
    description: Tenant name (lowercase letters, digits and C(-); starts with a letter; 2 to 20 characters).
    type: str
    required: true
  index:
    description:
      - The tenant's allocated index, 1..63. Index 0 is the reference tenant and is rejected.
    type: int
    required: true
  site:
    description: Overrides of the site plan, as for M(deevnet.tenant.tenant_plan).
    type: dict
    default: {}
  state:
    description:
      - V(absent) revokes the ACLs, deletes the token, the user and the pool. It refuses while the
        pool still has members (remove the VMs first).
      - V(absent) also deletes the registration of the tenant's own storage C(tenant-<name>) when it is an lvmthin
        storage on the thin pool C(tenant-<name>) (PVE drops its ACLs with it); the thin pool and any volume left in it
        stay on the nodes.
    type: str
    default: present
    choices: [present, absent]
  template:
    description: vmid of the template tenants clone (C(VM.Clone) is granted on it).
    type: int
    default: 9000
  storages:
    description:
      - Shared storages the token may also allocate on (C(Datastore.AllocateSpace)). Onboarding passes none
        (substrate_storages, default empty), since the tenant's disks go to its own storage (O(tenant_storage)).
    type: list
    elements: str
    default: [local-lvm]
  bridges:
    description:
      - Node bridges the template's NICs are on (cloning checks C(SDN.Use) on them). Each must connect nothing on every
        node (no port, no address, not a VLAN). Leave empty with a template without a NIC (ADR-0013), the recommended setup.
    type: list
    elements: str
    default: []
  tenant_storage:
    description:
      - The tenant's own storage (docs/adr/0014-tenant-envelope.md, decision 2), registered before the grants
        (C(POST /storage)) - id C(tenant-<name>), type C(lvmthin), thin pool C(<vgname>/tenant-<name>), content C(images),
        on O(tenant_storage.nodes) - and granted to the token with C(PVEDatastoreUser) (C(Datastore.AllocateSpace)). A
        full clone of the template onto it needs nothing on the template's storage (qemu-server's
        C($check_storage_access_clone) checks the target storage in place of the source's), so O(storages) can be empty.
      - "Before any write it refuses, naming why: a node that is not in the cluster or has no thin pool
        C(<vgname>/tenant-<name>) (C(GET /nodes/{node}/disks/lvmthin); make the pool on each node first), a thin pool
        larger than O(envelope.disk) when O(envelope) is given (the pool's size is what bounds the tenant's disk), or a
        storage C(tenant-<name>) of another type, volume group or thin pool (PVE keeps those fixed)."
      - A later run sets the nodes and content back; unset, the module leaves storages as they are.
    type: dict
    suboptions:
      vgname:
        description: The volume group holding the tenant's thin pool on each node.
        type: str
        default: pve
      nodes:
        description: The nodes the storage is on (the fabric's members).
        type: list
        elements: str
        required: true
  privsep:
    description: Create the token with privilege separation (its privileges are the intersection of its own ACLs and the user's).
    type: bool
    default: true
  regenerate_token:
    description:
      - Delete and recreate the token, so a new secret is issued (rotation). Always a change.
    type: bool
    default: false
  adopt:
    description:
      - Grant the tenant a VRF another tool built (for example the Terraform module, see
        docs/migrate-from-terraform.md) whose VNets carry no ownership mark, which is otherwise refused.
      - It is granted only when C(deevnet.tenant.tenant_vrf)'s O(deevnet.tenant.tenant_vrf#module:adopt) would take
        the VRF over (the same identity rules; the error lists every field that differs). A VRF marked by another
        tenant stays refused.
      - It never rotates a token; an existing token keeps its secret (O(regenerate_token) is the explicit rotation).
      - Needs O(state=present).
    type: bool
    default: false
extends_documentation_fragment:
  - deevnet.tenant.envelope
  - deevnet.tenant.proxmox
attributes:
  check_mode:
    support: full
    description: Reads everything and reports the writes it would make in RV(changes); writes nothing and returns no secret.
  diff_mode:
    support: full
    description: Before/after of the custom role, pool, user, token (id and privsep only), ACL entries and the tenant's storage; never the secret.
notes:
  - A second run with the same options sends no write (C(changed=false)); it reads the pool, user, token, roles and ACLs,
    the pools, users, SDN zones and VNets and C(/cluster/resources) (ownership checks), each node's network and the
    template's config, the tenant's storage and (with O(tenant_storage)) each node's thin pools.
  - Register the result with C(no_log=true) when RV(token_secret) can be in it.
seealso:
  - module: deevnet.tenant.tenant_plan
  - module: deevnet.tenant.tenant_vm
'''

EXAMPLES = r'''
- name: Access objects of tenant tdemo (substrate credential)
  deevnet.tenant.pve_tenant_access:
    api_host: pve.example.net
    api_user: root@pam
    api_token_id: substrate
    api_token_secret: "{{ vault_substrate_token }}"
    name: tdemo
    index: 1
  register: access
  no_log: true

- name: Keep the new token secret for the attachment file
  ansible.builtin.set_fact:
    tdemo_token_secret: "{{ access.token_secret }}"
  when: access.token_secret is defined
  no_log: true

- name: Rotate tdemo's token
  deevnet.tenant.pve_tenant_access:
    name: tdemo
    index: 1
    regenerate_token: true
  register: access
  no_log: true

- name: Remove tdemo's access objects (after its VMs are gone)
  deevnet.tenant.pve_tenant_access:
    name: tdemo
    index: 1
    state: absent
'''

RETURN = r'''
pool:
  description: The tenant's pool.
  returned: always
  type: str
  sample: tenant-tdemo
user:
  description: The tenant's user.
  returned: always
  type: str
  sample: tenant-tdemo@pve
token_id:
  description: Full id of the tenant's API token.
  returned: always
  type: str
  sample: tenant-tdemo@pve!iac
token_secret:
  description:
    - The token's secret. A secret; returned only by the run that created the token (first run or O(regenerate_token)).
  returned: when the token was created
  type: str
  sample: 0d6c8a7e-1111-2222-3333-444455556666
changes:
  description: The writes made (or, in check mode, that would be made), in order.
  returned: always
  type: list
  elements: str
  sample: ["create role DeevnetTenantVM (VM.Allocate,VM.Audit,VM.Config.CPU,VM.Config.Disk,VM.Config.Memory,VM.Config.Network,VM.Config.Options,VM.PowerMgmt)",
           "create pool tenant-tdemo", "grant DeevnetTenantVM on /pool/tenant-tdemo to tenant-tdemo@pve (propagate=1)"]
'''
