# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Runs the Go binary of deevnet.tenant.corosync_qdevice built for the target's platform (docs in plugins/modules/corosync_qdevice.py)."""

from __future__ import annotations

from ansible_collections.deevnet.tenant.plugins.plugin_utils.go_module import GoModuleAction


class ActionModule(GoModuleAction):
    """deevnet.tenant.corosync_qdevice: see plugins/plugin_utils/go_module.py and docs/adr/0011-binary-selection.md."""
