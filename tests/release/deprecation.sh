#!/usr/bin/env bash
# deprecation.sh --venv DIR  (make test-release)
# The deprecation rule (docs/releases.md), as Ansible collections keep it:
#   a. the last release's tree (tests/release/last-release-commit.sh: its commit, git archive)
#      against this tree (tests/release/deprecation.py): every role variable, module option and
#      alias of the last release that this tree lacks was marked removed_in_version /
#      deprecated_aliases in that release, leaves no earlier than announced, and is named by a pending
#      removed_features fragment;
#   b. every variable this tree's argument specs mark deprecated warns at run time: the role is run
#      with it set (roles/<role> entry point, the tree as the collection) and Ansible's DEPRECATION
#      WARNING must name it; a module option marked deprecated fails (the Go modules emit none yet);
#   c. the checks themselves, on scratch copies of this tree: an option removed without deprecation
#      (a role variable and a module option) fails naming it; removed after removed_in_version with a
#      removed_features fragment passes; a role variable marked deprecated without the warning task
#      fails b, with the task (deevnet.tenant.role_deprecations) passes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv=
while [ $# -gt 0 ]; do case $1 in --venv) venv=$2; shift 2;; *) echo "usage: $0 --venv DIR" >&2; exit 2;; esac; done
venv=$(cd "$venv" && pwd)
tmp=$(mktemp -d); trap 'if [ -n "${DVT_KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi' EXIT
py=$venv/bin/python
fail=0
ok(){ echo "PASS  $*"; }
ko(){ echo "FAIL  $*"; fail=1; }
printf '[defaults]\n' > "$tmp/ansible.cfg"
export ANSIBLE_CONFIG=$tmp/ansible.cfg ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
export ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_HOME=$tmp/ansible-home ANSIBLE_DEPRECATION_WARNINGS=1

# b's run-time check for one tree: each deprecated role variable set, the role's entry point run.
runtime(){ # tree label
  local tree=$1 label=$2 n=0 coll line owner name role entry
  coll=$tmp/coll-$label; mkdir -p "$coll/ansible_collections/deevnet"; ln -sfn "$tree" "$coll/ansible_collections/deevnet/tenant"
  "$py" "$here/deprecation.py" --deprecated "$tree" > "$tmp/$label.deprecated" 2> "$tmp/$label.modules" || { cat "$tmp/$label.modules"; return 1; }
  while IFS= read -r line; do
    get(){ "$py" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$line" "$1"; }
    owner=$(get owner); name=$(get name); role=$(get role); entry=$(get entry)
    case $name in *.*) echo "FAIL  $owner: $name is a suboption marked deprecated: only a role's own variables can warn (deprecation.py)"; return 1;; esac
    # every required variable of the entry point with a value of its type, so that the role's
    # argument validation passes and its first task runs, and the deprecated one set
    "$py" -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["vars"]))' "$line" > "$tmp/vars.json"
    n=$((n+1))
    cat > "$tmp/run.yml" <<Y
---
- name: Run the role with a deprecated variable set
  hosts: localhost
  gather_facts: false
  tasks:
    - name: The role's entry point
      ansible.builtin.include_role:
        name: deevnet.tenant.$role
        tasks_from: $entry
Y
    ANSIBLE_COLLECTIONS_PATH=$coll "$venv/bin/ansible-playbook" -i localhost, -c local -e @"$tmp/vars.json" "$tmp/run.yml" > "$tmp/run.log" 2>&1 || true
    if tr '\n' ' ' < "$tmp/run.log" | grep -q "DEPRECATION WARNING.*role deevnet.tenant.$role: the variable $name "; then
      echo "PASS  b. $owner: $name set warns at run time: $(grep -m1 -o "the variable $name [^(]*" "$tmp/run.log")"
    else
      echo "FAIL  b. $owner: $name is marked deprecated in meta/argument_specs.yml but running the role with it set prints no DEPRECATION WARNING naming it - rule: what is deprecated warns at run time (call deevnet.tenant.role_deprecations in the role's first task, docs/releases.md)"
      return 1
    fi
  done < "$tmp/$label.deprecated"
  echo "      $label: $n deprecated role variable(s) checked at run time"
}

