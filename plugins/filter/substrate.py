# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The substrate role's address rules, and its hypervisors' argument spec, evaluated in Python.

The same rules as Jinja loops in the role's asserts cost 0.07-0.17 s more each on every
playbook run (issue 29; docs/dev/performance.md), and a looped validate_argument_spec task
~0.085 s (issue 36). Each message is the one the Jinja or the task gave, word for word
(tests/contract/substrate.yml).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.filter.core import to_json
from ansible_collections.deevnet.tenant.plugins.filter.ipv4 import ipv4_in, ipv4_overlaps, ipv4_subnet_of, ipv4_valid

_ADDRESSES = [('network', 'prefix'), ('overlay', 'prefix'), ('loopbacks', 'prefix'), ('management', 'prefix'),
              ('transit', 'prefix'), ('underlay', 'prefix'), ('resolver', 'address'), ('transit_gateway', 'address')]
_PREFIXES = ['overlay', 'loopbacks', 'management', 'transit', 'underlay']
_BRIDGE = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')


def substrate_site_errors(site):
    """Every broken address, prefix and bridge rule of substrate_site, in the order the role checks them."""
    errors = []
    for key, kind in _ADDRESSES:
        if not ipv4_valid(site[key], kind):
            errors.append('substrate_site.%s %s must be an IPv4 %s' % (
                key, to_json(site[key]), 'prefix without host bits, such as 10.20.0.0/16' if kind == 'prefix' else 'address, such as 10.20.50.1'))
    if not errors:  # the prefix rules need valid prefixes
        for key in _PREFIXES:
            if not ipv4_subnet_of(site[key], site['network']):
                errors.append('substrate_site.%s %s must lie inside substrate_site.network %s' % (key, site[key], site['network']))
        for a, b in itertools.combinations(_PREFIXES, 2):
            if ipv4_overlaps(site[a], site[b]):
                errors.append('substrate_site.%s %s overlaps substrate_site.%s %s' % (a, site[a], b, site[b]))
        if not ipv4_in(site['transit_gateway'], site['transit']):
            errors.append('substrate_site.transit_gateway %s must lie in substrate_site.transit %s (the next hop is on-link)' % (
                site['transit_gateway'], site['transit']))
    bridge = str(site['bridge'])
    if not _BRIDGE.match(bridge) or any(len('%s.%s' % (bridge, site[v])) > 15 for v in ('transit_vlan', 'underlay_vlan')):
        errors.append('substrate_site.bridge %s must be an interface name (letters, digits, _) that leaves room for .<vlan> in 15 characters'
                      % to_json(site['bridge']))
    return errors


def _node_ok(node, site, net):
    return (ipv4_valid(node['loopback'], 'address') and ipv4_in(node['loopback'], site['loopbacks'])
            and ipv4_valid(node[net], 'host') and ipv4_in(node[net], site[net])
            and node[net].split('/')[-1] == site[net].split('/')[-1]
            and (net != 'transit' or node['transit'].split('/')[0] != site['transit_gateway'])
            and len(node['bridge_ports']) > 0)


def substrate_node_errors(nodes, site):
    """Every broken rule of the hypervisors' substrate_node against the site and each other.

    nodes: [host, substrate_node] pairs in the group's order (their types checked by the node spec).
    """
    errors = []
    for host, node in nodes:
        for net in ('management', 'transit', 'underlay'):
            if not _node_ok(node, site, net):
                errors.append('%s: substrate_node.%s %s must be an address/length in substrate_site.%s %s (same length, not the gateway),'
                              ' substrate_node.loopback %s an address in substrate_site.loopbacks %s, substrate_node.bridge_ports not empty'
                              % (host, net, node.get(net, ''), net, site[net], node['loopback'], site['loopbacks']))
    if not errors:  # the addresses are valid: compare them
        for key in ('loopback', 'management', 'transit', 'underlay'):
            addrs = [pair[1][key].split('/')[0] for pair in nodes]
            if len(set(addrs)) != len(addrs):
                errors.append('substrate_node.%s: two hypervisors have the same address (%s)' % (
                    key, to_json(dict(zip([pair[0] for pair in nodes], addrs)))))
    return errors


def _plain(value):
    """value as plain dicts, lists and strings. ansible-core 2.19+ hands a filter lazily templated
    containers, which the validator's copies and walks template again at each access: 0.13-0.38 s per
    host and call on 2.21, the merged check 1.08 s instead of 0.14 s (issue 36)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def substrate_node_spec_errors(hosts, hostvars, spec, common):
    """Each hypervisor's substrate_node against the role's node argument spec, as validate_argument_spec checked it.

    hosts: the group's inventory names; hostvars: Ansible's hostvars; spec: the node entry point's options;
    common: the controller's values of the spec's arguments (the task's variables validate_argument_spec also
    read: substrate_site, and substrate_node or substrate_node_local when the controller has them). A host's own
    substrate_node replaces the controller's. Returns one message per host with errors, naming it, in the
    validator's words (ansible.module_utils.common.arg_spec, what the action plugin runs).
    """
    validator = ArgumentSpecValidator(_plain(spec))
    common = _plain(common)
    errors = []
    for host in hosts:
        arguments = dict(common)
        host_vars = hostvars[host]
        if 'substrate_node' in host_vars:
            arguments['substrate_node'] = _plain(host_vars['substrate_node'])
        messages = validator.validate(arguments, validate_role_argument_spec=True).error_messages
        if messages:
            errors.append('%s: Validation of arguments failed: %s' % (host, '; '.join(messages)))
    return errors


class FilterModule:
    def filters(self):
        return {'substrate_site_errors': substrate_site_errors, 'substrate_node_errors': substrate_node_errors,
                'substrate_node_spec_errors': substrate_node_spec_errors}
