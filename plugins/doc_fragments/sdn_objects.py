# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Check and diff mode of the modules that stage SDN objects (pve_sdn_fabric, tenant_vrf): both
plan the same way (internal/sdn), so they answer the same."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
attributes:
  check_mode:
    support: full
    description: Reads only; reports the objects it would create, change or delete.
  diff_mode:
    support: full
    description: One before/after pair per object, limited to the keys the module owns.
'''
