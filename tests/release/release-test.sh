#!/usr/bin/env bash
# release-test.sh --venv DIR  (make test-release)
# `make release` on a scratch copy of the tree (the tracked and unignored files, plus the built
# binaries so nothing is recompiled needlessly), with one fragment of its own (minor_changes) so the
# test does not depend on what is pending today:
#   a. a patch bump of the last release is refused, the message names the rule, and no file in
#      the copy changed (checksums of every file before and after);
#   c. the next major with a rebuild drill that fails (RELEASE_DRILL=false) is refused before any
#      change, naming the drill (a new MAJOR runs the drill first, scripts/release.sh; the real drill,
#      the molecule scenario drill, runs in CI in make test-lifecycle);
#   b. the next major (every pin changes) with a drill that passes (RELEASE_DRILL: a command that
#      leaves a mark) runs the drill, then succeeds: changelogs/changelog.yaml has the version with the fragment's
#      text, CHANGELOG.rst has its section, the fragments are gone, galaxy.yml and the three pins
#      say the version (check-version.sh passes), dist/deevnet-tenant-<v>.tar.gz exists and its
#      MANIFEST.json says the version.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv=''
while [ $# -gt 0 ]; do case $1 in --venv) venv=$2; shift 2;; *) echo "usage: $0 --venv DIR" >&2; exit 2;; esac; done
venv=$(cd "$venv" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
copy=$tmp/tree; mkdir -p "$copy"
git -C "$root" ls-files -co --exclude-standard -z | (cd "$root" && tar --null -T - -cf -) | tar -C "$copy" -xf -
for d in bin plugins/modules/__bin; do [ -d "$root/$d" ] && mkdir -p "$copy/$d" && cp -a "$root/$d/." "$copy/$d/"; done
cat > "$copy/changelogs/fragments/99-release-test.yml" <<'Y'
---
minor_changes:
  - release-test - a feature only the release test's scratch copy has.
Y
read -r top patch next < <("$venv/bin/python" - "$copy" <<'PY'
import os, sys, yaml
rel = (yaml.safe_load(open(os.path.join(sys.argv[1], 'changelogs', 'changelog.yaml'))) or {}).get('releases') or {}
t = max(rel, key=lambda s: tuple(int(x) for x in s.split('.')))
a, b, c = (int(x) for x in t.split('.'))
print(t, '%d.%d.%d' % (a, b, c + 1), '%d.0.0' % (a + 1))
PY
)
fail=0
sums() { (cd "$copy" && find . -type f ! -path './.git/*' -print0 | sort -z | xargs -0 sha256sum); }
# refused LABEL WHAT PATTERN MAKEVAR...: make release with MAKEVARs must fail, saying PATTERN, and
# change no file of the copy
refused() {
  local label=$1 what=$2 pattern=$3; shift 3
  if make -s -C "$copy" release VENV="$venv" "$@" > "$tmp/$label.out" 2>&1; then
    echo "FAIL  $label. make release $* ($what) succeeded"; fail=1
  elif ! grep -q "$pattern" "$tmp/$label.out"; then
    echo "FAIL  $label. make release $* ($what) refused without saying why:"; sed 's/^/      /' "$tmp/$label.out"; fail=1
  else
    echo "PASS  $label. make release $* ($what) refused: $(grep -m1 "$pattern" "$tmp/$label.out")"
  fi
  sums > "$tmp/after-$label"
  if diff "$tmp/before" "$tmp/after-$label" > "$tmp/$label.diff"; then
    echo "PASS  $label. no file changed by the refused release ($(wc -l < "$tmp/before") files)"
  else
    echo "FAIL  $label. the refused release changed files:"; sed 's/^/      /' "$tmp/$label.diff"; fail=1
  fi
}
sums > "$tmp/before"
# a. a version the fragments do not allow
refused a "patch after $top with a minor_changes fragment" "FAIL  rule: \['minor_changes'\] need at least a minor bump" VERSION="$patch"
# c. a new MAJOR whose rebuild drill fails
refused c "MAJOR $top -> $next with a failing rebuild drill" "release: refused $next: the rebuild drill failed" VERSION="$next" RELEASE_DRILL=false
# b. the right version (the next major: every pin and the version differ from today's), its drill passing
if ! make -s -C "$copy" release VERSION="$next" VENV="$venv" RELEASE_DATE=2026-12-31 \
     RELEASE_DRILL="touch $tmp/drill-ran" > "$tmp/b.out" 2>&1; then
  echo "FAIL  b. make release VERSION=$next failed:"; tail -20 "$tmp/b.out" | sed 's/^/      /'; exit 1
fi
if [ -f "$tmp/drill-ran" ] && grep -q "release: the rebuild drill passed" "$tmp/b.out"; then
  echo "PASS  b. the MAJOR release ran the rebuild drill first ($(grep -m1 -o 'MAJOR [0-9]* -> [0-9]*: the rebuild drill first' "$tmp/b.out"))"
else
  echo "FAIL  b. the MAJOR release $next did not run the rebuild drill:"; sed 's/^/      /' "$tmp/b.out"; fail=1
fi
"$venv/bin/python" - "$copy" "$next" <<'PY' || fail=1
import glob, json, os, sys, tarfile, yaml
root, v = sys.argv[1:]
bad = []
rel = yaml.safe_load(open(os.path.join(root, 'changelogs', 'changelog.yaml')))['releases']
entry = rel.get(v) or {}
if 'a feature only the release test' not in ' '.join((entry.get('changes') or {}).get('minor_changes') or []):
    bad.append('changelogs/changelog.yaml has no %s with the fragment in minor_changes' % v)
if str(entry.get('release_date')) != '2026-12-31':
    bad.append('release_date of %s is %r' % (v, entry.get('release_date')))
rst = open(os.path.join(root, 'CHANGELOG.rst')).read()
if 'v%s\n' % v not in rst or 'a feature only the release test' not in rst:
    bad.append('CHANGELOG.rst has no v%s section with the fragment' % v)
left = glob.glob(os.path.join(root, 'changelogs', 'fragments', '*.y*ml'))
if left:
    bad.append('fragments left after the release: %s' % ', '.join(map(os.path.basename, left)))
if str(yaml.safe_load(open(os.path.join(root, 'galaxy.yml')))['version']) != v:
    bad.append('galaxy.yml version is not %s' % v)
tb = os.path.join(root, 'dist', 'deevnet-tenant-%s.tar.gz' % v)
if not os.path.exists(tb):
    bad.append('no %s' % tb)
else:
    with tarfile.open(tb) as t:
        m = json.load(t.extractfile('MANIFEST.json'))
    if m['collection_info']['version'] != v:
        bad.append('%s MANIFEST.json says %s' % (tb, m['collection_info']['version']))
for b in bad:
    print('FAIL  b. ' + b)
if not bad:
    print('PASS  b. %s: changelog.yaml and CHANGELOG.rst section, fragments consumed, galaxy.yml, dist/deevnet-tenant-%s.tar.gz (MANIFEST.json %s)' % (v, v, v))
sys.exit(1 if bad else 0)
PY
if "$copy/tests/release/check-version.sh" --venv "$venv" > "$tmp/b.pins" 2>&1; then
  echo "PASS  b. pins after the release: $(tail -1 "$tmp/b.pins" | cut -c7-)"
else
  echo "FAIL  b. pins after the release:"; sed 's/^/      /' "$tmp/b.pins"; fail=1
fi
exit $fail
