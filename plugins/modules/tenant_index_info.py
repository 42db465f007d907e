# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/tenant_modules (internal/access).

from __future__ import annotations

DOCUMENTATION = r'''
module: tenant_index_info
short_description: Read which tenant holds which index, as the Proxmox VE objects themselves say
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Reads, with GET requests only, every object in Proxmox VE that says a tenant holds an index (ADR-0002) - the
    comment C(deevnet.tenant <name> (index <n>)) that M(deevnet.tenant.pve_tenant_access) writes on the tenant's pool
    and user, the ownership mark C(tenant-<name>) on the VNets of zone C(tn<nn>) that M(deevnet.tenant.tenant_vrf)
    stages (an unapplied zone counts), and the guests of pool C(tenant-<name>) in an index's vmid range
    (C(10000 + 100 * index) up).
  - Returns RV(tenants), tenant name to index, and RV(claims), the objects behind it.
  - Fails when the objects disagree - one tenant with two indexes, or one index with two tenants - and the message
    names both objects; anything built on a guess (a rebuilt registry, an allocation) would be wrong.
  - The allocation registry (ADR-0009) is a file and can be lost; these objects live as long as the tenant does.
    C(playbooks/onboard.yml) asks this module before it allocates, so it never hands out an index PVE shows in use,
    whatever the registry says, and C(playbooks/registry.yml) rebuilds a lost registry from it.
  - C(changed) is always false.
options: {}
extends_documentation_fragment:
  - deevnet.tenant.proxmox
  - deevnet.tenant.read_only
notes:
  - Needs the substrate's credential (C(Sys.Audit), C(SDN.Audit), C(VM.Audit), C(Pool.Audit), C(User.Modify) to list users);
    a tenant's token sees only its own objects.
seealso:
  - module: deevnet.tenant.pve_tenant_access
  - module: deevnet.tenant.tenant_plan
'''

EXAMPLES = r'''
- name: Read which indexes PVE shows in use
  deevnet.tenant.tenant_index_info:
    api_host: pve.example.net
    api_user: root@pam
    api_token_id: iac
    api_token_secret: "{{ vault_pve_token_secret }}"
  register: in_use

- name: Show them
  ansible.builtin.debug:
    msg: "{{ in_use.tenants }}"   # {tdemo: 1, tother: 2}
'''

RETURN = r'''
tenants:
  description: Each tenant PVE's objects show, with its index.
  returned: success
  type: dict
  sample: {tdemo: 1, tother: 2}
claims:
  description:
    - Every object behind RV(tenants), sorted by index - C(tenant), C(index), C(object) (C(pool tenant-tdemo),
      C(user tenant-tdemo@pve), C(vnet tn01v0 of zone tn01), C(vm 10101 (tdemo-1))).
  returned: success
  type: list
  elements: dict
  sample:
    - {tenant: tdemo, index: 1, object: pool tenant-tdemo}
    - {tenant: tdemo, index: 1, object: vnet tn01v0 of zone tn01}
'''
