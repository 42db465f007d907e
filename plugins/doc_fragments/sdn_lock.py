# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Options of every module that may take the cluster-wide SDN lock (pve_sdn_fabric, tenant_vrf,
pve_sdn_apply). The Go side is internal/sdn/module*.go."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  apply_timeout:
    description:
      - Seconds the whole run may take, 1..86400, B(one deadline) for everything - reads, waiting for a held
        lock (O(lock_wait)), writes and the apply task. When it passes, the run fails; only giving a lock it took
        back (release or rollback) may take up to O(api_timeout) more.
    type: int
    default: 300
  lock_wait:
    description:
      - Seconds to wait for an SDN lock held by another client before failing. PVE refuses a write under a
        foreign lock before it takes effect, so the write (or the lock request) is simply repeated.
      - PVE does not report a lock's holder or age; when the wait runs out, the message gives the time waited
        as a lower bound of the lock's age.
      - 0..3600, and shorter than O(apply_timeout), whose deadline the wait counts against.
    type: int
    default: 0
'''
