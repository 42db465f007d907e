# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Runs the Go binary of deevnet.tenant.substrate_preflight built for the target's platform (docs in plugins/modules/substrate_preflight.py)."""

from __future__ import annotations

from ansible_collections.deevnet.tenant.plugins.plugin_utils.go_module import GoModuleAction


class ActionModule(GoModuleAction):
    """deevnet.tenant.substrate_preflight: see plugins/plugin_utils/go_module.py and docs/adr/0011-binary-selection.md."""
