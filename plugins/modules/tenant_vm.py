# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# The module itself is a Go binary (cmd/tenant_vm); this file holds its documentation only.

from __future__ import annotations

DOCUMENTATION = r'''
module: tenant_vm
short_description: A tenant's VMs cloned from a template, on its VNet, addressed by cloud-init
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Converges the VMs of one tenant on Proxmox VE in one task. Every identifier comes from the
    tenant plan (ADR-0002). VM C(k) of tenant C(tdemo) with index 1 is named C(tdemo-1), has vmid
    C(10101) (never C(/cluster/nextid)), address C(10.20.129.10/24), gateway C(10.20.129.1), and sits
    in pool C(tenant-tdemo) on the tenant's first VNet C(tn01v0) (another VNet with O(vnet) or
    O(vms[].vnet), with the address and gateway of that VNet's subnet).
  - A missing VM is cloned from O(template) into the tenant's pool (linked by default, full with
    O(full)), then in the same task configured (cores, memory, disk growth, C(net0) on the VNet,
    cloud-init C(ipconfig0), nameserver (the site resolver), searchdomain (the tenant's DNS zone),
    C(ciuser), C(sshkeys), C(cipassword), tags, description) and brought to its power state.
  - The configuration is compared key by key with Proxmox VE's normalised form (pending values
    included). C(net0) keeps its MAC and the keys the module does not own, C(sshkeys) are compared
    decoded and sent percent-encoded (C(%20), not C(+)), tags as a set, memory from its property
    string. A second run with the same options sends no write and reports C(changed=false).
  - Before any write, the module reads everything first and refuses with a clear message when the
    template, the pool, the VNet, the node or the storage is missing, or when a vmid belongs to
    another tenant (its C(tenant-<name>) tag or its pool says so) or to nobody this tenant knows.
    Nothing is written for any VM when one declaration is refused.
  - Every PVE task is waited for and its exit status checked; a task that ends with anything but
    C(OK) fails the VM with PVE's own message, and a task that outlives O(timeout) fails with a
    clear error. One failed VM does not stop the others; the next run converges what is left.
options:
  name:
    description:
      - Tenant name, as allocated (for example C(tdemo)).
      - One of O(name) and O(tenants) is required.
    type: str
    aliases: [tenant]
  index:
    description:
      - Tenant index allocated at onboarding, 1..63 with the default site. Index 0 belongs to the
        reference tenant and is rejected by the plan.
      - Required with O(name).
    type: int
  tenants:
    description:
      - Many tenants' VMs in one run, instead of O(name), O(index), O(count), O(vms) and O(vnet_count) (a play over
        many tenants). Each entry declares one tenant's VMs as those options do for one tenant; every other option
        (sizes, template, state, placement, ...) applies to every tenant's VMs.
      - One run reads C(/cluster/resources) and the nodes once for all of them; a task looped over the tenants reads
        them again for each tenant.
      - A name or index listed twice is refused; an error names the entry (C(tenants[i] (name))), and nothing is
        written when any entry is refused.
    type: list
    elements: dict
    version_added: 0.2.0
    suboptions:
      name:
        description: The tenant's name, as O(name).
        type: str
        required: true
        aliases: [tenant]
      index:
        description: The tenant's index, as O(index).
        type: int
        required: true
      count:
        description: Its number of VMs, as O(count). Mutually exclusive with O(tenants[].vms); one of them is required.
        type: int
      vms:
        description: Its VM declarations, as O(vms) (the same suboptions).
        type: list
        elements: dict
      vnet_count:
        description: Its number of VNets, as O(vnet_count).
        type: int
        default: 1
  site:
    description:
      - Overrides of the site plan (keys C(network), C(overlay), C(loopbacks), C(zone), C(resolver),
        C(transit_vlan), C(underlay_vlan), C(asn), C(controller), C(fabric), C(mtu), C(nodes)), as
        for M(deevnet.tenant.tenant_plan). The resolver becomes the VMs' nameserver, the first node
        the default O(node).
    type: dict
  vms:
    description:
      - The VM declarations. Entry C(i) (1-based) is VM C(i) of the plan unless it gives O(vms[].index).
      - Mutually exclusive with O(count); one of them (or O(tenants)) is required.
      - VMs not listed are not touched; declare one with O(vms[].state=absent) to remove it.
    type: list
    elements: dict
    suboptions:
      index:
        description: Number C(k) of the VM in the plan (name C(<tenant>-<k>), vmid C(10000+100*index+k)).
        type: int
      cores:
        description: Cores; defaults to the module-level O(cores).
        type: int
      memory:
        description: Memory in MiB; defaults to the module-level O(memory).
        type: int
      disk:
        description: Size of the boot disk, C(20G) or a whole number of GiB (C(20)); defaults to the module-level O(disk).
        type: raw
      template:
        description: Template to clone; defaults to the module-level O(template).
        type: str
      state:
        description: State of this VM; defaults to the module-level O(state).
        type: str
        choices: [present, started, stopped, absent, rebuilt]
      vnet:
        description: VNet of this VM (0-based, below O(vnet_count)); defaults to the module-level O(vnet).
        type: int
  count:
    description:
      - Number of VMs, C(1..count), all with the module-level settings. Mutually exclusive with O(vms).
    type: int
  state:
    description:
      - Default state of every VM.
      - V(present) creates and configures the VM and leaves its power state alone (a new VM stays stopped).
      - V(started) is V(present) and running; V(stopped) is V(present) and stopped (a hard stop).
      - V(absent) stops the VM, then destroys it with C(purge) and C(destroy-unreferenced-disks).
      - V(rebuilt) destroys the VM if it exists, clones it again from the template, configures and
        starts it. It B(always) reports C(changed=true); it is the building block of the
        rebuild-from-scratch drill, not a convergence.
    type: str
    default: started
    choices: [present, started, stopped, absent, rebuilt]
  cores:
    description: Cores of every VM. Not managed when not given (the template's value stays).
    type: int
  memory:
    description: Memory in MiB of every VM. Not managed when not given.
    type: int
  disk:
    description:
      - Size of the boot disk (the first non-CD, non-cloud-init disk in scsi, virtio, sata, ide
        order), a size with a unit as PVE writes it (C(20G)) or a whole number of GiB (C(20), the tenant
        contract's C(tenant.vms.disk)); a string without a unit is refused. Disks only grow; a larger disk
        is left alone with a warning.
    type: raw
  template:
    description:
      - Template to clone, by vmid (C(9000)) or by name (C(debian-12-genericcloud)). Required for
        every VM that does not exist yet. A name shared by several templates is refused.
    type: str
  node:
    description:
      - Node to create the VMs on (O(placement=first)). Defaults to the first node of the site plan.
      - Refused together with O(placement=spread).
    type: str
  placement:
    description:
      - Where a VM that does not exist yet is created. C(first) puts every VM on O(node) (default
        the site's first node); C(spread) puts VM C(k) on node C((k-1) mod n) of the site plan's
        O(site) nodes, so a VM's node does not depend on how many VMs are declared.
      - A clone is requested on the template's node, with C(target) when the VM goes to another
        node; PVE allows that only when the template's disks are on shared storage, and its
        message ("VM uses local storage") is reported otherwise.
      - An existing VM is never moved; its node is read back, so runs stay idempotent.
    type: str
    choices: [first, spread]
    default: first
  maintenance:
    description:
      - Cluster nodes the operator has taken out of service (the substrate's C(substrate_maintenance)).
      - No new VM is placed on them - O(placement=spread) spreads over the site's other nodes, C(first) takes the
        first node not listed - and an explicit O(node) listed here fails the task when a VM must be created.
      - The module reads C(GET /nodes) first. A VM on a node that is not C(online) fails the task before any write,
        naming the node and the VM, unless the node is listed here; then the VM is left as it is, the others
        converge, and the VM is reported (a warning, RV(vms[].pending_node), RV(pending_nodes)) on every run while its
        node is away. The first run after the node returns converges it. An existing VM is never moved.
      - A clone onto a node that is not C(online), or from a template on such a node, fails the task, naming it.
      - An entry that names no cluster node fails the task.
    type: list
    elements: str
    default: []
  vnet_count:
    description:
      - How many VNets the tenant has (the contract's C(tenant.vnets), O(deevnet.tenant.tenant_vrf#module:vnet_count)),
        1, 2, 4, 8 or 16. It fixes each VNet's share of
        the tenant /24, so the VMs' prefix length and gateways.
    type: int
    default: 1
  vnet:
    description:
      - The VNet (0-based C(n) of C(tn<ii>v<n>), below O(vnet_count)) the VMs' C(net0) is on, unless
        O(vms[].vnet) says otherwise. VM C(k) gets address C(.(9+k)) of that VNet's subnet and its gateway.
      - A VM never changes VNet. An existing VM declared on another VNet of its tenant is refused before
        any write, naming both VNets (its address and records would change under the running guest).
        Rebuild it (O(vms[].state=rebuilt)) to move it.
    type: int
    default: 0
  full:
    description: Full clone instead of a linked clone.
    type: bool
    default: false
  storage:
    description: Target storage of a full clone; must exist on O(node) and hold VM images. Requires O(full=true).
    type: str
  ciuser:
    description: Cloud-init user. Not managed when not given.
    type: str
  cipassword:
    description:
      - Cloud-init password. Never shown in output, diffs or errors.
      - PVE returns it masked (and stores it hashed), so it cannot be compared; it is set when the
        VM has none and never changed afterwards. Prefer O(sshkeys).
    type: str
  sshkeys:
    description:
      - Public SSH keys, one per element (an element may hold several lines). The module encodes
        them the way PVE wants and compares them decoded. Not managed when not given; an empty list clears them.
    type: list
    elements: str
  tags:
    description:
      - Extra tags. The tag C(tenant-<name>) is always added; it marks the owner, and tags starting
        with C(tenant-) that name another tenant are refused. The module owns the tag set, so tags
        added by hand are removed.
    type: list
    elements: str
  description:
    description: VM description. Defaults to one naming the VM's FQDN and tenant.
    type: str
  parallel:
    description:
      - How many VMs converge at once (1..16). PVE clones from a template under a shared lock, so
        clones run side by side; each request holds one of pvedaemon's few workers only briefly.
        The default of 4 hides most of the latency without crowding the node.
    type: int
    default: 4
  timeout:
    description: Seconds to wait for each PVE task (clone, resize, start, stop, destroy).
    type: int
    default: 600
  adopt:
    description:
      - Take over a VM another tool built (for example the Terraform module, see docs/migrate-from-terraform.md)
        that carries no owner tag and sits in no pool.
      - The VM is taken only when it is the plan's VM by identity; its vmid, name and pool (none, or the tenant's)
        must match, and the error lists every field that differs. A template, another tenant's owner tag or pool
        is refused as without I(adopt).
      - It writes only what the plan needs, the pool membership (C(PUT /pools)) and the managed keys that differ
        (owner tag, description, ...). It never destroys, clones, resizes or restarts the VM, so its vmid, MAC and
        disk stay; a plan that would grow the disk is refused. O(state=rebuilt) and O(state=absent) are refused.
      - Run it with a credential that can see the VM (the substrate's), since the tenant's token cannot before the
        VM is in its pool. Once taken over, a run without I(adopt) manages the VM as usual.
    type: bool
    default: false
  planned_vnets:
    description:
      - In check mode only, the VNets an earlier task of the same run would create (role deevnet.tenant.tenant passes
        the ones M(deevnet.tenant.tenant_vrf) reports with C(action=create)); check mode does not create them.
      - A VM whose net0 is on one of them and that does not exist yet is planned as if it did, with a warning saying
        so, instead of refused; without it (and in a real run) a missing VNet refuses the run before any write.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - deevnet.tenant.proxmox
attributes:
  check_mode:
    support: full
    description: Reads and compares only; reports what would change.
  diff_mode:
    support: full
    description: One diff per VM, key by key (secrets masked, sshkeys decoded).
notes:
  - The tenant's pool and VNet are made by onboarding and M(deevnet.tenant.tenant_vrf); this module
    only uses them. A per-tenant API token (the role DeevnetTenantVM and PVEPoolUser on the pool, PVETemplateUser on the
    template, PVEDatastoreUser on the storage, PVESDNUser on the zone; ADR-0013) is enough. The template needs no NIC;
    the module puts net0 on the tenant's VNet.
  - Cloud-init settings reach the guest only through a cloud-init drive; the module warns when the
    VM has none.
  - Changing cores or memory of a running VM may stay pending in PVE until the VM restarts; the
    module says so in a warning and in RV(vms[].pending).
  - States V(absent) and V(rebuilt) stop the VM hard; there is no graceful shutdown.
seealso:
  - module: deevnet.tenant.tenant_plan
  - module: deevnet.tenant.tenant_vrf
'''

