"""deprecation.py OLD NEW: the deprecation rule (docs/releases.md) between two trees.

OLD is the last release's tree (tests/release/deprecation.sh extracts it from its commit), NEW the
current one. Every role variable (roles/*/meta/argument_specs.yml, each entry point, suboptions
as a.b) and every module option (plugins/modules/*.py DOCUMENTATION with its doc fragments), and
every alias of either, that OLD has and NEW lacks must

  1. have been announced in OLD: the option marked removed_in_version (or removed_at_date), or the
     alias listed in its option's deprecated_aliases;
  2. leave no earlier than announced: removed_in_version <= galaxy.yml's version in NEW;
  3. be named (the option's or alias's name) in a pending removed_features fragment of NEW.

Prints PASS/FAIL lines; exits 1 on any FAIL. With --deprecated it prints, one per line as JSON, every
role variable NEW marks deprecated (for the run-time check of deprecation.sh) and fails on a module
option NEW marks deprecated: the Go modules (internal/module) emit no deprecation for an option yet,
so a module option cannot be deprecated as the rule demands until they do.
"""

from __future__ import annotations

import ast
import glob
import json
import os
import sys

import yaml


def v(s):
    return tuple(int(x) for x in str(s).split('.'))


def flatten(options, prefix=''):
    """{path: option} for options and their suboptions."""
    out = {}
    for name, o in (options or {}).items():
        o = o or {}
        out[prefix + name] = o
        out.update(flatten(o.get('options'), prefix + name + '.'))
    return out


def role_options(tree):
    out = {}
    for f in sorted(glob.glob(os.path.join(tree, 'roles', '*', 'meta', 'argument_specs.yml'))):
        role = f.split(os.sep)[-3]
        specs = (yaml.safe_load(open(f)) or {}).get('argument_specs') or {}
        for entry, spec in specs.items():
            for path, o in flatten((spec or {}).get('options')).items():
                out[('role %s (entry point %s)' % (role, entry), path)] = o
    return out


def _doc_string(path, var='DOCUMENTATION'):
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == var for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _fragment(tree, name):
    # a fragment of this collection: 'proxmox', 'deevnet.tenant.proxmox' or 'deevnet.tenant.proxmox.VAR'
    short = name[len('deevnet.tenant.'):] if name.startswith('deevnet.tenant.') else name
    base, var = (short.split('.', 1) + [''])[:2]
    path = os.path.join(tree, 'plugins', 'doc_fragments', base + '.py')
    if not os.path.exists(path):
        return {}
    tree_ = ast.parse(open(path).read())
    for node in ast.walk(tree_):
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                if isinstance(st, ast.Assign) and any(getattr(t, 'id', None) == (var.upper() or 'DOCUMENTATION') for t in st.targets):
                    return yaml.safe_load(ast.literal_eval(st.value)) or {}
    return {}


def module_options(tree):
    out = {}
    for f in sorted(glob.glob(os.path.join(tree, 'plugins', 'modules', '*.py'))):
        mod = os.path.basename(f)[:-3]
        doc = yaml.safe_load(_doc_string(f) or '') or {}
        options = dict(doc.get('options') or {})
        frags = doc.get('extends_documentation_fragment') or []
        for fr in [frags] if isinstance(frags, str) else frags:
            for k, o in (_fragment(tree, fr).get('options') or {}).items():
                options.setdefault(k, o)
        for path, o in flatten(options).items():
            out[('module deevnet.tenant.%s' % mod, path)] = o
    return out


def names(options):
    """{(owner, parent path, name): (option path, option, is_alias)} for options and their aliases."""
    out = {}
    for (owner, path), o in options.items():
        parent, leaf = (path.rsplit('.', 1) if '.' in path else ['', path])
        out[(owner, parent, leaf)] = (path, o, False)
        for a in o.get('aliases') or []:
            out[(owner, parent, a)] = (path, o, True)
    return out


def removed_fragments(tree):
    text = []
    for f in sorted(glob.glob(os.path.join(tree, 'changelogs', 'fragments', '*.y*ml'))):
        for entry in (yaml.safe_load(open(f)) or {}).get('removed_features') or []:
            text.append((os.path.basename(f), str(entry)))
    return text