# a. the last release against this tree
line=$("$here/last-release-commit.sh" --root "$root") || { ko "a. the last release's commit (see above)"; exit 1; }
prev=${line%% *}; commit=${line#* }
mkdir -p "$tmp/old"; git -C "$root" archive "$commit" | tar -x -C "$tmp/old"
if "$py" "$here/deprecation.py" "$tmp/old" "$root" > "$tmp/a.out"; then
  sed 's/^PASS  /PASS  a. /' "$tmp/a.out" | sed "s/the last release /release $prev (${commit:0:12}) /"
else sed 's/^/      /' "$tmp/a.out"; ko "a. release $prev (${commit:0:12}) -> this tree breaks the deprecation rule"; fi

# b. what this tree marks deprecated warns
if runtime "$root" tree > "$tmp/b.out" 2>&1; then cat "$tmp/b.out"; ok "b. every deprecated role variable of this tree warns at run time; no module option is marked deprecated"
else cat "$tmp/b.out"; ko "b. a deprecated variable or option does not warn at run time"; fi

# c. the checks, seen failing and passing on scratch copies
copy(){ mkdir -p "$1"; git -C "$root" ls-files -co --exclude-standard -z -- roles plugins galaxy.yml changelogs meta \
  | (cd "$root" && tar --null -T - -cf -) | tar -C "$1" -xf -; }
copy "$tmp/base"
edit(){ "$py" - "$@" <<'PY'
import sys, yaml
path, how = sys.argv[1], sys.argv[2]
d = yaml.safe_load(open(path))
opts = d['argument_specs']['main']['options']
if how == 'drop':
    del opts['tenant_take_over']
elif how == 'deprecate':
    opts['tenant_take_over']['removed_in_version'] = sys.argv[3]
yaml.safe_dump(d, open(path, 'w'), sort_keys=False)
PY
}
spec=roles/tenant/meta/argument_specs.yml
version=$(sed -n 's/^version: *//p' "$root/galaxy.yml")
# c1: a role variable removed without deprecation
cp -a "$tmp/base" "$tmp/c1"; edit "$tmp/c1/$spec" drop
if "$py" "$here/deprecation.py" "$tmp/base" "$tmp/c1" > "$tmp/c1.out"; then ko "c1. tenant_take_over removed without deprecation passed"
elif grep -q "FAIL  role tenant (entry point main): role variable tenant_take_over was removed without deprecation" "$tmp/c1.out"; then
  ok "c1. a role variable removed without deprecation fails: $(grep -m1 FAIL "$tmp/c1.out" | cut -c7- | cut -c1-160)"
else cat "$tmp/c1.out"; ko "c1. the failure does not name tenant_take_over and the rule"; fi
# c2: a module option removed without deprecation (tenant_plan's vm_vnet from its doc stub)
cp -a "$tmp/base" "$tmp/c2"
"$py" - "$tmp/c2/plugins/modules/tenant_plan.py" <<'PY'
import re, sys
p = sys.argv[1]; s = open(p).read()
s2 = re.sub(r'\n  vm_vnet:\n(    .*\n)+', '\n', s, count=1)
assert s2 != s, 'no vm_vnet in tenant_plan.py'
open(p, 'w').write(s2)
PY
if "$py" "$here/deprecation.py" "$tmp/base" "$tmp/c2" > "$tmp/c2.out"; then ko "c2. tenant_plan's vm_vnet removed without deprecation passed"
elif grep -q "FAIL  module deevnet.tenant.tenant_plan: module option vm_vnet was removed without deprecation" "$tmp/c2.out"; then
  ok "c2. a module option removed without deprecation fails: $(grep -m1 FAIL "$tmp/c2.out" | cut -c7- | cut -c1-160)"
else cat "$tmp/c2.out"; ko "c2. the failure does not name vm_vnet and the rule"; fi
# c3: announced in the "release" (removed_in_version), removed with a removed_features fragment: passes;
#     without the fragment: fails naming it
cp -a "$tmp/base" "$tmp/c3old"; edit "$tmp/c3old/$spec" deprecate "$version"
cp -a "$tmp/base" "$tmp/c3"; edit "$tmp/c3/$spec" drop
if "$py" "$here/deprecation.py" "$tmp/c3old" "$tmp/c3" > "$tmp/c3a.out"; then ko "c3. removed without a removed_features fragment passed"
elif grep -q "tenant_take_over was removed with no removed_features fragment" "$tmp/c3a.out"; then ok "c3. removed after its deprecation but without a removed_features fragment fails naming it"
else cat "$tmp/c3a.out"; ko "c3. the failure does not name the missing fragment"; fi
printf -- '---\nremoved_features:\n  - tenant role - tenant_take_over is gone (deprecated in %s).\n' "$version" > "$tmp/c3/changelogs/fragments/99-gone.yml"
if "$py" "$here/deprecation.py" "$tmp/c3old" "$tmp/c3" > "$tmp/c3b.out"; then ok "c3. removed after removed_in_version $version with a removed_features fragment passes: $(grep -m1 PASS "$tmp/c3b.out" | cut -c7- | cut -c1-140)"
else cat "$tmp/c3b.out"; ko "c3. a removal behind its deprecation failed"; fi
# c4: a role variable marked deprecated: no warning task fails b; with deevnet.tenant.role_deprecations passes
cp -a "$tmp/base" "$tmp/c4"; edit "$tmp/c4/$spec" deprecate 9.0.0
sed -i '/^tenant_take_over:/d' "$tmp/c4/roles/tenant/defaults/main.yml"
if runtime "$tmp/c4" c4a > "$tmp/c4a.out" 2>&1; then cat "$tmp/c4a.out"; ko "c4. a deprecated role variable without a warning passed"
elif grep -q "FAIL  b. role tenant (entry point main): tenant_take_over is marked deprecated" "$tmp/c4a.out"; then ok "c4. a role variable marked deprecated that does not warn fails: $(grep -m1 FAIL "$tmp/c4a.out" | cut -c7- | cut -c1-150)"
else cat "$tmp/c4a.out"; ko "c4. the failure does not name tenant_take_over"; fi
"$py" - "$tmp/c4/roles/tenant/tasks/main.yml" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
hook = ("- name: Warn about deprecated variables (docs/releases.md)\n  ansible.builtin.assert:\n"
        "    that: lookup('ansible.builtin.varnames', '.+', wantlist=True) | deevnet.tenant.role_deprecations('tenant') is sequence\n"
        "    quiet: true\n\n")
i = s.index('- name:')
open(p, 'w').write(s[:i] + hook + s[i:])
PY
if runtime "$tmp/c4" c4b > "$tmp/c4b.out" 2>&1; then ok "c4. with deevnet.tenant.role_deprecations in the role's first task it warns: $(grep -m1 PASS "$tmp/c4b.out" | cut -c7- | cut -c1-150)"
else cat "$tmp/c4b.out"; ko "c4. the warning task did not make it warn"; fi
exit $fail
