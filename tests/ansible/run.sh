#!/usr/bin/env bash
# run.sh --venv DIR --collections DIR [--linux-only 'MODULE ...'] [--lint]
# Tests the installed deevnet.tenant collection with the ansible-core of one venv (make test-ansible
# calls it for the newest and for the oldest admitted): ansible-lint (--lint), ansible-doc on every
# module and --list, the action plugin's unit tests, and the playbooks under playbooks/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv= coll= lint=0 linux_only=
while [ $# -gt 0 ]; do
  case $1 in
    --venv) venv=$2; shift 2;; --collections) coll=$2; shift 2;; --lint) lint=1; shift;;
    --linux-only) linux_only=$2; shift 2;;
    *) echo "usage: $0 --venv DIR --collections DIR [--linux-only 'MODULE ...'] [--lint]" >&2; exit 2;;
  esac
done
[ -x "$venv/bin/ansible-playbook" ] || { echo "no ansible-playbook in $venv (make venv / venv-oldest)" >&2; exit 1; }
inst=$coll/ansible_collections/deevnet/tenant
[ -f "$inst/MANIFEST.json" ] || { echo "deevnet.tenant is not installed in $coll (make install-collection)" >&2; exit 1; }

# Only the installed tarball: no user or system collections, no ansible.cfg from the caller's cwd.
export ANSIBLE_COLLECTIONS_PATH=$coll ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_HOME=${ANSIBLE_HOME:-$root/.ansible/home}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
printf '[defaults]\n' >"$work/ansible.cfg"; export ANSIBLE_CONFIG=$work/ansible.cfg
version=$("$venv/bin/python" -c 'from ansible.release import __version__; print(__version__)')
pass=0 fail=0
ok(){ pass=$((pass+1)); echo "PASS  [$version] $*"; }
ko(){ fail=$((fail+1)); echo "FAIL  [$version] $*"; }

if [ $lint = 1 ]; then
  # As from a fresh clone, with no environment: the repo's ansible.cfg makes the checkout resolve
  # as deevnet.tenant (module_defaults groups included); .ansible-lint sets offline and the profile.
  if (cd "$root" && env -u ANSIBLE_COLLECTIONS_PATH -u ANSIBLE_COLLECTIONS_SCAN_SYS_PATH -u ANSIBLE_CONFIG \
        "$venv/bin/ansible-lint" -q) >"$work/lint.log" 2>&1; then ok "ansible-lint clean (no environment set)"
  else cat "$work/lint.log"; ko "ansible-lint"; fi
fi

# The tarball ships doc stubs and __bin/ only: a plain binary beside its stub hides the module from --list.
extra=$(cd "$inst/plugins/modules" && ls -A | grep -vE '\.py$|^__bin$' || true)
if [ -z "$extra" ]; then ok "plugins/modules holds only doc stubs and __bin/"; else ko "unexpected files in plugins/modules: $extra"; fi

mods=$(cd "$inst/plugins/modules" && ls *.py | sed 's/\.py$//' | sort)
# Without an action plugin of its name a module's .py doc stub would be run as if it were the module.
unrouted=
for m in $mods; do
  grep -q '^class ActionModule(GoModuleAction):' "$inst/plugins/action/$m.py" 2>/dev/null || unrouted="$unrouted $m"
done
if [ -z "$unrouted" ]; then ok "every module has its action plugin plugins/action/<m>.py (GoModuleAction)"
else ko "modules without plugins/action/<m>.py subclassing GoModuleAction:$unrouted"; fi
for m in $mods; do
  if "$venv/bin/ansible-doc" -t module "deevnet.tenant.$m" >"$work/doc.out" 2>"$work/doc.err" && [ ! -s "$work/doc.err" ] \
     && grep -q "deevnet.tenant.$m" "$work/doc.out"; then ok "ansible-doc deevnet.tenant.$m"
  else cat "$work/doc.err"; ko "ansible-doc deevnet.tenant.$m"; fi
  plats="linux_amd64 linux_arm64 darwin_amd64 darwin_arm64"
  case " $linux_only " in *" $m "*) plats="linux_amd64 linux_arm64";; esac
  missing=
  # Its own binary (transit_route) or the multi-call one, xz-compressed; test_docs_match_spec runs
  # each module in it, the playbooks through the action plugin, which unpacks it.
  for p in $plats; do
    [ -f "$inst/plugins/modules/__bin/${m}_$p.xz" ] || [ -f "$inst/plugins/modules/__bin/tenant_modules_$p.xz" ] || missing="$missing ${m}_$p.xz"
  done
  if [ -z "$missing" ]; then ok "binaries of $m for $plats"; else ko "missing in the tarball's plugins/modules/__bin:$missing"; fi
