# Test-only connection plugin: runs commands on this machine like ansible.builtin.local, but is not
# the local connection, so the go_module action plugin takes its remote path (one `uname -sm` over
# the connection, cached as the deevnet_tenant_platform fact). Each uname is logged to
# $DVT_UNAME_LOG so the test can count them.
from __future__ import annotations

DOCUMENTATION = """
    name: dvt_remote
    short_description: test-only stand-in for a remote connection (runs locally)
    description:
        - Like ansible.builtin.local, under another name. For deevnet.tenant's tests only.
    author: deevnet.tenant developers
    options:
        become_success_timeout:
            type: int
            default: 10
            description: As for ansible.builtin.local.
            vars:
                - name: ansible_local_become_success_timeout
        become_strip_preamble:
            type: bool
            default: true
            description: As for ansible.builtin.local.
            vars:
                - name: ansible_local_become_strip_preamble
    extends_documentation_fragment:
        - connection_pipelining
"""

import os

from ansible.plugins.connection.local import Connection as LocalConnection


class Connection(LocalConnection):

    transport = 'dvt_remote'

    def exec_command(self, cmd, in_data=None, sudoable=True):
        if 'uname -sm' in cmd and os.environ.get('DVT_UNAME_LOG'):
            with open(os.environ['DVT_UNAME_LOG'], 'a') as f:
                f.write('%s\n' % self._play_context.remote_addr)
        return super(Connection, self).exec_command(cmd, in_data=in_data, sudoable=sudoable)
