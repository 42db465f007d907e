# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/transit_route.

from __future__ import annotations

DOCUMENTATION = r'''
module: transit_route
short_description: Converge the hypervisor's tenant egress routes and forwarding over netlink (ADR-0003)
version_added: 0.1.0
author: deevnet.tenant developers (@deevnet)
description:
  - Tenant egress goes through the perimeter, not through Proxmox EVPN exit nodes (ADR-0003). On the
    hypervisor that takes four things, all of which this module converges over rtnetlink in the network
    namespace it runs in - the hypervisor's own default route on the transit interface, a default route
    inside each tenant VRF toward the transit next hop, the return routes from the main table into the
    tenant VRFs, and IPv4 forwarding on named interfaces.
  - A route's identity is its table, destination and metric. A declared route replaces whatever route holds
    that identity, whoever installed it (this is how the default route moves off the management segment);
    the diff and RV(route_changes) name the route taken over.
  - Every route the module writes carries its own route protocol number, C(221) (C(0xdd)), shown as
    C(proto 221) by C(ip route). O(exclusive=true) deletes only routes with that mark that are no longer
    declared, never a route installed by the kernel, ifupdown2, FRR or an administrator.
  - Everything is checked before anything is written - a missing VRF or device, a table name that is not a
    VRF, a gateway with no connected route (through the given device) - and the failure names the field
    (for example C(routes[2].table)) and the rule.
  - Routes set over netlink vanish at a reboot and at the C(ifreload -a) that a PVE SDN apply runs.
    O(persist=true) writes an ifupdown2 hook that re-installs them; see O(persist_path) and
    C(docs/adr/0003-egress-persistence.md).
options:
  routes:
    description: The routes to converge.
    type: list
    elements: dict
    default: []
    suboptions:
      dest:
        description:
          - Destination. C(default) (C(0.0.0.0/0)), C(default6) (C(::/0)), a CIDR with no host bits set, or an
            address (a host route).
        type: str
        required: true
        aliases: [dst, destination]
      gateway:
        description:
          - Next hop. It must be on-link - covered by a connected route on O(routes[].device) when a device is
            given, else reachable without another gateway from the route's table.
          - Without a gateway the route is a device route (scope link), as the return route into a VRF is.
        type: str
        aliases: [via, gw]
      device:
        description:
          - Outgoing interface, for example the transit interface C(vmbr0.50) or a VRF device C(vrf_tn01)
            for a return route. Required when O(routes[].gateway) is not given.
          - Interface names may contain letters, digits and C(_ . - @) (at most 15 characters).
        type: str
        aliases: [dev]
      metric:
        description: Route metric (priority); part of the route's identity.
        type: int
        default: 0
      table:
        description:
          - C(main), a table number, or the name of a VRF device whose table is used (read from the device;
            PVE names an EVPN zone's VRF C(vrf_<zone>)).
          - With O(state=present) the VRF must exist; with O(state=absent) a missing VRF means there is
            nothing to remove.
        type: str
        default: main
        aliases: [vrf]
  state:
    description:
      - C(present) installs O(routes) and turns forwarding on for O(forwarding).
      - C(absent) removes O(routes) (matched by table, dest and metric) when this module owns them; a
        route at that identity installed by someone else is left alone with a warning. Forwarding is never
        turned off (other traffic may need it). With O(persist=true) the hook file is removed.
    type: str
    default: present
    choices: [present, absent]
  exclusive:
    description:
      - Also delete every route, in any table, that carries this module's protocol mark (C(221)) and is not
        in O(routes). Only with O(state=present). Give the complete set in one task when using it.
    type: bool
    default: false
  forwarding:
    description:
      - Interfaces on which C(net.ipv4.conf.<if>.forwarding) must be C(1). IPv4 forwards according to the
        interface a packet arrives on, so list the transit interface and the tenant-facing ones.
    type: list
    elements: str
    default: []
  persist:
    description:
      - Write O(persist_path), a shell hook that ifupdown2 runs after it brings up an interface (at boot,
        C(ifup), C(ifreload -a)). When the interface is one the routes use (the device, the VRF, a forwarding
        interface), the hook re-runs C(ip route replace ... proto 221) for every route (VRF tables by
        C(vrf <name>), so a re-numbered table still works) and re-enables forwarding.
      - The hook holds exactly this task's routes, so one O(persist_path) belongs to one task.
      - With O(persist=false) an existing hook file is left as it is.
    type: bool
    default: false
  persist_path:
    description: Where the hook is written (mode 0755, atomically). Tests point it at a temporary directory.
    type: path
    default: /etc/network/if-up.d/deevnet-transit-route
  ifupdown2_conf:
    description:
      - The ifupdown2 configuration read to warn when C(addon_scripts_support=1) is missing, in which case
        ifupdown2 would not run the hook.
    type: path
    default: /etc/network/ifupdown2/ifupdown2.conf
attributes:
  check_mode:
    support: full
    description: Reads the kernel and the hook file, reports what would change, writes nothing.
  diff_mode:
    support: full
    description:
      - The routes this module owns plus any route at a declared identity, before and after, rendered like
        C(ip route) with VRF tables by name, and the forwarding state of each listed interface.
      - With O(persist=true), a second diff shows the hook file before and after.
  platform:
    support: full
    platforms: linux
    description: Runs on the Linux hypervisor (netlink); its binary is built for linux/amd64 and linux/arm64 only.
notes:
  - Runs on the hypervisor (as root, needs C(CAP_NET_ADMIN)) and acts on the network namespace it is started in.
  - A second run with the same arguments reports C(changed=false) and writes nothing.
  - The module is a static Go binary of about 3 MB (no Proxmox API client, no DNS library in it).
  - C(ip route) shows the owned routes with C(ip route show table all proto 221).
seealso:
  - name: ADR-0003 egress persistence
    description: How the routes survive a reboot and an SDN apply.
    link: https://github.com/deevnet/tenant/blob/main/docs/adr/0003-egress-persistence.md
'''

