#!/usr/bin/env bash
# run.sh --venv DIR --pvesim BIN --tarball FILE [--from COMMIT]  (make test-upgrade)
# A site converged with the previous release, run with this tree's playbooks (docs/releases.md,
# "What a converged site looks like"):
#   1. the previous release's commit (the rule below) checked out with `git worktree add` into a
#      temporary directory, its tarball built there (its own `make collection`, linux/amd64 only,
#      with this tree's venv) and installed into a private collections directory; this tree's
#      tarball (FILE) into another;
#   2. pvesim, PowerDNS and Unbound on 127.0.0.1 (extensions/molecule/shared/lab.sh, stopped by PID
#      at exit); with the OLD collection: onboard, fabric and tenant for tdemo and tother, verify
#      both (the site report), then tdemo's own repository (the old tree's examples/tenant copied,
#      its attachment file and declaration, site.yml) as a tenant runs it;
#   3. with the NEW collection on the same state: onboard, fabric, tenant and verify for both, then
#      the tenant's repository again; then it asserts:
#      - no write to PVE: pvesim's /_sim/stats, by "METHOD /route", counted over the new runs;
#      - no DNS change: every zone's SOA serial (dig @127.0.0.1) and record sets (PowerDNS API);
#      - no VM restarted: each VM's start time (now - uptime, /cluster/resources) and state;
#      - the site report identical but for its "Generated <time>" line and the checks' times.
#   A write an upgrade must make is listed in tests/upgrade/expected-writes.yml under the version
#   that makes it, with the changelog text that announces it; the test names each one it sees and
#   fails on any write not listed (naming it) and on a listed one not seen.
# The previous release (tests/release/last-release-commit.sh, the rule): the last version in this
# tree's changelogs/changelog.yaml; its commit is the oldest commit of HEAD's history whose
# changelogs/changelog.yaml has that version's section line ("  X.Y.Z:"), the commit `make release`
# and `git commit -m "release X.Y.Z"` made. In a shallow clone without it: git fetch --unshallow
# origin, else the test FAILS naming the version; it never skips. The commit may be HEAD itself:
# the whole old -> new flow runs all the same (two worktrees, two tarballs, two collections).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv='' pvesim='' tarball='' from=''
while [ $# -gt 0 ]; do case $1 in
  --venv) venv=$2; shift 2;; --pvesim) pvesim=$2; shift 2;; --tarball) tarball=$2; shift 2;;
  --from) from=$2; shift 2;;
  *) echo "usage: $0 --venv DIR --pvesim BIN --tarball FILE [--from COMMIT]" >&2; exit 2;;
esac; done
venv=$(cd "$venv" && pwd); pvesim=$(realpath "$pvesim"); tarball=$(realpath "$tarball"); t0=$(date +%s)
[ -x "$venv/bin/ansible-playbook" ] || { echo "FAIL  no ansible-playbook in $venv (make venv)"; exit 1; }
[ -f "$tarball" ] || { echo "FAIL  no tarball $tarball (make collection)"; exit 1; }
fail=0
pass(){ echo "PASS  $*"; }
secs(){ echo $(( $(date +%s) - t0 ))s; }

