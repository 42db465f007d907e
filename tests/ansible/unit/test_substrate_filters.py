# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The substrate role's node argument-spec check in Python (plugins/filter/substrate.py, issue 36):
the messages validate_argument_spec gave, looped over the hypervisors, one per host naming it."""

from __future__ import annotations

import importlib.util
import os
import sys
import types

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# substrate.py imports the ipv4 filters by their collection name: give it them from this tree.
for _pkg in ('ansible_collections', 'ansible_collections.deevnet', 'ansible_collections.deevnet.tenant',
             'ansible_collections.deevnet.tenant.plugins', 'ansible_collections.deevnet.tenant.plugins.filter'):
    sys.modules.setdefault(_pkg, types.ModuleType(_pkg))
_load('ansible_collections.deevnet.tenant.plugins.filter.ipv4', os.path.join(ROOT, 'plugins', 'filter', 'ipv4.py'))
sub = _load('dvt_substrate_filter', os.path.join(ROOT, 'plugins', 'filter', 'substrate.py'))

with open(os.path.join(ROOT, 'roles', 'substrate', 'meta', 'argument_specs.yml'), encoding='utf-8') as f:
    SPEC = yaml.safe_load(f)['argument_specs']['node']['options']
SITE = {'network': '10.20.0.0/16', 'overlay': '10.20.128.0/18', 'loopbacks': '10.20.255.0/24', 'zone': 'mobile.deevnet.net',
        'resolver': '10.20.99.1', 'transit_vlan': 50, 'underlay_vlan': 51, 'asn': 65020, 'controller': 'evpnctl', 'fabric': 'ufab',
        'mtu': 1450, 'bridge': 'vmbr0', 'management': '10.20.10.0/24', 'transit': '10.20.50.0/24', 'transit_gateway': '10.20.50.1',
        'underlay': '10.20.51.0/24'}


def node(n, **kw):
    value = {'loopback': '10.20.255.%d' % n, 'management': '10.20.10.%d/24' % n, 'transit': '10.20.50.%d/24' % n,
             'underlay': '10.20.51.%d/24' % n, 'bridge_ports': ['eno1']}
    value.update(kw)
    return value


def errors(hostvars, common=None):
    return sub.substrate_node_spec_errors(list(hostvars), hostvars, SPEC, common or {'substrate_site': SITE, 'substrate_node_local': False})


def test_valid_nodes_give_no_message():
    assert not errors({'p02': {'substrate_node': node(2)}, 'p03': {'substrate_node': node(3)}})


def test_a_missing_key_names_the_host_in_the_validators_words():
    bad = node(3)
    del bad['loopback']
    assert errors({'p02': {'substrate_node': node(2)}, 'p03': {'substrate_node': bad}}) == [
        'p03: Validation of arguments failed: missing required arguments: loopback found in substrate_node']


def test_a_host_without_substrate_node_falls_back_to_the_controllers_as_the_task_did():
    assert errors({'p02': {}}) == ['p02: Validation of arguments failed: missing required arguments: substrate_node']
    assert not errors({'p02': {}}, {'substrate_site': SITE, 'substrate_node': node(2)})


def test_each_host_with_errors_gets_one_message_with_all_its_errors():
    got = errors({'p02': {'substrate_node': node(2, bridge_ports={'eno1': 1})}, 'p03': {'substrate_node': node(3, loopback={'a': 1})},
                  'p04': {'substrate_node': {'bridge_ports': 'eno1'}}})
    # the validator's words after "is of type" differ between ansible-core versions (dict, <class 'dict'>)
    assert got[0].startswith("p02: Validation of arguments failed: argument 'bridge_ports' is of type ")
    assert got[0].endswith(" found in 'substrate_node'. and we were unable to convert to list: <class 'dict'> cannot be converted to a list")
    # a dict converts to str, as validate_argument_spec let it
    assert len(got) == 2
    assert got[1] == 'p04: Validation of arguments failed: missing required arguments: loopback, management, transit, underlay found in substrate_node'


def test_the_controllers_substrate_node_local_is_checked_as_the_task_did():
    got = errors({'p02': {'substrate_node': node(2)}}, {'substrate_site': SITE, 'substrate_node_local': 'maybe'})
    assert len(got) == 1 and got[0].startswith("p02: Validation of arguments failed: argument 'substrate_node_local' is of type")


def test_the_site_and_node_rules_still_hold():
    assert sub.substrate_site_errors(SITE) == []
    assert sub.substrate_node_errors([['p02', node(2)], ['p03', node(3, management='10.20.10.2/24')]], SITE) == [
        'substrate_node.management: two hypervisors have the same address ({"p02": "10.20.10.2", "p03": "10.20.10.2"})']
