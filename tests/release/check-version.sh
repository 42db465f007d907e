#!/usr/bin/env bash
# check-version.sh --venv DIR
# The version bump rule (README.md, Releasing): galaxy.yml's version is SemVer; a change that users
# see adds a fragment to changelogs/fragments; while fragments are pending, galaxy.yml must name a
# version not yet released in changelogs/changelog.yaml and above every released one, and at least
# a minor bump (0.x: also for breaking changes; >= 1.0: breaking_changes/removed_features need a
# major bump). `antsibull-changelog release` then turns the fragments into the release.
# One version: the reference tenant (examples/tenant/requirements.yml, and the pin its README
# quotes) and the example execution environment (examples/ee/execution-environment.yml) install
# the collection galaxy.yml describes, so a release bump updates all four.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv='' proposed=''
while [ $# -gt 0 ]; do case $1 in
  --venv) venv=$2; shift 2;;
  --version) proposed=$2; shift 2;;
  *) echo "usage: $0 --venv DIR [--version X.Y.Z]" >&2; exit 2;;
esac; done
"$venv/bin/python" - "$root" "$proposed" <<'PY'
import glob, os, re, sys, yaml
root, proposed = sys.argv[1], sys.argv[2]
version = proposed or yaml.safe_load(open(os.path.join(root, 'galaxy.yml')))['version']
what = 'version %s' % version if proposed else 'galaxy.yml version %s' % version
if not re.fullmatch(r'(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)', str(version)):
    print('FAIL  %s is not SemVer MAJOR.MINOR.PATCH (README.md, Releasing)' % what)
    sys.exit(1)
released = (yaml.safe_load(open(os.path.join(root, 'changelogs', 'changelog.yaml'))) or {}).get('releases') or {}
fragments = sorted(glob.glob(os.path.join(root, 'changelogs', 'fragments', '*.y*ml')))
def v(s):
    return tuple(int(x) for x in str(s).split('-')[0].split('.'))
sections = set()
for f in fragments:
    sections.update((yaml.safe_load(open(f)) or {}).keys())
errors = []
if proposed and not fragments:
    errors.append('no pending fragments in changelogs/fragments: nothing to release as %s' % version)
if fragments:
    top = max(released, key=v) if released else None
    if version in released:
        errors.append('%s is already released (changelogs/changelog.yaml) but %d fragment(s) are pending: bump it' % (what, len(fragments)))
    elif top and v(version) <= v(top):
        errors.append('%s is not above the last release %s' % (what, top))
    elif top:
        new, old = v(version), v(top)
        breaking = sections & {'breaking_changes', 'removed_features', 'major_changes'}
        feature = sections & {'minor_changes', 'deprecated_features'} or breaking
        if breaking and old[0] >= 1 and new[0] == old[0]:
            errors.append('rule: %s need a major bump from %s (from 1.0 on), got %s' % (sorted(breaking), top, version))
        elif feature and new[:2] == old[:2]:
            errors.append('rule: %s need at least a minor bump from %s (before 1.0 also breaking changes), got %s; a patch bump is for bugfixes only' % (sorted(feature), top, version))
if proposed and fragments and not errors and released:
    # A release is the next version at the level the fragments need (or a higher level): no gaps.
    old = v(max(released, key=v))
    allowed = ['%d.0.0' % (old[0] + 1)]
    if not (breaking and old[0] >= 1):
        allowed.append('%d.%d.0' % (old[0], old[1] + 1))
        if not feature:
            allowed.append('%d.%d.%d' % (old[0], old[1], old[2] + 1))
    if version not in allowed:
        errors.append('rule: the release after %s with these fragments is one of %s (no skipped versions), got %s'
                      % (max(released, key=v), ', '.join(allowed), version))
if proposed:
    for e in errors:
        print('FAIL  ' + e)
    if not errors:
        print('PASS  version %s follows the %d pending fragment(s) (%s) after %s'
              % (version, len(fragments), ', '.join(sorted(sections)), max(released, key=v) if released else '-'))
    sys.exit(1 if errors else 0)
# The reference tenant's pin (a tenant copies it: an older pin installs an older collection).
req = os.path.join('examples', 'tenant', 'requirements.yml')
pins = [c.get('version') for c in (yaml.safe_load(open(os.path.join(root, req))) or {}).get('collections') or []
        if isinstance(c, dict) and c.get('name') == 'deevnet.tenant']
if pins != [version]:
    errors.append('%s pins deevnet.tenant %s, galaxy.yml version is %s: pin exactly %s'
                  % (req, ', '.join(map(str, pins)) or 'nothing', version, version))
# The example execution environment installs the collection from Galaxy at the same version.
ee = os.path.join('examples', 'ee', 'execution-environment.yml')
ee_pins = [c.get('version') for c in ((yaml.safe_load(open(os.path.join(root, ee))) or {}).get('dependencies', {})
                                      .get('galaxy', {}) or {}).get('collections') or []
           if isinstance(c, dict) and c.get('name') == 'deevnet.tenant']
if ee_pins != [version]:
    errors.append('%s installs deevnet.tenant %s, galaxy.yml version is %s: pin exactly %s'
                  % (ee, ', '.join(map(str, ee_pins)) or 'nothing', version, version))
readme = os.path.join('examples', 'tenant', 'README.md')
quoted = re.findall(r'pinned to ([0-9][0-9A-Za-z.+-]*[0-9A-Za-z])', open(os.path.join(root, readme)).read())
if quoted != [version]:
    errors.append('%s says "pinned to %s", galaxy.yml version is %s: say "pinned to %s"'
                  % (readme, ', '.join(quoted) or '(nothing)', version, version))
for e in errors:
    print('FAIL  ' + e)
if not errors:
    print('PASS  galaxy.yml version %s, %d pending fragment(s) (%s), released: %s'
          % (version, len(fragments), ', '.join(sorted(sections)) or '-', ', '.join(sorted(released, key=v)) or '-'))
    print('PASS  %s, %s and %s pin %s' % (req, readme, ee, version))
sys.exit(1 if errors else 0)
PY
