# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/pve_sdn_apply.

from __future__ import annotations

DOCUMENTATION = r'''
module: pve_sdn_apply
short_description: Apply the Proxmox VE SDN changes a run staged, once, under the SDN lock
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - PVE's apply (C(PUT /cluster/sdn)) is global - it applies every pending change, whoever staged it. This module
    applies only when every pending object is one the run expects (O(expect), normally the RV(deevnet.tenant.tenant_vrf#module:pending_objects)
    of the staging tasks), and otherwise fails naming the foreign ones, unless O(allow_foreign_pending=true).
  - Nothing pending is a no-op with no write at all.
  - Otherwise it takes the SDN lock (C(POST /cluster/sdn/lock)), reads the pending set again under the lock and
    checks it again (so nothing staged between the check and the lock slips through), applies with the lock
    token, waits for the C(reloadnetworkall) task and fails unless its exit status is C(OK), with the task log's tail.
  - If the commit fails, the lock is released (O(on_failure=release), changes stay staged) or everything pending
    is rolled back (O(on_failure=rollback)). A failed reload task cannot be rolled back (the configuration is
    already committed); the task fails with PVE's message.
  - After the apply task (which PVE ends C(OK) even when a node fails to reload), every node's SDN zone status
    (C(GET /nodes/<node>/sdn/zones)) is read; a zone in C(error), or still C(pending) after 30 s, fails the task.
    When nothing is pending but a node's zone is not C(available) (its last reload failed), the module applies
    again (the only way PVE regenerates and reloads a node) and reports it in RV(reapplied_for).
  - See docs/adr/0008-sdn-apply.md for the design and the permission split.
options:
  expect:
    description:
      - Keys (C(<kind>/<id>)) of the pending objects this run staged and may apply; pass the staging tasks'
        C(pending_objects), flattened. Expected objects that are not pending are ignored.
    type: list
    elements: str
    default: []
  allow_foreign_pending:
    description: Apply pending changes that are not in O(expect) too (everything pending).
    type: bool
    default: false
  on_failure:
    description: What to do with the lock when the commit fails.
    type: str
    default: release
    choices: [release, rollback]
extends_documentation_fragment:
  - deevnet.tenant.proxmox
  - deevnet.tenant.sdn_lock
  - deevnet.tenant.sdn_nodes
attributes:
  check_mode:
    support: full
    description: Reads the pending set and reports what would be applied; takes no lock.
  diff_mode:
    support: full
    description: The pending objects before, nothing pending after.
notes:
  - Apply, lock and rollback need C(SDN.Allocate) on C(/sdn), which covers every tenant. A tenant's token cannot hold it;
    the substrate (or an applier token) runs this module (docs/adr/0008-sdn-apply.md).
  - A lock held by another client fails the task (with its age when the server reports it); nothing is written.
seealso:
  - module: deevnet.tenant.tenant_vrf
  - module: deevnet.tenant.pve_sdn_fabric
'''

EXAMPLES = r'''
- name: Stage three tenants
  deevnet.tenant.tenant_vrf:
    name: "{{ item.name }}"
    index: "{{ item.index }}"
  loop: "{{ tenants }}"
  register: vrfs

- name: Apply once for all of them
  deevnet.tenant.pve_sdn_apply:
    expect: "{{ vrfs.results | map(attribute='pending_objects') | flatten }}"

- name: Apply whatever is pending (after reviewing it)
  deevnet.tenant.pve_sdn_apply:
    allow_foreign_pending: true
    on_failure: rollback
'''

RETURN = r'''
pending_objects:
  description: The pending objects found (under the lock when applying), each with C(key), C(kind), C(id) and C(pending) (C(new), C(changed), C(deleted)).
  returned: always
  type: list
  elements: dict
  sample:
    - {key: zone/tn01, kind: zone, id: tn01, pending: new}
applied:
  description: Whether SDN was applied (committed).
  returned: always
  type: bool
apply_task:
  description: UPID of the C(reloadnetworkall) task, or null.
  returned: always
  type: str
  sample: "UPID:dv02hyp002p02:0001A2B3:00C0FFEE:6650A1B3:reloadnetworkall::root@pam!iac:"
pending_nodes:
  description:
    - Offline nodes in O(maintenance) this apply could not reach (also a warning, whether or not anything was pending); once
      a node is back its zones read C(pending), and the next run of this module applies again (RV(reapplied_for)).
  returned: always
  type: list
  elements: str
  sample: [dv02hyp002p03]
reapplied_for:
  description:
    - Node zones (C(<node>/<zone> (<status>))) that had not reached the running SDN config - a failed or unfinished
      network reload (node status C(error) or C(pending)) - when nothing was pending, so this task applied again.
      After an apply, the node zones still not C(available) when the task failed.
    - M(deevnet.tenant.tenant_vrf) and M(deevnet.tenant.pve_sdn_fabric) return the same list when they apply again.
  returned: always
  type: list
  elements: str
  sample: ["dv02hyp002p02/tn01 (error)"]
'''