EXAMPLES = r'''
- name: Two VMs of tenant tdemo, started, reachable by SSH
  deevnet.tenant.tenant_vm:
    api_host: pve.example.net
    api_user: tenant-tdemo@pve
    api_token_id: iac
    api_token_secret: "{{ vault_tdemo_token }}"
    name: tdemo
    index: 1
    template: debian-12-genericcloud
    cores: 2
    memory: 2048
    disk: 20G
    ciuser: debian
    sshkeys:
      - "{{ lookup('ansible.builtin.file', 'files/ops.pub') }}"
    count: 2

- name: Per-VM settings; VM 3 removed
  deevnet.tenant.tenant_vm:
    name: tdemo
    index: 1
    template: "9000"
    vms:
      - cores: 4
        memory: 4096
      - state: stopped
      - index: 3
        state: absent

- name: Rebuild VM 1 from its template (the drill; always changed)
  deevnet.tenant.tenant_vm:
    name: tdemo
    index: 1
    template: "9000"
    vms:
      - index: 1
        state: rebuilt

- name: Connection set once for the whole play
  hosts: localhost
  module_defaults:
    group/deevnet.tenant.proxmox:
      api_host: pve.example.net
      api_user: tenant-tdemo@pve
      api_token_id: iac
      api_token_secret: "{{ vault_tdemo_token }}"
  tasks:
    - name: Tenant tdemo's VM, checked first
      deevnet.tenant.tenant_vm:
        name: tdemo
        index: 1
        template: "9000"
        count: 1
      check_mode: true
      diff: true
'''

