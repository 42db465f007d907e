#!/usr/bin/env bash
# run.sh --tools-venv DIR --tarball FILE --pvesim BIN [--python PY] [--work DIR]
# The execution environment (make test-ee), proven without containers (crun cannot run here):
#  1. `ansible-builder create` writes the build context of examples/ee/execution-environment.yml:
#     the Containerfile installs what the example pins and the collection galaxy.yml describes.
#  2. A fresh venv does what the image build does: ANSIBLE_INSTALL_REFS (ansible-core,
#     ansible-runner) from PyPI, the collection from the tarball (in place of Galaxy), the
#     context's own introspect.py over the installed collections (meta/execution-environment.yml),
#     its Python requirements installed, and `bindep` reporting nothing missing.
#  3. ansible-runner, the engine AWX runs jobs with, runs the demo's converge of tdemo, then a
#     verify, then the converge again, from a runner private_data_dir laid out as AWX lays it
#     (project/, inventory/, env/extravars, env/envvars, env/settings, the credential as an
#     extra-vars file passed in env/cmdline) against pvesim and the DNS lab on 127.0.0.1.
#  4. tests/ee/artifacts.py asserts on each job's artifacts (status, rc, job events) and that no
#     secret (substrate token secret, PowerDNS API key, tdemo's token secret and TSIG key) is in
#     any artifact file.
# The tools venv (tests/ee/requirements.txt) is the builder stage: ansible-builder, bindep.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
tools= tarball= pvesim= python=python3 work=
while [ $# -gt 0 ]; do
  case $1 in
    --tools-venv) tools=$2; shift 2;; --tarball) tarball=$2; shift 2;; --pvesim) pvesim=$2; shift 2;;
    --python) python=$2; shift 2;; --work) work=$2; shift 2;;
    *) echo "usage: $0 --tools-venv DIR --tarball FILE --pvesim BIN [--python PY] [--work DIR]" >&2; exit 2;;
  esac
done
tools=$(cd "$tools" && pwd); pvesim=$(cd "$(dirname "$pvesim")" && pwd)/$(basename "$pvesim")
[ -f "$tarball" ] || { echo "no tarball $tarball (make collection)" >&2; exit 1; }
work=${work:-$(mktemp -d /tmp/dvt-ee.XXXXXX)}
rm -rf "$work"; mkdir -p "$work"
lab=$work/lab
cleanup() { PVESIM=$pvesim "$root/extensions/molecule/shared/lab.sh" down "$lab" >/dev/null 2>&1 || true; }
trap cleanup EXIT
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
version=$(sed -n 's/^version: *//p' "$root/galaxy.yml")
fail=0

step "1. ansible-builder create (examples/ee/execution-environment.yml)"
ctx=$work/context
(cd "$work" && "$tools/bin/ansible-builder" create -f "$root/examples/ee/execution-environment.yml" \
  -c "$ctx" --output-filename Containerfile) >"$work/create.log"
refs=$(sed -n 's/^ARG ANSIBLE_INSTALL_REFS="\(.*\)"$/\1/p' "$ctx/Containerfile")
"$tools/bin/python" - "$ctx" "$version" "$refs" <<'PY' || fail=1
import os, sys, yaml
ctx, version, refs = sys.argv[1:]
cf = open(os.path.join(ctx, 'Containerfile')).read()
req = yaml.safe_load(open(os.path.join(ctx, '_build', 'requirements.yml')))
pins = [c.get('version') for c in req.get('collections', []) if c.get('name') == 'deevnet.tenant']
checks = [
    ('the context installs deevnet.tenant %s (galaxy.yml)' % version, pins == [version]),
    ('ansible-core and ansible-runner are pinned (%s)' % refs,
     any(r.startswith('ansible-core==') for r in refs.split()) and any(r.startswith('ansible-runner==') for r in refs.split())),
    ('the galaxy stage installs _build/requirements.yml', 'ansible-galaxy collection install' in cf and '-r requirements.yml' in cf),
    ('the builder stage introspects the collections', 'introspect.py introspect' in cf),
    ('the final stage installs the bindep packages', 'install-from-bindep' in cf),
]
for name, ok in checks:
    print('%s  %s' % ('PASS' if ok else 'FAIL', name))
