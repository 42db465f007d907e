#!/usr/bin/env bash
# release.sh --venv DIR --version X.Y.Z  (make release VERSION=X.Y.Z; README.md, Releasing)
# 1. refuses, before changing anything, a version that does not follow the pending fragments
#    (tests/release/check-version.sh --version: the one bump rule);
# 1b. when the version's MAJOR differs from the last release's (changelogs/changelog.yaml), runs the
#    rebuild drill first (the seed: "Run at each module MAJOR tag") and refuses the release, before
#    changing anything, when it fails: $RELEASE_DRILL (make release sets it: the molecule scenario
#    drill on pvesim and the DNS lab, `make test-lifecycle LIFECYCLE_SCENARIOS=drill`: examples/tenant
#    copied, onboarded, applied, verified, destroyed);
# 2. sets galaxy.yml's version and the reference tenant's pins (examples/tenant/requirements.yml,
#    the "pinned to" of examples/tenant/README.md, examples/ee/execution-environment.yml);
# 3. antsibull-changelog release (the fragments become the version's section of
#    changelogs/changelog.yaml and CHANGELOG.rst);
# 4. checks the result with check-version.sh (pins == galaxy.yml) and builds the tarball (make dist).
# The commit is the caller's: `git commit -am "release X.Y.Z"` on main.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
venv='' version='' make=${MAKE:-make}
while [ $# -gt 0 ]; do case $1 in
  --venv) venv=$2; shift 2;;
  --version) version=$2; shift 2;;
  *) echo "usage: $0 --venv DIR --version X.Y.Z" >&2; exit 2;;
esac; done
[ -n "$version" ] || { echo 'release: VERSION=X.Y.Z is required' >&2; exit 2; }
"$root/tests/release/check-version.sh" --venv "$venv" --version "$version" || {
  echo "release: refused $version (README.md, Releasing); nothing changed" >&2; exit 1; }
old=$(sed -n 's/^version: *//p' "$root/galaxy.yml")
last=$(sed -n '/^releases:/,$p' "$root/changelogs/changelog.yaml" | sed -n 's/^  \([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\):$/\1/p' \
  | sort -t. -k1,1n -k2,2n -k3,3n | tail -1)
if [ "${version%%.*}" != "${last%%.*}" ]; then
  drill=${RELEASE_DRILL:-$make -C $root test-lifecycle LIFECYCLE_SCENARIOS=drill}
  echo "release: MAJOR ${last%%.*} -> ${version%%.*}: the rebuild drill first: $drill"
  if ! bash -c "$drill"; then
    echo "release: refused $version: the rebuild drill failed (a MAJOR release needs it green: SEED, docs/releases.md); nothing changed" >&2
    exit 1
  fi
  echo "release: the rebuild drill passed"
fi
cd "$root"; export PATH="$venv/bin:$PATH"
sed -i "s/^version: .*/version: $version/" galaxy.yml
"$venv/bin/python" - "$version" <<'PY'
import re, sys
new = sys.argv[1]
def sub(path, pattern, repl, count):
    s = open(path).read()
    t, n = re.subn(pattern, repl, s)
    if n != count:
        sys.exit('release: %s: expected %d pin(s) to rewrite, found %d' % (path, count, n))
    open(path, 'w').write(t)
# The deevnet.tenant entry's version line (the next line after its name).
sub('examples/tenant/requirements.yml', r'(- name: deevnet\.tenant\n\s+version: )"?[^"\n]*"?', r'\g<1>"%s"' % new, 1)
sub('examples/ee/execution-environment.yml', r'(- name: deevnet\.tenant\n\s+version: )"?[^"\n]*"?', r'\g<1>"%s"' % new, 1)
sub('examples/ee/execution-environment.yml', r'(deevnet-tenant-ee:)[0-9][0-9A-Za-z.+-]*[0-9A-Za-z]', r'\g<1>%s' % new, 1)
sub('examples/tenant/README.md', r'pinned to [0-9][0-9A-Za-z.+-]*[0-9A-Za-z]', 'pinned to %s' % new, 1)
PY
"$venv/bin/antsibull-changelog" release --version "$version" --date "${RELEASE_DATE:-$(date -u +%F)}"
"$root/tests/release/check-version.sh" --venv "$venv"
echo "release: $old -> $version"
"$make" -C "$root" dist VENV="$venv"
