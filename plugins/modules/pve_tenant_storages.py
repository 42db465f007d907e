# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/tenant_modules (internal/access).

from __future__ import annotations

DOCUMENTATION = r'''
module: pve_tenant_storages
short_description: Extend every tenant's own storage to the fabric's members
version_added: 0.3.0
author: deevnet.tenant developers (@deevnet)
description:
  - Finds every tenant's own storage that M(deevnet.tenant.pve_tenant_access) registers at onboarding (ADR-0014
    decision 2) - an C(lvmthin) storage C(tenant-<name>) on the thin pool of the same name - and adds to its C(nodes)
    each of O(nodes) it lacks (C(PUT /storage/{storage})).
  - Onboarding registers a tenant's storage on the fabric's members of its day. A node that joins later would refuse the
    tenant's VMs there - C(storage 'tenant-<name>' is not available on node ...) - and the tenant's token cannot change
    a storage. C(playbooks/fabric.yml) runs this module after the fabric's members converge.
  - Never removes a node - a node that leaves the fabric may still hold the tenant's disks, and taking it out of the
    storage would hide them from Proxmox VE. A storage without C(nodes) is on every node already and is left as it is.
    Other storages (the operator's) are never changed.
  - Before any write, each node to be added is read (C(GET /nodes/{node}/disks/lvmthin)) and a node without the
    tenant's thin pool is refused, naming the storage, the node and the C(lvcreate) that makes the pool; so is a node
    whose thin pool is larger than the tenant's envelope disk (O(envelope_disk)), as onboarding refuses one on the
    nodes of its day.
  - Check mode and diff mode show each storage's nodes before and after.
options:
  nodes:
    description:
      - The fabric's members (node names) every tenant storage must be on; the nodes in maintenance may be left out.
    type: list
    elements: str
    required: true
  envelope_disk:
    description:
      - Each tenant's envelope disk in GiB, by tenant name (C(tdemo) for the storage C(tenant-tdemo)); the substrate
        passes every onboarded tenant's.
      - The thin pool is what bounds a tenant's disk (ADR-0014 decision 2), so a node whose C(tenant-<name>) pool is
        larger than this is refused before any write, naming the node, the pool's size and the limit. A tenant not
        listed is not checked.
      - Each value is a whole number of at least 1, or the run is refused naming the entry.
    type: dict
    default: {}
    version_added: 0.3.0
extends_documentation_fragment:
  - deevnet.tenant.proxmox
notes:
  - Needs the substrate's credential (C(Datastore.Allocate) on C(/storage), C(Sys.Audit) on the nodes).
seealso:
  - module: deevnet.tenant.pve_tenant_access
  - module: deevnet.tenant.pve_sdn_fabric
'''

EXAMPLES = r'''
- name: Extend the tenants' storages to a node that joined the fabric
  deevnet.tenant.pve_tenant_storages:
    nodes: [dv02hyp002p02, dv02hyp002p03]
    envelope_disk: {tdemo: 256, tother: 64}
    api_host: pve.example.net
    api_user: root@pam
    api_token_id: iac
    api_token_secret: "{{ vault_pve_token_secret }}"
'''

RETURN = r'''
changes:
  description: One line per storage extended (or that would be, in check mode).
  returned: success
  type: list
  elements: str
  sample: ["extend storage tenant-tdemo to dv02hyp002p03 (nodes dv02hyp002p02,dv02hyp002p03)"]
'''
