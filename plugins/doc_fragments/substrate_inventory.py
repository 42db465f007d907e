# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Options that restate the substrate inventory's own values (roles/substrate meta/argument_specs.yml):
the template, the shared storages and the tenants' volume group, as playbooks/onboard.yml passes them."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  template:
    description:
      - The vmid of the shared template every tenant's VMs clone from (the inventory's C(substrate_template)).
    type: int
    default: 9000
  storages:
    description:
      - The storages every tenant is granted C(PVEDatastoreUser) on for the clone's disks (C(substrate_storages)).
    type: list
    elements: str
    default: []
  tenant_vgname:
    description:
      - The volume group holding each tenant's thin pool C(tenant-<name>) on every node (C(substrate_tenant_vgname)).
    type: str
    default: pve
'''
