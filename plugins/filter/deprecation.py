# Copyright: deevnet.tenant developers
# Apache License 2.0 (see LICENSE)
"""Run-time deprecation warnings for role variables (docs/releases.md, the deprecation rule).

ansible-core validates a role's arguments against meta/argument_specs.yml but prints no warning for
an option marked removed_in_version or for a deprecated alias, as it does for a module's. A role
with such a variable warns through this filter, in a task before any other:

    - name: Warn about deprecated variables (docs/releases.md)
      ansible.builtin.assert:
        that: lookup('ansible.builtin.varnames', '.+', wantlist=True) | deevnet.tenant.role_deprecations('tenant') is sequence
        quiet: true

A deprecated variable has no default in the role's defaults/main.yml (a default would be a variable
set on every run, and warn on every run). tests/release/deprecation.sh checks that every variable an
argument spec marks deprecated warns so.
"""

from __future__ import annotations

import os

import yaml
from ansible.utils.display import Display

_COLLECTION = 'deevnet.tenant'
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def role_deprecations(names, role, entry='main'):
    """Warn (Ansible's DEPRECATION WARNING) for each deprecated variable of the role's entry point that is set; return the messages."""
    path = os.path.join(_ROOT, 'roles', role, 'meta', 'argument_specs.yml')
    with open(path, encoding='utf-8') as f:
        spec = ((yaml.safe_load(f) or {}).get('argument_specs') or {}).get(entry) or {}
    given = set(names or [])
    out = []
    for name, o in (spec.get('options') or {}).items():
        o = o or {}
        due = o.get('removed_in_version')
        if name in given and (due is not None or o.get('removed_at_date') is not None):
            out.append(('role deevnet.tenant.%s: the variable %s is deprecated and leaves in %s (docs/releases.md)'
                        % (role, name, due or o.get('removed_at_date')), due, o.get('removed_at_date')))
        for d in o.get('deprecated_aliases') or []:
            if d.get('name') in given:
                out.append(('role deevnet.tenant.%s: the variable %s is a deprecated alias of %s and leaves in %s (docs/releases.md)'
                            % (role, d['name'], name, d.get('version') or d.get('date')), d.get('version'), d.get('date')))
    collection = _COLLECTION
    for msg, version, date in out:
        # the version or the date the argument spec gives, read at run time (every argument a variable:
        # the sanity test's check of a literal version does not apply)
        version, date = (str(version), None) if version else (None, str(date))
        Display().deprecated(msg, version=version, date=date, collection_name=collection)
    return [entry[0] for entry in out]


class FilterModule:
    def filters(self):
        return {'role_deprecations': role_deprecations}
