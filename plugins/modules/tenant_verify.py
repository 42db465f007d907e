# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/tenant_modules (internal/report).

from __future__ import annotations

DOCUMENTATION = r'''
module: tenant_verify
short_description: Check one tenant against its plan - its names through the resolver, its VMs in PVE - in one run
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Plans the tenant from O(name) and O(index) (as M(deevnet.tenant.tenant_plan) does) and checks each of its VMs -
    C(A record through the resolver) (the VM's name answers exactly its address), C(PTR record through the resolver)
    (the address answers exactly the name), and, with a PVE connection, the PVE configuration check (the VM's C(name),
    and its address and gateway in C(ipconfig0)) and C(VM running).
  - With O(envelope) and a PVE connection, one more check, C(Pool's use inside the tenant's envelope), adds up every
    guest of the tenant's pool, planned or not (configured and running VMs, vCPUs, memory, allocated disk), and fails
    over the envelope (see O(envelope)).
  - Reads only - the resolver (a query it does not answer is asked again once), then with GET requests
    C(/cluster/resources) once and each VM's C(config) and C(status/current) on the node PVE lists it on (the site's
    first node when it is not listed). C(changed) is always false.
  - Returns every outcome in RV(checks); with O(fail_on_failed) the run fails when one failed, its message naming
    each failed check, its target and what it saw.
  - The role C(deevnet.tenant.tenant) runs it after a converge (C(tenant_verify)) and for C(playbooks/verify.yml).
options:
  name:
    description: The tenant's name.
    type: str
    required: true
  index:
    description: The tenant's allocated index.
    type: int
    required: true
  vms:
    description: How many VMs the declaration asks for (C(tenant.vms.count)).
    type: int
    default: 1
  vnets:
    description: How many VNets the declaration asks for (C(tenant.vnets)).
    type: int
    default: 1
  vm_vnet:
    description:
      - The VNet each VM's NIC is on (C(tenant.vms.vnet)) - VM k on VNet O(vm_vnet[k-1]), so its expected address is
        in that VNet. Empty puts every VM on VNet 0.
    type: list
    elements: int
    default: []
  site:
    description: Site plan overrides, as for M(deevnet.tenant.tenant_plan).
    type: dict
    default: {}
  resolver:
    description: The resolver the names are checked through.
    type: dict
    required: true
    suboptions:
      server:
        description: Its address.
        type: str
        required: true
      port:
        description: Its port.
        type: int
        default: 53
  fail_on_failed:
    description:
      - Fail when a check failed. With V(false) the run passes and the caller decides (C(playbooks/verify.yml) writes
        the site report first).
    type: bool
    default: true
  maintenance:
    description:
      - Cluster nodes the operator has taken out of service (the substrate's C(substrate_maintenance)), as
        M(deevnet.tenant.tenant_vm) takes them.
      - A VM on a node of this list that C(GET /nodes) shows offline is not asked of PVE (it would answer 595); its two
        PVE checks are replaced by one passing check C(VM left on its node in maintenance) whose detail names the node,
        the run warns naming the VM and the node, and RV(pending_nodes) lists the node. The first run after the node
        returns checks the VM again.
      - A VM on an offline node not in this list fails its PVE checks (C(PVE answered 595 - No route to host)).
      - An entry that names no cluster node fails the run before any check, naming the entry. With an empty list
        C(GET /nodes) is not read.
    type: list
    elements: str
    default: []
  api_host:
    description:
      - Host name or address of the Proxmox VE API. Without it no PVE check is made (only the resolver is asked); with
        it O(api_user), O(api_token_id) and O(api_token_secret) are required too.
      - If not given, the environment variable E(PROXMOX_HOST) is used.
    type: str
  api_user:
    description:
      - The user that owns the API token (the tenant's own, C(tenant-<name>@pve)). Required with O(api_host).
      - If not given, the environment variable E(PROXMOX_USER) is used.
    type: str
  api_token_id:
    description:
      - The token id. Required with O(api_host).
      - If not given, the environment variable E(PROXMOX_TOKEN_ID) is used.
    type: str
  api_token_secret:
    description:
      - The token secret; never shown in output, diffs or errors. Required with O(api_host).
      - If not given, the environment variable E(PROXMOX_TOKEN_SECRET) is used.
    type: str
extends_documentation_fragment:
  - deevnet.tenant.envelope
  - deevnet.tenant.proxmox
  - deevnet.tenant.read_only
notes:
  - The tenant's own token sees its VMs (C(VM.Audit) on its pool); the PVE checks need nothing more.
seealso:
  - module: deevnet.tenant.tenant_plan
  - module: deevnet.tenant.substrate_report
'''

EXAMPLES = r'''
- name: Check tdemo's names and VMs, failing on the first run that finds one wrong
  deevnet.tenant.tenant_verify:
    name: tdemo
    index: 1
    vms: 1
    resolver: {server: 10.20.99.1, port: 53}
    api_host: pve.example.net
    api_user: tenant-tdemo@pve
    api_token_id: iac
    api_token_secret: "{{ tdemo_token_secret }}"

- name: Record the outcomes and decide later
  deevnet.tenant.tenant_verify:
    name: tdemo
    index: 1
    resolver: {server: 10.20.99.1}
    fail_on_failed: false
  register: tdemo_checks
'''

RETURN = r'''
checks:
  description:
    - One entry per check, the A then the PTR check of each VM, then each VM's configuration and running check, then
      with O(envelope) the envelope check (target the pool, detail what the pool uses of the envelope and each limit it
      goes over).
    - C(name) what was checked, C(target) the name, the address, or the VM as its name with its vmid in parentheses,
      C(ok), C(detail) what was seen (the answer, C(no answer), C(status stopped), C(PVE answered <status> - <message>)),
      C(time) (UTC).
  returned: always
  type: list
  elements: dict
  sample:
    - {name: A record through the resolver, target: tdemo-1.tdemo.mobile.deevnet.net, ok: true, detail: 10.20.129.10,
       time: "2026-12-01T04:00:00Z"}
    - {name: VM running, target: tdemo-1 (10101), ok: false, detail: status stopped, time: "2026-12-01T04:00:00Z"}
    - {name: "Pool's use inside the tenant's envelope", target: tenant-tdemo, ok: true,
       detail: "uses 2 VMs (2 running), 4 vCPUs (4 running), 4096 MiB (4096 running), 64 GiB of 8 VMs, 16 vCPUs, 32768 MiB, 256 GiB",
       time: "2026-12-01T04:00:00Z"}
pending_nodes:
  description: The nodes of O(maintenance) that are offline and hold a VM of the tenant, which was therefore not checked in PVE; sorted.
  returned: always
  type: list
  elements: str
  sample: [dv02hyp002p03]
'''
