# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The envelope option of tenant_plan, tenant_verify and pve_tenant_access: the tenant's hardware limits."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  envelope:
    description:
      - The tenant's hardware envelope, set by the substrate at onboarding and carried in the attachment file
        (C(tenant_attachment.envelope); docs/adr/0014-tenant-envelope.md). The role C(deevnet.tenant.tenant) passes it.
      - M(deevnet.tenant.tenant_plan), with its C(contract) option, refuses a declaration whose totals exceed it before anything is
        planned or written. The totals are C(vms.count), C(vms.count) x C(vms.cores), C(vms.count) x C(vms.memory) and
        C(vms.count) x C(vms.disk); each broken limit is named with the declaration's total and the envelope's limit, all
        in one message.
      - M(deevnet.tenant.tenant_verify), with a PVE connection, checks what every guest of the tenant's pool takes
        (sockets x cores, memory, every disk but a CD-ROM, from each one's configuration) and fails when what runs goes
        over O(envelope.vms), O(envelope.cores) or O(envelope.memory), or what is allocated over O(envelope.disk).
      - M(deevnet.tenant.pve_tenant_access), at onboarding (C(state=present)), refuses before any write an envelope below what
        the tenant's pool already holds (the same count as M(deevnet.tenant.tenant_verify)'s), naming each limit, the use
        and the envelope - a converge stops nothing that runs, so the operator lowers the tenant's use first - and, with
        C(tenant_storage), a node's thin pool larger than O(envelope.disk).
      - A limit below 1 is refused, naming it. Not given (an attachment from before envelopes), nothing is checked
        against it.
    type: dict
    suboptions:
      vms:
        description: Most VMs of the tenant, at least 1.
        type: int
        required: true
      cores:
        description: Most vCPUs over all its VMs, at least 1.
        type: int
        required: true
      memory:
        description: Most memory over all its VMs, in MiB, at least 1.
        type: int
        required: true
      disk:
        description: Most disk over all its VMs, in GiB, at least 1.
        type: int
        required: true
      dns_records:
        description:
          - The DNS quota (docs/adr/0017-dns-quota.md) - most records each of the tenant's zones may hold (the apex's SOA
            and NS aside), at least 1 where given. The DNS gateway refuses an UPDATE past it; these modules carry it.
          - Not given (an attachment from before the DNS quota), nothing is checked against it.
        type: int
      dns_updates:
        description:
          - The DNS quota - most UPDATE messages a minute the tenant may send, at least 1 where given; the DNS gateway
            refuses past it.
        type: int
'''
