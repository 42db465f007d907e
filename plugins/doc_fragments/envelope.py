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
      bandwidth:
        description:
          - What the tenant's VMs together may send on each node, in Mbit/s, at least 1 (docs/adr/0016-tenant-wire.md).
            The envelope guard polices it on the node, at the VMs' ports, whatever their NICs' C(rate) says.
          - Left out (an attachment from before the wire), the ports are still source-checked, at no rate.
        type: int
      broadcast:
        description:
          - Of that, how many broadcast and multicast frames per second, at least 1 (each is replicated over VXLAN to
            every member of the fabric). Left out, no such limit.
        type: int
      disk_read_mbps:
        description:
          - Most disk reads of all its VMs on one node together, in MiB/s (as PVE's C(mbps_rd)), at least 1; not given, no
            cap. The substrate's envelope guard holds the tenant's cgroup group there to it (C(io.max) on the node's
            devices behind the tenant's thin pool), whatever the VMs' own C(mbps_*) and C(iops_*) say. The modules
            carry it, none of them checks a use against it.
        type: int
      disk_write_mbps:
        description: Most disk writes of all its VMs on one node together, in MiB/s, at least 1; not given, no cap.
        type: int
      disk_read_iops:
        description: Most disk read operations a second of all its VMs on one node together, at least 1; not given, no cap.
        type: int
      disk_write_iops:
        description: Most disk write operations a second of all its VMs on one node together, at least 1; not given, no cap.
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
