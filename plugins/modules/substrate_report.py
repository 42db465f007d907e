# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/substrate_report.

from __future__ import annotations

DOCUMENTATION = r'''
module: substrate_report
short_description: Read a substrate back and render the operator's report (Markdown with a Mermaid topology)
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Reads the substrate back from the Proxmox VE API with GET requests only - the nodes, the SDN fabric and its
    members (VTEP loopbacks), the controllers, the applied zones, VNets and subnets, every guest (C(/cluster/resources))
    and each guest's configuration (address from C(ipconfig0), NIC bridge) - and each tenant's records through
    O(resolver).
  - Reads the cluster's quorum (C(/cluster/status), C(/cluster/config/nodes), C(/cluster/config/qdevice)) into the report's
    Quorum section - quorate or not, votes of expected votes and the quorum, each member's votes and the QDevice's state
    (docs/adr/0015-quorum.md). A credential without C(Sys.Audit) on C(/) gets a note there instead; the rest of the report
    does not depend on it.
  - Plans each tenant of O(tenants) from its name and index (as M(deevnet.tenant.tenant_plan) does) and matches what
    was read back against the plan, so a missing zone, VNet or VM, a stopped VM or a wrong address shows as such.
  - Returns RV(report), a Markdown document - a Mermaid flowchart of the topology (fabric nodes, each tenant's VRF,
    VNets, VMs with address, node and state, its failed checks, the perimeter and the resolver) and a table of the
    check outcomes given in O(tenants[].checks) and O(site_checks) - which the playbook stores with
    M(ansible.builtin.copy). The module itself writes nothing (C(changed) is always false).
  - No secret reaches the report - it holds names, addresses, states and the checks' own details only.
  - C(playbooks/verify.yml) runs it after the checks (docs/tenant-contract.md).
options:
  site:
    description: Site plan overrides, as for M(deevnet.tenant.tenant_plan) (C(substrate_site)).
    type: dict
    default: {}
  tenants:
    description: The tenants to show, each planned from its name and index.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The tenant's name.
        type: str
        required: true
      index:
        description: The tenant's allocated index (its attachment file's C(index)).
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
          - The VNet each VM's NIC is on (C(tenant.vms.vnet)) - VM k on VNet O(tenants[].vm_vnet[k-1]), so its expected address is in that VNet.
          - Empty puts every VM on VNet 0; otherwise one entry per VM, each below O(tenants[].vnets).
        type: list
        elements: int
        default: []
      records:
        description: The declared records to read back through O(resolver), C(name) relative to the tenant zone (C(@) for the apex).
        type: list
        elements: dict
        default: []
        suboptions:
          name:
            description: The record's name, relative to the tenant zone.
            type: str
            required: true
          type:
            description: The record type (C(A), C(CNAME), ...).
            type: str
            required: true
      checks:
        description: Outcomes of the tenant's checks, shown in the table; a failed one is drawn in the picture too.
        type: list
        elements: dict
        default: []
        # the fields of a check, the same for site_checks (a YAML anchor: one list, two options)
        suboptions: &check_fields
          name:
            description: What was checked.
            type: str
            required: true
          target:
            description: The name, address or object checked.
            type: str
            default: ''
          ok:
            description: Whether the check passed.
            type: bool
            required: true
          detail:
            description: What the check saw (an answer, a status). Never put a secret here.
            type: str
            default: ''
          time:
            description: When the check ran (UTC, ISO 8601).
            type: str
            default: ''
  site_checks:
    description: Outcomes of checks of the site rather than one tenant (the data plane through the perimeter).
    type: list
    elements: dict
    default: []
    suboptions: *check_fields
  resolver:
    description: The resolver the records are read through; without it no record is read.
    type: dict
    suboptions:
      server:
        description: Its address.
        type: str
        required: true
      port:
        description: Its port.
        type: int
        default: 53
  generated_at:
    description: The time written as the report's date; the module's clock (UTC) when not given.
    type: str
  generated_by:
    description: The playbook named in the report's first line as the one that wrote it.
    type: str
    default: deevnet.tenant.verify
    version_added: 0.3.0
extends_documentation_fragment:
  - deevnet.tenant.proxmox
  - deevnet.tenant.read_only
attributes:
  diff_mode:
    support: none
    description: Nothing changes; M(ansible.builtin.copy) gives the report's diff.
notes:
  - Reading needs C(Sys.Audit) on C(/nodes), C(SDN.Audit) on C(/sdn) and C(VM.Audit) on the guests - the substrate's
    credential. A tenant's token sees only its own objects, so the other tenants would show as missing.
seealso:
  - module: deevnet.tenant.tenant_plan
'''

EXAMPLES = r'''
- name: Read the substrate back and render the report
  deevnet.tenant.substrate_report:
    site: "{{ substrate_site | default({}) }}"
    tenants:
      - name: tdemo
        index: 1
        records: [{name: www, type: CNAME}]
        checks:
          - {name: A via resolver, target: tdemo-1.tdemo.mobile.deevnet.net, ok: true, detail: 10.20.129.10, time: "2026-12-01T04:00:00Z"}
    resolver: {server: 127.0.0.1, port: 5301}
  register: site_report

- name: Store it
  ansible.builtin.copy:
    content: "{{ site_report.report }}"
    dest: reports/mobile.deevnet.net.md
    mode: "0644"
'''

RETURN = r'''
report:
  description: The report, Markdown with one C(mermaid) code block (the topology) and the checks table.
  returned: always
  type: str
site:
  description: The site plan the tenants were planned on, as M(deevnet.tenant.tenant_plan) returns it; C(zone) names the site.
  returned: always
  type: dict
substrate:
  description: What was read back - C(nodes), C(fabrics), C(fabric_nodes), C(controllers), C(zones), C(vnets) (with C(subnets)), C(vms),
    C(quorum) (C(quorate), C(expected_votes), C(total_votes), C(quorum), C(nodes), C(qdevice) with C(host), C(algorithm), C(state), C(votes)).
  returned: always
  type: dict
summary:
  description: C(tenants), C(checks) and C(failed) counts.
  returned: always
  type: dict
  sample: {tenants: 2, checks: 14, failed: 0}
'''