sys.exit(0 if all(ok for _, ok in checks) else 1)
PY

step "2. the image build in a fresh venv: $refs, the collection, introspect, bindep"
ee=$work/ee
"$python" -m venv "$ee"
# shellcheck disable=SC2086 # the refs are a list of requirement specifiers
"$ee/bin/python" -m pip install -q --disable-pip-version-check -c "$root/constraints.txt" $refs
# Only the image's collections path: a copy installed elsewhere on this machine must not count.
ANSIBLE_COLLECTIONS_PATH="$ee/collections" "$ee/bin/ansible-galaxy" collection install -p "$ee/collections" "$tarball" >"$work/install.log"
installed=$("$tools/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["collection_info"]["version"])' \
  "$ee/collections/ansible_collections/deevnet/tenant/MANIFEST.json")
if [ "$installed" = "$version" ]; then echo "PASS  the tarball installed: deevnet.tenant $installed"
else echo "FAIL  installed deevnet.tenant $installed, galaxy.yml says $version"; fail=1; fi
# The builder stage's own script, from the context: it reads meta/execution-environment.yml of
# every installed collection and writes the combined requirements.
"$tools/bin/python" "$ctx/_build/scripts/introspect.py" introspect \
  --write-bindep="$work/src/bindep.txt" --write-pip="$work/src/requirements.txt" "$ee/collections" >"$work/introspect.log" 2>&1 \
  || { cat "$work/introspect.log"; echo "FAIL  introspect.py"; exit 1; }
for pkg in bind9-dnsutils openssh-client bind-utils openssh-clients; do
  if grep -q "^$pkg .*# from collection deevnet.tenant" "$work/src/bindep.txt"; then echo "PASS  introspect: $pkg (from deevnet.tenant's meta/bindep.txt)"
  else echo "FAIL  introspect did not find $pkg in deevnet.tenant's meta/bindep.txt:"; cat "$work/src/bindep.txt"; fail=1; fi
done
if grep -qv '^\s*\(#.*\)\?$' "$work/src/requirements.txt" 2>/dev/null; then
  "$ee/bin/python" -m pip install -q --disable-pip-version-check -c "$root/constraints.txt" -r "$work/src/requirements.txt"
  echo "PASS  Python requirements installed: $(grep -v '^\s*#' "$work/src/requirements.txt" | tr '\n' ' ')"
else
  echo "PASS  Python requirements: none beyond ansible-core (meta/requirements.txt)"
fi
if missing=$("$tools/bin/bindep" -b -f "$work/src/bindep.txt"); then
  echo "PASS  bindep: nothing missing on this machine ($(grep -c '^[a-z]' "$work/src/bindep.txt") entries)"
else
  echo "FAIL  bindep: missing $missing (scripts/install-deps.sh)"; fail=1
fi

step "3. ansible-runner: converge, verify, converge again (AWX's private_data_dir)"
PVESIM=$pvesim "$root/extensions/molecule/shared/lab.sh" up "$lab" >"$work/lab.log"
pdd=$work/runner
mkdir -p "$pdd/project" "$pdd/inventory" "$pdd/env"
# project/: the AWX project checkout: the demo's converge as it is, and a verify job.
cp "$root/extensions/molecule/shared/converge-tdemo.yml" "$root/extensions/molecule/shared/locate.yml" \
   "$root/extensions/molecule/shared/tdemo.yml" "$here/project/verify.yml" "$pdd/project/"
# inventory/: the substrate repository's inventory as it is, plus how this lab is reached (host
# variables win over group_vars); the secrets are not in it, they come from the credential.
cp -rL "$root/examples/substrate/inventory/." "$pdd/inventory/"
"$tools/bin/python" - "$lab/substrate.yml" "$pdd" <<'PY'
import json, os, sys, yaml
lab, pdd = yaml.safe_load(open(sys.argv[1])), sys.argv[2]
pve = dict(lab['substrate_pve'], api_token_secret='{{ vault_substrate_pve_token_secret }}')
pdns = dict(lab['substrate_pdns'], api_key='{{ vault_substrate_pdns_api_key }}')
reach = {'all': {
    'hosts': {'localhost': {
        'ansible_connection': 'local', 'ansible_python_interpreter': '{{ ansible_playbook_python }}',
        'substrate_pve': pve, 'substrate_pdns': pdns, 'substrate_resolver': lab['substrate_resolver'],
        'substrate_unbound_conf_dir': lab['substrate_unbound_conf_dir'],
        'tenant_attachment_dir': lab['tenant_attachment_dir'], 'tenant_registry_file': lab['tenant_registry_file']}},
    # No hypervisor is reachable here (as in the molecule scenarios): no node network, no routes, no
    # envelope guard to install (ADR-0014; tests/substrate and tests/adversary install it).
    'vars': {'substrate_node_network': False, 'substrate_routes': False, 'substrate_envelope_guard': False},
    'children': {'hypervisors': {'vars': {
        'ansible_connection': 'local', 'ansible_python_interpreter': '{{ ansible_playbook_python }}',
        'ansible_become_exe': '/nonexistent/dvt-ee-has-no-hypervisor', 'substrate_node_local': True}}}}}
with open(os.path.join(pdd, 'inventory', '20-lab.yml'), 'w') as f:
    f.write('---\n' + yaml.safe_dump(reach, sort_keys=False))
# AWX: a custom credential type's extra_vars injector writes its values to a file under env/
# (mode 0600) and passes it as `-e @file`; the job's extra vars go to env/extravars.
cred = os.path.join(pdd, 'env', 'tmp_credential.yml')
with open(os.open(cred, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 'w') as f:
    yaml.safe_dump({'vault_substrate_pve_token_secret': lab['substrate_pve']['api_token_secret'],
                    'vault_substrate_pdns_api_key': lab['substrate_pdns']['api_key']}, f)
with open(os.path.join(pdd, 'env', 'cmdline'), 'w') as f:
    f.write('-e @%s' % cred)
json.dump({'awx_job_template_name': 'deevnet.tenant tdemo', 'awx_project_revision': 'test-ee'}, open(os.path.join(pdd, 'env', 'extravars'), 'w'))
json.dump({'ANSIBLE_FORCE_COLOR': 'False', 'ANSIBLE_HOST_KEY_CHECKING': 'False',
           'ANSIBLE_INVENTORY_UNPARSED_FAILED': 'True', 'ANSIBLE_PARAMIKO_RECORD_HOST_KEYS': 'False',
           'AWX_PRIVATE_DATA_DIR': pdd}, open(os.path.join(pdd, 'env', 'envvars'), 'w'))
json.dump({'job_timeout': 900, 'suppress_ansible_output': True}, open(os.path.join(pdd, 'env', 'settings'), 'w'))
PY
# The image's environment: its ansible-core and runner, its collections path.
for job in converge:converge-tdemo.yml verify:verify.yml converge-again:converge-tdemo.yml; do
  ident=${job%%:*}; playbook=${job#*:}
  s=$(date +%s%N)
  PATH="$ee/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$ee/collections" \
    "$ee/bin/ansible-runner" run "$pdd" -p "$playbook" --ident "$ident" >"$work/runner-$ident.log" 2>&1 || true
  echo "      job $ident ($playbook): $(( ($(date +%s%N) - s) / 1000000 )) ms, status $(cat "$pdd/artifacts/$ident/status" 2>/dev/null || echo none)"
done

step "4. the jobs' artifacts"
"$tools/bin/python" "$here/artifacts.py" --pdd "$pdd" --lab "$lab" || fail=1
step "done (work dir $work)"
exit $fail
