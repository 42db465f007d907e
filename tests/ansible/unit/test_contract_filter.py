# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""A declaration's unknown keys (plugins/filter/contract.py; docs/tenant-contract.md)."""

from __future__ import annotations

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_spec = importlib.util.spec_from_file_location('contract', os.path.join(ROOT, 'plugins', 'filter', 'contract.py'))
contract = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(contract)


def decl(**over):
    d = {'name': 'tblue', 'index': 3, 'vnets': 1,
         'vms': {'count': 1, 'cores': 1, 'memory': 1024, 'disk': 8, 'template': 9000},
         'records': [{'name': 'www', 'type': 'CNAME', 'values': ['tblue-1']}]}
    d.update(over)
    return d


def test_the_reference_declaration_has_no_unknown_key():
    assert contract.tenant_contract_errors(decl()) == []


def test_a_typo_is_named_with_the_closest_key_in_one_line():
    d = decl()
    d['vms']['memroy'] = d['vms'].pop('memory')
    (msg,) = contract.tenant_contract_errors(d)
    assert msg.startswith('tenant.vms.memroy: not a key of tenant.vms; did you mean memory? (its keys: cores, count, disk, memory,')
    assert len(msg) < 200  # the keys of its level, not the argument spec


def test_every_level_is_checked_records_too():
    d = decl(vnet=2)
    d['records'][0]['typ'] = d['records'][0].pop('type')
    errors = contract.tenant_contract_errors(d)
    assert 'tenant.vnet: not a key of tenant; did you mean vnets?' in errors[0] or 'tenant.vnet: not a key of tenant; did you mean vnets?' in errors[1]
    assert any(e.startswith('tenant.records[0].typ: not a key of tenant.records[0]; did you mean type?') for e in errors)


def test_a_key_like_none_gets_no_guess():
    (msg,) = contract.tenant_contract_errors(decl(zzzz=1))
    assert msg == 'tenant.zzzz: not a key of tenant (its keys: index, name, records, vms, vnets)'


def test_the_wrong_type_is_left_to_the_role():
    assert contract.tenant_contract_errors(decl(vms=[1, 2])) == []
