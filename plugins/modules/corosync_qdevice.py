# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
# Documentation only: the module is the Go binary built from cmd/tenant_modules (internal/corosync).

from __future__ import annotations

DOCUMENTATION = r'''
module: corosync_qdevice
short_description: The cluster's quorum device in corosync.conf, as pvecm qdevice setup writes it
version_added: 0.2.0
author: deevnet.tenant developers (@deevnet)
description:
  - Makes C(quorum.device) of a Proxmox VE cluster's C(corosync.conf) the QDevice given - C(model net),
    C(votes 1) with the C(ffsplit) algorithm, and C(net) with O(host), O(algorithm) and O(tls) - exactly the section
    C(pvecm qdevice setup) adds (pve-cluster C(PVE/CLI/pvecm.pm)); O(state=absent) removes it, as
    C(pvecm qdevice remove) does.
  - Every other line of the file stays as it was, comments and order included, so the diff is the edit alone.
  - When the file changes, C(totem.config_version) rises by one, as C(PVE::Corosync::atomic_write_conf) raises it
    (corosync refuses an older version on reload), and the file is replaced through C(<path>.new) and a rename.
  - Removes C(quorum.two_node), which votequorum refuses beside a quorum device, and says so.
  - Refuses, naming the field and the rule, before it writes - a file that does not parse (with its line), no
    C(totem.config_version), a C(quorum) section without C(provider corosync_votequorum), a node with more than one vote
    under C(ffsplit), or C(votes) other than 1 with C(ffsplit).
  - It only edits the file. Reloading corosync (C(corosync-cfgtool -R)) and starting C(corosync-qdevice) are the role's
    (C(deevnet.tenant.substrate), entry point C(qdevice)), as are the certificates.
options:
  path:
    description:
      - The corosync.conf to edit. On a PVE node the cluster's copy in C(/etc/pve), which pmxcfs copies to every node's
        C(/etc/corosync/corosync.conf); edit it on one node only.
    type: path
    default: /etc/pve/corosync.conf
  state:
    description: C(present) makes the device the one given; C(absent) removes any.
    type: str
    choices: [present, absent]
    default: present
  host:
    description: The address or DNS name of the host running corosync-qnetd. Required with O(state=present).
    type: str
  algorithm:
    description:
      - C(ffsplit) (fifty-fifty split) gives one vote to the partition with more nodes, or the tie-breaker's, and is
        the one C(pvecm) picks for an even number of nodes; C(lms) (last man standing) gives the partition that still
        sees qnetd all the votes it needs.
    type: str
    choices: [ffsplit, lms]
    default: ffsplit
  votes:
    description: The device's votes. C(ffsplit) needs exactly 1 (the default with it); C(lms) leaves it unset unless given.
    type: int
  tls:
    description: TLS between corosync-qdevice and corosync-qnetd (C(on) as C(pvecm) sets it, C(required), C(off)).
    type: str
    choices: ['on', 'off', required]
    default: 'on'
attributes:
  check_mode:
    support: full
    description: Reads and edits the file in memory, reports the new C(config_version), writes nothing.
  diff_mode:
    support: full
    description: The file before and after.
  platform:
    support: full
    platforms: posix
    description: Runs on a cluster node (the file is local).
notes:
  - Run it on one node of a PVE cluster, as root. A cluster whose nodes keep their own C(corosync.conf) (no pmxcfs)
    needs it on every node, then one C(corosync-cfgtool -R).
seealso:
  - module: deevnet.tenant.substrate_report
  - name: pvecm(1), Corosync External Vote Support
    description: Proxmox VE's QDevice setup.
    link: https://pve.proxmox.com/pve-docs/chapter-pvecm.html#_corosync_external_vote_support
'''

EXAMPLES = r'''
- name: Add the QDevice to the cluster's corosync.conf
  deevnet.tenant.corosync_qdevice:
    host: 10.20.10.1
  run_once: true
  register: qdevice_conf

- name: Reload corosync cluster-wide when it changed
  ansible.builtin.command: corosync-cfgtool -R
  run_once: true
  when: qdevice_conf is changed
  changed_when: true
'''

RETURN = r'''
path:
  description: The file edited.
  returned: success
  type: str
  sample: /etc/pve/corosync.conf
cluster_name:
  description: C(totem.cluster_name), the name the QDevice's cluster certificate is signed for.
  returned: success
  type: str
  sample: dv02
config_version:
  description: C(totem.config_version) after the edit (in check mode, what it would be).
  returned: success
  type: int
  sample: 3
two_node_removed:
  description: C(quorum.two_node) was set and is removed (or would be).
  returned: success
  type: bool
device:
  description: The quorum device the file configures afterwards - C(model), C(host), C(algorithm), C(votes), C(tls); null without one.
  returned: success
  type: dict
  sample: {model: net, host: 10.20.10.1, algorithm: ffsplit, votes: 1, tls: 'on'}
'''
