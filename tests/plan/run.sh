#!/usr/bin/env bash
# tests/plan/run.sh [--venv DIR] [--collections DIR] [SCENARIO...]
# Check mode is the plan (issue 56): each step of each scenario runs a shipped playbook with
# --check --diff, then for real, against the lifecycle lab (extensions/molecule/shared/lab.sh:
# pvesim, PowerDNS, Unbound on 127.0.0.1) with the envelope guard on the lab's nodes
# (extensions/molecule/shared/guard: each node's disk is a directory of the lab). A test-only callback
# (callback_plugins/plan_log.py) records each task's result and what changed while it ran: the writes
# pvesim accepted (GET /_sim/writes: route and object), the DNS objects (zones, serials, records,
# metadata, TSIG keys), the files of the lab's directory (nodes' disks, attachment and registry
# files). compare.py then fails on any write the check run did not show as a changed task with a diff
# naming the object, and on any change the check run showed that the run did not make; both sides
# are printed. Scenarios (default: all, in this order):
#   new       onboard tdemo (template 9000 made before the guard), fabric, tenant tdemo
#   change    tdemo with 2 cores, 2048 MiB and one more record
#   rotate    tdemo's API token rotated (onboard -e tenant_rotate_token=true)
#   takeover  Terraform's tdemo (tests/takeover) adopted on a fresh lab: its VM 10101 and the template
#             9000 made before the guard, its zones present (onboard and tenant with tenant_adopt)
#   destroy   tdemo destroyed (not in the default list: destroy --check still fails, pve_tenant_access
#             refusing the pool's VMs that tenant_vm state=absent removes before it in the real run)
# PLAN_KEEP=1 keeps the work directory (logs, the callback's records).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/plan
VENV=$ROOT/.venv COLLECTIONS=$ROOT/.ansible/collections
while [ $# -ge 2 ]; do
  case $1 in --venv) VENV=$2 ;; --collections) COLLECTIONS=$2 ;; *) break ;; esac
  shift 2
