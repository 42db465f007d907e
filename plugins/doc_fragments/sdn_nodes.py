# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Nodes an SDN apply cannot reach, for every module that applies SDN (pve_sdn_fabric, tenant_vrf,
pve_sdn_apply). The Go side is internal/sdn/nodes.go."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  maintenance:
    description:
      - Cluster nodes the operator has taken out of service (the substrate's C(substrate_maintenance)).
      - Before any write the module reads C(GET /nodes). A node that is not C(online) and not listed here fails the
        task, naming it, with nothing written - PVE's apply would end C(OK) while that node keeps its old network.
      - A node listed here that is offline is left behind - the apply reaches the other nodes - and is returned in
        RV(pending_nodes) with a warning, on every run while it is away. When it is back its SDN zones are C(pending)
        (PVE's boot-time C(pve-sdn-commit) does not regenerate a node's files when nothing is pending), so the first
        run after it returns applies again there (RV(reapplied_for)).
      - An entry that names no cluster node fails the task.
    type: list
    elements: str
    default: []
'''
