# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Attributes of a module that only reads (tenant_verify, tenant_index_info, substrate_report: its own diff_mode wins)."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options: {}
attributes:
  check_mode:
    support: full
    description: The module only reads; check mode runs it unchanged.
  diff_mode:
    support: none
    description: Nothing changes.
'''