def check(old, new):
    version = str(yaml.safe_load(open(os.path.join(new, 'galaxy.yml')))['version'])
    bad, good = [], []
    frags = removed_fragments(new)
    for kind, get in (('role variable', role_options), ('module option', module_options)):
        o_names, n_names = names(get(old)), names(get(new))
        for key in sorted(set(o_names) - set(n_names)):
            owner, parent, name = key
            path, o, alias = o_names[key]
            full = (parent + '.' if parent else '') + name
            what = '%s: %s %s%s' % (owner, kind, full, ' (alias of %s)' % path if alias else '')
            if alias:
                dep = [d for d in o.get('deprecated_aliases') or [] if d.get('name') == name]
                due = dep[0].get('version') if dep else None
                marked = bool(dep)
                how = 'deprecated_aliases'
            else:
                due = o.get('removed_in_version')
                marked = due is not None or o.get('removed_at_date') is not None
                how = 'removed_in_version'
            if not marked:
                bad.append('%s was removed without deprecation: the last release did not mark it (%s) - rule: it leaves only '
                           'after a release that announced it (docs/releases.md, the deprecation rule)' % (what, how))
                continue
            if due is not None and v(version) < v(due):
                bad.append('%s was removed in %s, before %s=%s announced - rule: it leaves at the earliest in the version '
                           'announced' % (what, version, how, due))
                continue
            named = [f for f, text in frags if name in text]
            if not named:
                bad.append('%s was removed with no removed_features fragment naming %s in changelogs/fragments - rule: a '
                           'removal is announced in the changelog (and forces the bump)' % (what, name))
                continue
            good.append('%s removed after %s=%s, announced in %s' % (what, how, due, ', '.join(named)))
    return bad, good


def dummy(o):
    """A value of the option's type that its argument spec accepts (required suboptions filled)."""
    if o.get('choices'):
        return o['choices'][0]
    t = o.get('type', 'str')
    if t == 'dict':
        return {k: dummy(s or {}) for k, s in (o.get('options') or {}).items() if (s or {}).get('required')}
    return {'bool': True, 'int': 1, 'float': 1.0, 'list': [], 'path': '/nonexistent', 'raw': 'x'}.get(t, 'x')


def _specs(tree):
    out = {}
    for f in sorted(glob.glob(os.path.join(tree, 'roles', '*', 'meta', 'argument_specs.yml'))):
        for entry, spec in ((yaml.safe_load(open(f)) or {}).get('argument_specs') or {}).items():
            out[(f.split(os.sep)[-3], entry)] = (spec or {}).get('options') or {}
    return out


def deprecated_now(new):
    """Each deprecated role variable with the variables to run its entry point with: every required one and it."""
    roles, modules = [], []
    for (role, entry), options in _specs(new).items():
        owner = 'role %s (entry point %s)' % (role, entry)
        required = {k: dummy(o or {}) for k, o in options.items() if (o or {}).get('required')}
        for path, o in flatten(options).items():
            marked = o.get('removed_in_version') is not None or o.get('removed_at_date') is not None
            prefix = path.rsplit('.', 1)[0] + '.' if '.' in path else ''
            names = ([path] if marked else []) + [prefix + d['name'] for d in o.get('deprecated_aliases') or []]
            for name in names:
                roles.append({'owner': owner, 'role': role, 'entry': entry, 'name': name,
                              'vars': dict(required, **{name: dummy(o)})})
    for (owner, path), o in module_options(new).items():
        if o.get('removed_in_version') is not None or o.get('removed_at_date') is not None or o.get('deprecated_aliases'):
            modules.append('%s: option %s' % (owner, path))
    return roles, modules


def main():
    args = sys.argv[1:]
    if args and args[0] == '--deprecated':
        roles, modules = deprecated_now(args[1])
        for r in roles:
            print(json.dumps(r))
        for m in modules:
            print('FAIL  %s is marked deprecated, but the Go modules emit no deprecation for an option (internal/module): '
                  'rule - what is deprecated warns at run time; add it to internal/module first' % m, file=sys.stderr)
        sys.exit(1 if modules else 0)
    old, new = args
    bad, good = check(old, new)
    for g in good:
        print('PASS  ' + g)
    for b in bad:
        print('FAIL  ' + b)
    if not bad:
        print('PASS  every role variable and module option of the last release (%d, %d) is still there or left behind its '
              'deprecation' % (len(role_options(old)), len(module_options(old))))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
