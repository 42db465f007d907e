# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/tenant_modules (internal/preflight).

from __future__ import annotations

DOCUMENTATION = r'''
module: substrate_preflight
short_description: Check, by reads only, the assumptions the collection makes about a Proxmox VE cluster
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Reads the cluster with GET requests only and says, per assumption the collection and its simulator
    C(pvesim) make, V(ok) or what differs and what it breaks (docs/preflight.md lists each assumption and why).
  - The checks, in order - C(pve_version) (PVE 9), C(api_endpoints) (the cluster-level reads the modules make,
    C(/cluster/sdn/fabrics/all) among them), C(privileges) (the tenant role's privilege names exist, the built-in
    roles the tenant's grants name hold what the tenant uses), C(tenant_storage) (LVM thin pools in O(tenant_vgname)
    on every node, and each of O(tenants)' C(tenant-<name>)), C(storages) (O(storages) exist and hold images),
    C(hookscript_storage) (storage C(local) at the parent of O(snippets_dir) with content C(snippets)),
    C(template) (O(template) is a template with a disk and no NIC), C(template_guest) (a cloud-init drive, the guest
    agent; a warning), C(quorum) (quorate, every node of O(nodes) an online member, one vote each), C(node_packages)
    (FRR 10 and ifupdown2 3 on every node, from O(node_packages)).
  - Never fails for a difference - RV(failed_checks) names the ones that break the collection, and
    C(playbooks/preflight.yml) fails after printing RV(table). It fails only on bad options; a read that fails (the API not
    reachable, a 403) is that check's difference.
  - C(changed) is always false. The module cannot write - its reads of VMs go through a client that refuses
    every write before it is sent.
options:
  nodes:
    description:
      - The hypervisors (the inventory group C(substrate_hypervisors)), the fabric's members, by PVE node name.
    type: list
    elements: str
    required: true
  tenants:
    description:
      - Tenants already onboarded (the allocation registry's names); each needs its thin pool on every node.
    type: list
    elements: str
    default: []
  hookscript:
    description:
      - Whether the envelope guard is used (C(substrate_envelope_guard)); V(false) skips C(hookscript_storage).
    type: bool
    default: true
  snippets_dir:
    description:
      - Where the substrate role writes the guard on each node (C(substrate_snippets_dir)); it must be the
        C(snippets) directory of storage C(local).
    type: str
    default: /var/lib/vz/snippets
  qdevice:
    description:
      - The QDevice's host (C(substrate_qdevice)); reported with C(quorum), never a difference (playbooks/qdevice.yml sets it up).
    type: str
    default: ''
  node_packages:
    description:
      - Per node, what its package database says - C(frr) and C(ifupdown2), each the installed version or V("") when
        not installed, or C(error) (why it could not be read). A node missing here, or with C(error), makes
        C(node_packages) V(unknown), not a difference.
      - C(playbooks/preflight.yml) reads them with C(dpkg-query) on each hypervisor.
    type: dict
    default: {}
extends_documentation_fragment:
  - deevnet.tenant.proxmox
  - deevnet.tenant.substrate_inventory
  - deevnet.tenant.read_only
notes:
  - Needs the substrate's credential (C(Sys.Audit), C(SDN.Audit), C(VM.Audit), C(Pool.Audit), C(Datastore.Audit));
    a read it is refused (403) is reported as that check's difference.
seealso:
  - module: deevnet.tenant.pve_tenant_access
  - module: deevnet.tenant.tenant_index_info
'''

EXAMPLES = r'''
- name: Check the cluster's assumptions
  deevnet.tenant.substrate_preflight:
    api_host: pve.example.net
    api_user: root@pam
    api_token_id: iac
    api_token_secret: "{{ vault_pve_token_secret }}"
    nodes: [dv02hyp002p02, dv02hyp002p03]
    template: 9000
    node_packages:
      dv02hyp002p02: {frr: 10.4.1-1+pve1, ifupdown2: 3.3.0-1+pmx1}
  register: preflight

- name: Show the table
  ansible.builtin.debug:
    msg: "{{ preflight.table }}"
'''

RETURN = r'''
checks:
  description:
    - One entry per check, in order - C(name), C(assumption), C(status) (V(ok), V(differs), V(unknown) - could not be
      read, V(skipped) - turned off by the inventory), C(found) (what the cluster shows), C(differs) (each difference),
      C(breaks) (what goes wrong when it differs), C(fatal) (a difference breaks the collection).
  returned: success
  type: list
  elements: dict
  sample:
    - name: pve_version
      assumption: Proxmox VE 9 (GET /version, version 9.x)
      status: differs
      found: version 8.4.1, release 8.4
      differs: [version 8.4.1, not 9.x]
      breaks: every module
      fatal: true
failed_checks:
  description: The checks that differ and break the collection; empty when the cluster meets every such assumption.
  returned: success
  type: list
  elements: str
  sample: [pve_version]
table:
  description: The checks as a table a human reads, one line each, every difference and what it breaks beneath its check.
  returned: success
  type: list
  elements: str
'''