RETURN = r'''
pending_nodes:
  description: The offline nodes in O(maintenance) on which VMs were left as they are (RV(vms[].pending_node)), sorted.
  returned: always
  type: list
  elements: str
  sample: [dv02hyp002p03]
vms:
  description: One entry per declared VM, in declaration order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: VM name from the plan.
      type: str
      sample: tdemo-1
    vmid:
      description: VM id from the plan.
      type: int
      sample: 10101
    node:
      description: Node the VM is on.
      type: str
      sample: dv02hyp002p02
    state:
      description: The state asked for.
      type: str
      sample: started
    changed:
      description: Whether this VM was changed (would be, in check mode).
      type: bool
    actions:
      description: PVE operations done (or, in check mode, that would be done), in order.
      type: list
      elements: str
      sample: [clone, config, resize, start]
    changes:
      description: Config keys changed, with their value before and after (secrets masked).
      type: list
      elements: dict
      sample: [{key: ipconfig0, before: null, after: "ip=10.20.129.10/24,gw=10.20.129.1"}]
    status:
      description: Power status after the run, or C(absent).
      type: str
      sample: running
    mac:
      description: MAC address of net0, kept across runs.
      type: str
      sample: BC:24:11:5E:7A:01
    pending:
      description: Config keys PVE keeps pending until the VM restarts (as read before any write).
      type: list
      elements: str
    warnings:
      description: Warnings about this VM (also reported as module warnings).
      type: list
      elements: str
    pending_node:
      description: The offline node in O(maintenance) the VM was left on, this run; absent otherwise.
      returned: when the VM was left
      type: str
      sample: dv02hyp002p03
    error:
      description: Why this VM failed.
      type: str
      returned: when the VM failed
'''
