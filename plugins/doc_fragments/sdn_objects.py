# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""What the modules that stage SDN objects (pve_sdn_fabric, tenant_vrf) share: the options of Go's
sdn.Staging but the site (state, apply), and check and diff mode. Both plan and converge through
the same code (internal/sdn: stage, Converge), so they answer the same."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  state:
    description: Whether the module's objects (RV(objects)) exist; the description says what O(state=absent) removes, in which order.
    type: str
    default: present
    choices: [present, absent]
  apply:
    description:
      - Apply the staged changes at once, under the SDN lock (take lock, stage with its token, C(PUT /cluster/sdn),
        wait for the reload task and check its exit status). On a staging failure the lock is rolled back when it was
        taken with nothing pending (only this task's changes can be discarded), else released.
      - Leave it C(false) (the default) when a play stages several modules' objects (several tenants, or the fabric
        and a tenant), and apply once with M(deevnet.tenant.pve_sdn_apply).
      - With O(apply=true), a node whose SDN zone status is not C(available) after the apply fails the task, and
        a run with nothing to stage or apply applies again when a node's zone is in C(error) (its last reload
        failed; RV(reapplied_for)).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads only; reports the objects it would create, change or delete.
  diff_mode:
    support: full
    description: One before/after pair per object, limited to the keys the module owns.
'''
