# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""The keys of a tenant's declaration that the tenant contract does not know (docs/tenant-contract.md).

The contract's keys are the options of the role deevnet.tenant.tenant's argument spec (its ``tenant``
option, roles/tenant/meta/argument_specs.yml, read from this collection), so this list and the
role's validation never disagree. Ansible's own validation names an unknown key too, but inside the
whole argument spec it prints with the failure; a check before it names the key, where it is, and the
closest valid keys, in one line.
"""

from __future__ import annotations

import difflib
import os

import yaml

_SPEC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     'roles', 'tenant', 'meta', 'argument_specs.yml')


def _tenant_spec():
    with open(_SPEC, encoding='utf-8') as f:
        return yaml.safe_load(f)['argument_specs']['main']['options']['tenant']


def _walk(value, spec, where, out):
    options = spec.get('options')
    if not options:
        return
    if spec.get('type') == 'list':
        if isinstance(value, list):
            for i, item in enumerate(value):
                _walk(item, {'type': 'dict', 'options': options}, '%s[%d]' % (where, i), out)
        return
    if not isinstance(value, dict):
        return  # the wrong type is the role's validation's to name
    valid = sorted(options)
    for key in value:
        if key not in options:
            close = difflib.get_close_matches(str(key), valid, n=3, cutoff=0.6)
            hint = ('; did you mean %s? ' % ' or '.join(close)) if close else ' '
            out.append('%s.%s: not a key of %s%s(its keys: %s)' % (where, key, where, hint, ', '.join(valid)))
        else:
            _walk(value[key], options[key], '%s.%s' % (where, key), out)


def tenant_contract_errors(tenant):
    """One message per key of the declaration the contract does not know; empty when it knows them all."""
    out = []
    _walk(tenant, _tenant_spec(), 'tenant', out)
    return out


class FilterModule:
    def filters(self):
        return {'tenant_contract_errors': tenant_contract_errors}