EXAMPLES = r'''
- name: Tenant egress through the perimeter (ADR-0003)
  deevnet.tenant.transit_route:
    routes:
      # the hypervisor's own default route moves off the management segment onto transit (VLAN 50)
      - dest: default
        gateway: 10.20.50.1
        device: vmbr0.50
      # a default route inside each tenant VRF toward the transit next hop
      - dest: default
        gateway: 10.20.50.1
        device: vmbr0.50
        table: vrf_tn01
      # the return route from the main table into the tenant VRF
      - dest: 10.20.129.0/24
        device: vrf_tn01
    forwarding: [vmbr0.50, tn01v0]
    exclusive: true
    persist: true

- name: Remove one tenant's routes (the VRF may already be gone)
  deevnet.tenant.transit_route:
    state: absent
    routes:
      - dest: default
        table: vrf_tn02
      - dest: 10.20.130.0/24
'''

RETURN = r'''
routes:
  description: After the run (or, in check mode, after the changes it would make), the routes this module owns
    plus any route at a declared identity, rendered like C(ip route), sorted. Foreign routes carry C(proto <name>).
  returned: success
  type: list
  elements: str
  sample:
    - 10.20.129.0/24 dev vrf_tn01 table main metric 0
    - default via 10.20.50.1 dev vmbr0.50 table main metric 0
    - default via 10.20.50.1 dev vmbr0.50 table vrf_tn01 metric 0
route_changes:
  description: The route writes done (or, in check mode, planned).
  returned: success
  type: list
  elements: dict
  contains:
    op:
      description: C(add), C(replace) or C(delete).
      type: str
    route:
      description: The route written or deleted.
      type: str
    reason:
      description: Why, for a replace or an exclusive delete (for example the route taken over).
      type: str
      returned: when there is one
  sample:
    - op: replace
      route: default via 10.20.50.1 dev vmbr0.50 table main metric 0
      reason: takes over "default via 192.168.10.1 dev vmbr0 table main metric 0 proto boot"
forwarding_enabled:
  description: Interfaces on which forwarding was (or would be) turned on.
  returned: success
  type: list
  elements: str
  sample: [vmbr0.50]
persist_path:
  description: The hook file.
  returned: when O(persist=true)
  type: str
  sample: /etc/network/if-up.d/deevnet-transit-route
persist_changed:
  description: Whether the hook file was (or would be) written or removed.
  returned: when O(persist=true)
  type: bool
'''