# 1. The previous release's commit (the rule: tests/release/last-release-commit.sh).
line=$("$root/tests/release/last-release-commit.sh" --root "$root") || { echo "FAIL  the previous release's commit: see above"; exit 1; }
prev=${line%% *}
[ -n "$from" ] || from=${line#* }
from=$(git -C "$root" rev-parse --verify "$from^{commit}")
head=$(git -C "$root" rev-parse HEAD)
new_version=$(sed -n 's/^version: *//p' "$root/galaxy.yml")
echo "upgrade: from release $prev (commit ${from:0:12}$([ "$from" = "$head" ] && echo ', HEAD itself')) to this tree (galaxy.yml $new_version, HEAD ${head:0:12})"

tmp=$(mktemp -d /tmp/dvt-upgrade.XXXXXX)
lab=$tmp/lab old=$tmp/old
# shellcheck disable=SC2317  # run by the trap
cleanup(){
  MOLECULE_SCENARIO_NAME=upgrade PVESIM=$pvesim "$root/extensions/molecule/shared/lab.sh" down "$lab" >/dev/null 2>&1 || true
  git -C "$root" worktree remove --force "$old" >/dev/null 2>&1 || true
  if [ -n "${DVT_UPGRADE_KEEP:-}" ]; then echo "upgrade: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# The old tree and its tarball: its own make collection, for linux/amd64 (this machine) only. The
# venv is this tree's; the old Makefile must not rebuild it (-o: the stamp is taken as up to date).
git -C "$root" worktree add -q --detach "$old" "$from"
old_version=$(sed -n 's/^version: *//p' "$old/galaxy.yml")
if ! make -s -C "$old" -o "$venv/.stamp" collection VENV="$venv" MODULE_PLATFORMS=linux/amd64 \
     COLLECTIONS_DIR="$tmp/unused" > "$tmp/old-build.log" 2>&1; then
  tail -20 "$tmp/old-build.log"; echo "FAIL  make collection in the release $prev tree ($from)"; exit 1
fi
old_tarball=$old/dist/deevnet-tenant-$old_version.tar.gz
# No ansible.cfg of the caller's (this checkout's makes it deevnet.tenant, and ansible-galaxy would
# then find the collection "already installed"); only the private collections directories.
printf '[defaults]\n' > "$tmp/ansible.cfg"; export ANSIBLE_CONFIG=$tmp/ansible.cfg
for side in old new; do
  tb=$old_tarball; [ $side = new ] && tb=$tarball
  "$venv/bin/ansible-galaxy" collection install --force -p "$tmp/coll-$side" "$tb" > "$tmp/install-$side.log" 2>&1 \
    || { cat "$tmp/install-$side.log"; echo "FAIL  ansible-galaxy collection install $tb"; exit 1; }
done
pass "1. release $prev built in a worktree of ${from:0:12} ($(basename "$old_tarball")) and installed beside this tree's $(basename "$tarball") ($(secs))"

# 2. The lab and the site, converged with the old collection.
export MOLECULE_SCENARIO_NAME=upgrade PVESIM=$pvesim ANSIBLE_FORCE_COLOR=0 ANSIBLE_NOCOLOR=1
export ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_HOME=$tmp/ansible-home
"$root/extensions/molecule/shared/lab.sh" up "$lab" > "$tmp/lab.log" 2>&1 || { cat "$tmp/lab.log"; echo "FAIL  lab up"; exit 1; }
shared=$root/extensions/molecule/shared
url=$(sed -n 's/^pvesim_url: //p' "$lab/substrate.yml")
# Credentials stay in 0600 files handed to curl (-H @file): never on a command line or in the output.
(umask 077
 "$venv/bin/python" - "$lab" > "$tmp/pve.hdr" <<'PY'
import json, sys
t = json.load(open(sys.argv[1] + '/pvesim-token.json'))
print('Authorization: PVEAPIToken=root@pam!sim=%s' % t['api_token_secret'])
PY
 echo "X-API-Key: $(sed -n '/^substrate_pdns:/,/^[a-z]/s/^  api_key: //p' "$lab/substrate.yml")" > "$tmp/pdns.hdr")
pdns_api=$(sed -n '/^substrate_pdns:/,/^[a-z]/s/^  api_url: //p' "$lab/substrate.yml")
pdns_port=$(sed -n '/^substrate_pdns:/,/^[a-z]/s/^  port: //p' "$lab/substrate.yml")
sim(){ curl -sf --cacert "$lab/pvesim-ca.pem" "$@"; }

play(){ # side name playbook [extra args]
  local side=$1 name=$2 pb=$3 t; shift 3; t=$(date +%s)
  if ANSIBLE_COLLECTIONS_PATH=$tmp/coll-$side "$venv/bin/ansible-playbook" -i "$shared/inventory" -i "$shared/guard" \
       -e lab_dir="$lab" "$@" "$pb" > "$tmp/$side-$name.log" 2>&1; then
    echo "      $side: $name ($(( $(date +%s) - t ))s): $(grep -E '^localhost +:' "$tmp/$side-$name.log" | tail -1 | sed 's/  */ /g')"
  else
    tail -40 "$tmp/$side-$name.log"; echo "FAIL  $side collection: $name ($pb), log above"; exit 1
  fi
}
# tdemo's own repository, run as a tenant runs it: its attachment file, its declaration, the
# collection installed for it, `ansible-playbook site.yml`. The repository is the one the tenant made
# from the release the site ran (the old tree's examples/tenant), kept as it is when the collection
# is upgraded: an upgrade does not rewrite a tenant's repository (this tree's example may use what only
# this release has; test-guide runs it).
tenant_repo(){ # side
  local side=$1 dir=$tmp/deevnet-tenant-tdemo
  rm -rf "$dir"; cp -r "$old/examples/tenant" "$dir"
  cp "$lab/attachments/tdemo.yml" "$dir/attachment.yml"; cp "$shared/tdemo.yml" "$dir/tenant.yml"
  if (cd "$dir" && ANSIBLE_COLLECTIONS_PATH=$tmp/coll-$side "$venv/bin/ansible-playbook" -i localhost, \
        -e ansible_python_interpreter="$venv/bin/python" site.yml) > "$tmp/$side-tenant-repo.log" 2>&1; then
    echo "      $side: tenant repository tdemo: $(grep -E '^localhost +:' "$tmp/$side-tenant-repo.log" | tail -1 | sed 's/  */ /g')"
  else
    tail -40 "$tmp/$side-tenant-repo.log"; echo "FAIL  $side collection: tdemo's own repository (site.yml)"; exit 1
  fi
}
# One ansible-playbook run for the site (the molecule scenarios' playbooks, imported in turn: onboard
# tdemo, fabric, tenant tdemo, onboard tother, tenant tother, verify both), its startup paid once.
cat > "$tmp/site.yml" <<Y
---
- name: Onboard tdemo, converge the fabric and tdemo
  ansible.builtin.import_playbook: $shared/converge-tdemo.yml
- name: Onboard and converge tother
  ansible.builtin.import_playbook: $shared/converge-tother.yml
- name: Verify both (the site report)
  ansible.builtin.import_playbook: $shared/verify-both.yml
Y
site(){ # side
  play "$1" "onboard, fabric, tenant, verify" "$tmp/site.yml" -e lifecycle_shared_dir="$shared"
  report=$(sed -n 's/.*"msg": "site report: \([^ ]*\) .*/\1/p' "$tmp/$1-onboard, fabric, tenant, verify.log" | tail -1)
  [ -f "$report" ] || { echo "FAIL  $1: verify wrote no site report"; exit 1; }
  cp "$report" "$tmp/$1-report.md"
}
snapshot(){ # file: every VM's state and start time, every zone's serial and record sets
  "$venv/bin/python" - "$tmp" "$url" "$pdns_api" "$pdns_port" "$lab" > "$1" <<'PY'
import json, ssl, subprocess, sys, time, urllib.request
tmp, url, api, port, lab = sys.argv[1:]
out = {'vms': {}, 'zones': {}}
ctx = ssl.create_default_context(cafile=lab + '/pvesim-ca.pem')
auth = open(tmp + '/pve.hdr').read().split(':', 1)[1].strip()
def pve(path):
    return json.load(urllib.request.urlopen(urllib.request.Request(url + '/api2/json' + path, headers={'Authorization': auth}),
                                            context=ctx))['data']
# Each VM's state and start time (now - its uptime, GET .../status/current): a restart moves it.
for vm in pve('/cluster/resources?type=vm'):
    cur = pve('/nodes/%s/qemu/%d/status/current' % (vm['node'], vm['vmid']))
    out['vms'][vm['name']] = {'vmid': vm['vmid'], 'node': vm['node'], 'status': cur['status'],
                              'started': int(time.time()) - int(cur.get('uptime') or 0) if cur['status'] == 'running' else None}
key = open(tmp + '/pdns.hdr').read().split(':', 1)[1].strip()
zones = json.load(urllib.request.urlopen(urllib.request.Request(api + '/api/v1/servers/localhost/zones', headers={'X-API-Key': key})))
for z in zones:
    name = z['name']
    req = urllib.request.Request(api + '/api/v1/servers/localhost/zones/' + name, headers={'X-API-Key': key})
    rr = json.load(urllib.request.urlopen(req))['rrsets']
    soa = subprocess.run(['dig', '@127.0.0.1', '-p', port, '+short', '+norecurse', 'SOA', name],
                         capture_output=True, text=True, check=True).stdout.split()
    out['zones'][name] = {'serial': int(soa[2]) if len(soa) > 2 else None,
                          'rrsets': sorted((r['name'], r['type'], r['ttl'], sorted(x['content'] for x in r['records']))
                                           for r in rr)}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
PY
}

echo "upgrade: the site with release $prev's collection"
site old
tenant_repo old
snapshot "$tmp/before.json"
pass "2. tdemo and tother onboarded, converged and verified, tdemo's own repository run, with release $prev ($(secs)): $(
  "$venv/bin/python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%d VMs, %d zones" % (len(d["vms"]), len(d["zones"])))' "$tmp/before.json")"
sim -X POST "$url/_sim/stats/reset" >/dev/null

# 3. The same state with this tree's collection.
echo "upgrade: the same site with this tree's collection ($new_version)"
site new
sim "$url/_sim/stats" > "$tmp/stats-site.json"
sim -X POST "$url/_sim/stats/reset" >/dev/null
tenant_repo new
sim "$url/_sim/stats" > "$tmp/stats-tenant.json"
snapshot "$tmp/after.json"

"$venv/bin/python" - "$tmp" "$here/expected-writes.yml" "$root" "$prev" "$new_version" <<'PY' || fail=1
import difflib, glob, json, os, re, sys, yaml
tmp, listing, root, prev, new = sys.argv[1:]
def v(s):
    return tuple(int(x) for x in str(s).split('.'))
bad = []
# The writes an upgrade from prev to new is expected to make: the versions after prev up to new.
released = yaml.safe_load(open(os.path.join(root, 'changelogs', 'changelog.yaml')))['releases']
def changelog_text(version):
    if version in released:
        ch = released[version].get('changes') or {}
        return ' '.join(' '.join(ch.get(s) or []) for s in ('minor_changes', 'breaking_changes', 'major_changes'))
    text = []
    for f in glob.glob(os.path.join(root, 'changelogs', 'fragments', '*.y*ml')):
        d = yaml.safe_load(open(f)) or {}
        for s in ('minor_changes', 'breaking_changes', 'major_changes'):
            text.extend(d.get(s) or [])
    return ' '.join(text)
expected = {}
for version, entries in ((yaml.safe_load(open(listing)) or {}).get('releases') or {}).items():
    if not (v(prev) < v(version) <= v(new)):
        continue
    for e in entries or []:
        text = ' '.join(str(e.get('changelog', '')).split())
        if not text or text not in ' '.join(changelog_text(version).split()):
            bad.append('tests/upgrade/expected-writes.yml: %s: %r is announced by no minor_changes/breaking_changes/major_changes '
                       'entry of %s\'s changelog (a write an upgrade makes is named in the changelog, docs/releases.md)'
                       % (version, e.get('write'), version))
        expected[e['write']] = (version, text)
seen = {}
stats = {p: json.load(open(os.path.join(tmp, 'stats-%s.json' % p)))['data'] for p in ('site', 'tenant')}
for phase, st in stats.items():
    # A write PVE accepted, by route; a refused one (verify's isolation probes: a tenant's token
    # trying the other tenant's pool) changed nothing and is only counted.
    for route, n in sorted((st.get('accepted_writes') or {}).items()):
        seen.setdefault(route, []).append('%d by %s' % (n, 'onboard/fabric/tenant/verify' if phase == 'site' else "the tenant's repository"))
before, after = (json.load(open(os.path.join(tmp, f))) for f in ('before.json', 'after.json'))
for z in sorted(set(before['zones']) | set(after['zones'])):
    b, a = before['zones'].get(z), after['zones'].get(z)
    if b != a:
        what = []
        if (b or {}).get('serial') != (a or {}).get('serial'):
            what.append('SOA serial %s -> %s' % ((b or {}).get('serial'), (a or {}).get('serial')))
        if (b or {}).get('rrsets') != (a or {}).get('rrsets'):
            rb, ra = set(map(json.dumps, (b or {}).get('rrsets') or [])), set(map(json.dumps, (a or {}).get('rrsets') or []))
            what.append('record sets -%s +%s' % (sorted(rb - ra), sorted(ra - rb)))
        seen.setdefault('DNS %s' % z, []).append('; '.join(what))
for name in sorted(set(before['vms']) | set(after['vms'])):
    b, a = before['vms'].get(name), after['vms'].get(name)
    if b is None or a is None or b['status'] != a['status'] or b['vmid'] != a['vmid'] or b['node'] != a['node'] \
       or (b['started'] is not None and a['started'] is not None and abs(b['started'] - a['started']) > 2):
        seen.setdefault('VM %s' % name, []).append('%s -> %s' % (b, a))
for w in sorted(seen):
    if w in expected:
        print('PASS  3. expected write %s (listed for %s: "%s"): %s' % (w, expected[w][0], expected[w][1][:80], ', '.join(seen[w])))
    else:
        bad.append('unexpected write on upgrade: %s: %s (not in tests/upgrade/expected-writes.yml for a version after %s)'
                   % (w, ', '.join(seen[w]), prev))
for w in sorted(set(expected) - set(seen) - {'report'}):
    bad.append('tests/upgrade/expected-writes.yml lists %s for %s, but the upgrade did not make it: remove it' % (w, expected[w][0]))
sa, tn = stats['site'], stats['tenant']
print('      PVE requests with the new collection: onboard/fabric/tenant/verify %d (writes accepted %d, refused %d), '
      "the tenant's repository %d (writes accepted %d, refused %d)"
      % (sum(sa['requests'].values()), sa['writes_accepted'], sa['writes'] - sa['writes_accepted'],
         sum(tn['requests'].values()), tn['writes_accepted'], tn['writes'] - tn['writes_accepted']))
if not [w for w in seen if w.split(' ')[0] in ('POST', 'PUT', 'DELETE')]:
    print('PASS  3. no write to PVE: 0 accepted POST/PUT/DELETE in %d requests (pvesim /_sim/stats; %d refused: '
          "verify's isolation probes)" % (sum(sa['requests'].values()) + sum(tn['requests'].values()),
                                           sa['writes'] - sa['writes_accepted'] + tn['writes'] - tn['writes_accepted']))
if not [w for w in seen if w.startswith('DNS ')]:
    print('PASS  3. no DNS change: SOA serials and record sets of %d zones unchanged (%s)'
          % (len(after['zones']), ', '.join('%s %s' % (z, after['zones'][z]['serial']) for z in sorted(after['zones']))))
if not [w for w in seen if w.startswith('VM ')]:
    print('PASS  3. no VM restarted: %d VMs, same state and start time (%s)'
          % (len(after['vms']), ', '.join('%s %s' % (n, after['vms'][n]['status']) for n in sorted(after['vms']))))
# The site report, but for its "Generated <time>" line and the time each check ran.
stamp = re.compile(r'[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z')
strip = lambda p: [stamp.sub('<time>', l) for l in open(p).read().splitlines() if not l.startswith('Generated ')]
o, n = strip(os.path.join(tmp, 'old-report.md')), strip(os.path.join(tmp, 'new-report.md'))
diff = '\n'.join(list(difflib.unified_diff(o, n, 'old', 'new', lineterm='', n=1))[:40])
if o == n:
    print('PASS  3. the site report is identical but for its Generated line (%d lines)' % len(n))
elif 'report' in expected:
    print('PASS  3. expected change of the site report (listed for %s: "%s"):\n%s' % (expected['report'][0], expected['report'][1][:80], diff))
else:
    bad.append('the site report differs (old -> new; not in tests/upgrade/expected-writes.yml as "report"):\n' + diff)
for b in bad:
    print('FAIL  3. ' + b)
sys.exit(1 if bad else 0)
PY
echo "test-upgrade: $prev (${from:0:12}) -> $new_version in $(secs)"
exit $fail