done
"$venv/bin/ansible-doc" -t module --list deevnet.tenant >"$work/list.out" 2>"$work/list.err" || true
listed=$(awk '{print $1}' "$work/list.out" | sed 's/^deevnet\.tenant\.//' | sort)
if [ "$listed" = "$mods" ] && [ ! -s "$work/list.err" ]; then ok "ansible-doc --list deevnet.tenant lists each of $(echo $mods | wc -w) modules once"
else echo "listed:"; cat "$work/list.out" "$work/list.err"; echo "expected: $mods"; ko "ansible-doc --list deevnet.tenant"; fi

if (cd "$root" && "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/ansible/unit) >"$work/pytest.log" 2>&1; then
  ok "pytest tests/ansible/unit: $(tail -1 "$work/pytest.log")"
else cat "$work/pytest.log"; ko "pytest tests/ansible/unit"; fi

# tenant_plan and the no_log check. -vvv so that every result and invocation is printed and searched.
secret="dvt-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
if DVT_TEST_SECRET=$secret "$venv/bin/ansible-playbook" -vvv -i "$here/inventory.yml" -l localhost \
     "$here/playbooks/tenant_plan.yml" >"$work/plan.log" 2>&1; then ok "playbooks/tenant_plan.yml"
else tail -40 "$work/plan.log"; ko "playbooks/tenant_plan.yml"; fi
if ! grep -q 'TASK \[A PVE module with its token secret' "$work/plan.log"; then ko "the no_log check did not run"
elif grep -q "$secret" "$work/plan.log"; then grep -n "$secret" "$work/plan.log" | sed "s/$secret/<SECRET>/g" | head; ko "the no_log secret appears in the output"
else ok "the no_log secret appears nowhere in the -vvv output ($(wc -l <"$work/plan.log") lines)"; fi

# The attachment file's format at the tenant role (docs/releases.md): refused before any module runs.
if "$venv/bin/ansible-playbook" -i "$here/inventory.yml" -l localhost "$here/playbooks/attachment_format.yml" >"$work/att.log" 2>&1 \
   && grep -q 'failed=0' "$work/att.log" && [ "$(grep -c 'Refused at the format check' "$work/att.log")" = 4 ]; then
  ok "playbooks/attachment_format.yml: 4 bad attachment files refused before any module, 0.1.0's read"
else tail -40 "$work/att.log"; ko "playbooks/attachment_format.yml"; fi

case "$(uname -sm)" in
  "Linux x86_64") plat=linux_amd64;; "Linux aarch64") plat=linux_arm64;;
  "Darwin x86_64") plat=darwin_amd64;; "Darwin arm64") plat=darwin_arm64;; *) plat=unknown;;
esac
: >"$work/uname.log"
if DVT_UNAME_LOG=$work/uname.log DVT_REMOTE_TMP=$work/remote_tmp "$venv/bin/ansible-playbook" -i "$here/inventory.yml" -e expected_platform=$plat \
     "$here/playbooks/action_plugin.yml" >"$work/action.log" 2>&1; then ok "playbooks/action_plugin.yml"
else tail -40 "$work/action.log"; ko "playbooks/action_plugin.yml"; fi
if [ "$(sort "$work/uname.log" | tr '\n' ' ')" = "dvt-a dvt-b " ]; then ok "uname -sm ran once per remote host for 4 module tasks each"
else echo "uname calls: $(tr '\n' ' ' <"$work/uname.log")"; ko "uname -sm once per host"; fi

echo "ansible-core $version"; echo "test-ansible: $pass passed, $fail failed"
[ $fail = 0 ]
