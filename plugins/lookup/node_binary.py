# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The controller path of a binary the collection ships for its nodes, unpacked once."""

from __future__ import annotations

DOCUMENTATION = r"""
name: node_binary
author: deevnet.tenant developers (@deevnet)
version_added: 0.3.0
short_description: the controller path of a binary the collection installs on its nodes
description:
  - Returns the path, on the controller, of a program the collection ships for the nodes it
    runs on, not a module, such as C(envelope_guard), the PVE hookscript the role
    C(deevnet.tenant.substrate) installs on every hypervisor (docs/adr/0014-tenant-envelope.md).
  - The collection ships it xz-compressed as C(plugins/modules/__bin/<name>_<os>_<arch>.xz); the
    lookup unpacks it once into the module binaries' content-addressed cache
    (C($DEEVNET_TENANT_BIN_CACHE), else C(~/.cache/deevnet-tenant/bin)) and returns the unpacked
    file's path, for M(ansible.builtin.copy) to send to the node.
options:
  _terms:
    description: the binary's name, for instance C(envelope_guard)
    required: true
    type: list
    elements: str
  platform:
    description: the node's C(<os>_<arch>) in Go's names; PVE 9 runs on C(linux_amd64) only
    type: str
    default: linux_amd64
"""

EXAMPLES = r"""
- name: Install the envelope guard on a PVE node
  ansible.builtin.copy:
    src: "{{ lookup('deevnet.tenant.node_binary', 'envelope_guard') }}"
    dest: /var/lib/vz/snippets/deevnet-envelope-guard
    mode: "0755"
"""

RETURN = r"""
_raw:
  description: the unpacked binary's path on the controller, one per term
  type: list
  elements: str
"""

import os
import re

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase
from ansible_collections.deevnet.tenant.plugins.plugin_utils.binary_cache import SUFFIX, BinaryCacheError, unpacked

_NAME_RE = re.compile(r'^[a-z][a-z0-9_]*$')
_PLATFORM_RE = re.compile(r'^[a-z0-9]+_[a-z0-9]+$')


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        platform = self.get_option('platform')
        if not _PLATFORM_RE.match(platform):
            raise AnsibleLookupError('node_binary: platform %r is not <os>_<arch> (for instance linux_amd64)' % platform)
        bin_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules', '__bin')
        paths = []
        for name in terms:
            if not _NAME_RE.match(name):
                raise AnsibleLookupError('node_binary: %r is not a binary name (lower case letters, digits, _)' % name)
            src = os.path.join(bin_dir, '%s_%s%s' % (name, platform, SUFFIX))
            if not os.path.exists(src):
                raise AnsibleLookupError('node_binary: the collection ships no %s for %s (%s is missing)' % (name, platform, src))
            try:
                paths.append(unpacked(src))
            except BinaryCacheError as e:
                raise AnsibleLookupError('node_binary: %s' % e) from e
        return paths