done
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=(new change rotate takeover)
W=$(mktemp -d /tmp/dvt-plan.XXXXXX)
LAB=$W/lab
cleanup(){
  "$ROOT/extensions/molecule/shared/lab.sh" down "$LAB" >/dev/null 2>&1 || true
  if [ "${PLAN_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false ANSIBLE_NOCOLOR=1 \
  ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_RETRY_FILES_ENABLED=false \
  ANSIBLE_CALLBACK_PLUGINS=$HERE/callback_plugins ANSIBLE_CALLBACKS_ENABLED=plan_log PVESIM=$ROOT/bin/pvesim
rc=0
pass(){ echo "PASS  $*"; }
fail(){ echo "FAIL  $*"; rc=1; }
start=$(date +%s)
py(){ "$VENV/bin/python" "$@"; }
labv(){ py -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); [d := d[k] for k in sys.argv[2].split(".")]; print(d)' "$LAB/substrate.yml" "$1"; }

lab_up(){
  "$ROOT/extensions/molecule/shared/lab.sh" up "$LAB" >"$W/lab.out" 2>&1 || { cat "$W/lab.out"; exit 1; }
  SIM=$(labv pvesim_url); CA=$(labv substrate_pve.ca_path)
  # shellcheck disable=SC1091
  . "$LAB/dns/env"
  # what the callback watches; the lab's own servers' files (logs, PowerDNS's database: the DNS is read
  # through its API) are not the playbooks' writes
  export PLAN_SIM_URL=$SIM PLAN_SIM_CA=$CA PLAN_PDNS_URL=$DNS_LAB_API_URL PLAN_PDNS_KEY=$DNS_LAB_API_KEY PLAN_FILES_ROOT=$LAB \
    PLAN_FILES_SKIP=dns:bin:pvesim.log:pvesim.pid:pvesim-token.json:pvesim-ca.pem:pvesh.env:substrate.yml:dns-lab.out
}
api(){ curl -sf --cacert "$CA" -H "Authorization: PVEAPIToken=root@pam!sim=$(labv substrate_pve.api_token_secret)" "$SIM/api2/json$1" "${@:2}"; }
pdns(){ curl -sf -H "X-API-Key: $DNS_LAB_API_KEY" -H 'Content-Type: application/json' "$DNS_LAB_API_URL$2" -X "$1" "${@:3}"; }
jq_(){ py -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

INV=()
inv(){ INV=(-i "$ROOT/extensions/molecule/shared/inventory" -i "$ROOT/extensions/molecule/shared/guard" -e "lab_dir=$LAB"); }
inv
# step NAME PLAYBOOK [ARGS...]: the playbook with --check --diff, then for real; the plan compared with the run
step(){
  [ "$ok" = 1 ] || { fail "$1: not run (an earlier step of its scenario failed)"; return 1; }
  local name=$1 pb=$2 t0 c1 c2; shift 2
  t0=$(date +%s)
  PLAN_LOG=$W/$name.check.jsonl "$VENV/bin/ansible-playbook" "${INV[@]}" "deevnet.tenant.$pb" "$@" --check --diff >"$W/$name.check.log" 2>&1
  c1=$?
  PLAN_LOG=$W/$name.apply.jsonl "$VENV/bin/ansible-playbook" "${INV[@]}" "deevnet.tenant.$pb" "$@" --diff >"$W/$name.apply.log" 2>&1
  c2=$?
  if [ $c1 != 0 ] || [ $c2 != 0 ]; then
    fail "$name ($pb $*): check rc=$c1, run rc=$c2"
    for l in check apply; do echo "  --- $l run:"; grep -E 'fatal:|FAILED|ERROR' -A3 "$W/$name.$l.log" | head -20; done
    ok=0; return 1
  fi
  if out=$(py "$HERE/compare.py" "$name" "$W/$name.check.jsonl" "$W/$name.apply.jsonl"); then
    pass "$(echo "$out" | tail -1) ($pb $*, $(( $(date +%s) - t0 )) s)"
  else
    echo "$out" | sed 's/^/  /'
    fail "$name ($pb $*): the plan is not the run"
  fi
}

TDEMO=$ROOT/extensions/molecule/shared/tdemo.yml
ok=1   # a failed step ends its scenario and those that build on it
for s in "${SCENARIOS[@]}"; do
  case $s in
    new)
      lab_up
      step new-onboard onboard -e tenant_name=tdemo
      step new-fabric fabric
      step new-tenant tenant -e "tenant_file=$TDEMO"
      ;;
    change)
      py -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); t=d["tenant"]; t["vms"].update(cores=2, memory=2048); t["records"].append({"name": "api", "type": "CNAME", "values": ["tdemo-1.tdemo.mobile.deevnet.net."]}); yaml.safe_dump(d, open(sys.argv[2], "w"))' "$TDEMO" "$W/tdemo-changed.yml"
      step change-tenant tenant -e "tenant_file=$W/tdemo-changed.yml"
      ;;
    rotate)
      step rotate-onboard onboard -e tenant_name=tdemo -e tenant_rotate_token=true
      ;;
    destroy)
      step destroy destroy -e "tenant_file=$W/tdemo-changed.yml" -e tenant_confirm=tdemo
      ;;
    takeover)
      # Terraform's tdemo (tests/takeover): its VM 10101 made without the guard, its zones, key and
      # records; the template 9000 made before the guard (no hookscript)
      # a fresh lab: lab.sh up keeps the nodes' directories, where the earlier scenarios installed the guard
      "$ROOT/extensions/molecule/shared/lab.sh" down "$LAB" >/dev/null 2>&1
      rm -rf "$LAB/nodes"
      lab_up; ok=1
      py "$ROOT/tests/takeover/replay.py" "$ROOT/tests/takeover/terraform-tdemo.json" "$SIM" "$CA" "$LAB/pvesim-token.json" || exit 1
      for z in tdemo.mobile.deevnet.net 129.20.10.in-addr.arpa; do
        pdns POST /zones -d "{\"name\": \"$z.\", \"kind\": \"Native\", \"nameservers\": [\"ns1.mobile.deevnet.net.\"]}" >/dev/null || exit 1
      done
      step takeover-onboard onboard -e tenant_name=tdemo -e tenant_index=1 -e tenant_adopt=true
      step takeover-tenant tenant -e "tenant_file=$ROOT/tests/takeover/tdemo.yml" -e tenant_adopt=true
      ;;
    *) echo "unknown scenario $s" >&2; exit 2 ;;
  esac
done
echo "test-plan: $([ $rc = 0 ] && echo green || echo RED) in $(( $(date +%s) - start )) s"
exit $rc
