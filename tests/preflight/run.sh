#!/usr/bin/env bash
# tests/preflight/run.sh [--venv DIR] [--collections DIR]
# playbooks/preflight.yml (docs/preflight.md) against pvesim, with the lifecycle scenarios'
# inventory (extensions/molecule/shared/inventory) as it is: first the lab's cluster as it is
# (every check ok, the play passes), then each assumption broken in turn, by pvesim's config, an
# admin call or the inventory, one pvesim per case on 127.0.0.1. Each case wants:
#   - the broken check's row "differs" (or "warn" for the one that breaks nothing) with the words
#     of its difference, and every other row ok (skipped for what the inventory turns off);
#   - the play failed (after the table) when the broken check breaks the collection, else passed;
#   - pvesim's write count 0 (GET /_sim/stats), whatever the outcome.
# The nodes' FRR and ifupdown2 come from a dpkg database in each lab node's directory
# (substrate_dpkg_admindir); one case leaves it out: the lab's nodes are then not read (unknown).
# PREFLIGHT_KEEP=1 keeps the work directory.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=$ROOT/.venv COLLECTIONS=$ROOT/.ansible/collections
while [ $# -ge 2 ]; do
  case $1 in --venv) VENV=$2 ;; --collections) COLLECTIONS=$2 ;; *) break ;; esac
  shift 2
done
[ $# = 0 ] || { echo "usage: $0 [--venv DIR] [--collections DIR]" >&2; exit 2; }
PVESIM=${PVESIM:-$ROOT/bin/pvesim}
W=$(mktemp -d /tmp/dvt-preflight.XXXXXX)
LAB=$W/lab
PID=
stop(){
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=; fi
}
cleanup(){
  stop
  if [ "${PREFLIGHT_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false ANSIBLE_NOCOLOR=1 \
  ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_RETRY_FILES_ENABLED=false
py(){ "$VENV/bin/python" "$@"; }
rc=0
pass(){ echo "PASS  $*"; }
fail(){ echo "FAIL  $*"; rc=1; }
start=$(date +%s)
CHECKS="pve_version api_endpoints privileges tenant_storage storages hookscript_storage template template_guest quorum node_packages"

# up CONFIG: pvesim with CONFIG on 127.0.0.1:0, and the lab file the inventory reads (20-lab.yml):
# only the PVE connection and the registry are used by the preflight.
up(){
  stop
  rm -rf "$LAB"; mkdir -p "$LAB/attachments"
  "$PVESIM" --listen 127.0.0.1:0 --config "$1" --ca-out "$LAB/ca.pem" --token-out "$LAB/token.json" \
    >"$LAB/pvesim.log" 2>&1 </dev/null &
  PID=$!
  for _ in $(seq 1 200); do [ -s "$LAB/token.json" ] && break; sleep 0.05; done
  [ -s "$LAB/token.json" ] || { cat "$LAB/pvesim.log"; return 1; }
  py - "$LAB" <<'PY'
import json, sys, yaml
lab = sys.argv[1]
t = json.load(open(lab + "/token.json"))
open(lab + "/substrate.yml", "w").write(yaml.safe_dump({
    "lab_dir": lab, "pvesim_url": "https://127.0.0.1:%d" % t["api_port"],
    "substrate_pve": {"api_host": "127.0.0.1", "api_port": t["api_port"], "api_user": "root@pam", "api_token_id": "sim",
                      "api_token_secret": t["api_token_secret"], "validate_certs": True, "ca_path": lab + "/ca.pem"},
    "substrate_pdns": {}, "substrate_resolver": {}, "substrate_unbound_conf_dir": lab + "/unbound.d",
    "tenant_attachment_dir": lab + "/attachments", "tenant_registry_file": lab + "/tenants.yml"}))
# tdemo is onboarded: its thin pool must be on every node
open(lab + "/tenants.yml", "w").write("tenants:\n  tdemo: 1\n")
PY
  URL=$(py -c 'import json,sys; print("https://127.0.0.1:%d" % json.load(open(sys.argv[1]))["api_port"])' "$LAB/token.json")
}
sim(){ curl -sf --cacert "$LAB/ca.pem" -X POST -H 'Content-Type: application/json' "$URL/_sim/$1" -d "$2" >/dev/null; }
writes(){ curl -sf --cacert "$LAB/ca.pem" "$URL/_sim/stats" | py -c 'import json,sys; print(json.load(sys.stdin)["data"]["writes"])'; }

# config EDIT: the lab's pvesim config with a Python statement applied to it (c is the dict).
config(){
  py - "$ROOT/extensions/molecule/shared/pvesim.yml" "$W/pvesim.yml" "$1" <<'PY'
import sys, yaml
sys.path.insert(0, ".")
c = yaml.safe_load(open(sys.argv[1]))
# the simulator's own defaults the edits change (internal/pvesim DefaultConfig), stated here
c.setdefault("storages", [
    {"id": "local", "type": "dir", "content": ["iso", "vztmpl", "backup", "snippets"], "path": "/var/lib/vz"},
    {"id": "local-lvm", "type": "lvmthin", "content": ["images", "rootdir"], "clone": True, "vgname": "pve", "thinpool": "data"}])
exec(sys.argv[3])
yaml.safe_dump(c, open(sys.argv[2], "w"))
PY
  echo "$W/pvesim.yml"
}

# packages NODE FRR IFUPDOWN2: a dpkg status file in the lab node's directory ("" leaves it out).
packages(){
  local d=$LAB/nodes/$1/var/lib/dpkg
  mkdir -p "$d/info" "$d/updates"
  : >"$d/status"
  for p in "frr $2" "ifupdown2 $3"; do
    set -- $p
    [ -n "${2:-}" ] || continue
    printf 'Package: %s\nStatus: install ok installed\nArchitecture: amd64\nVersion: %s\nMaintainer: x\nDescription: x\n\n' "$1" "$2" >>"$d/status"
  done
}

INV=(-i "$ROOT/extensions/molecule/shared/inventory" -e "lab_dir=$LAB" -e substrate_envelope_guard=true)
ADMINDIR=(-e 'substrate_dpkg_admindir={{ lab_dir }}/nodes/{{ inventory_hostname }}/var/lib/dpkg')

# case NAME BROKEN STATE WANT [ARGS...]: run the preflight; BROKEN's row is STATE with WANT among
# its lines (BROKEN "-": none broken), every other row ok or skipped; the play fails when STATE is differs.
case_(){
  local name=$1 broken=$2 state=$3 want=$4 c; shift 4
  "$VENV/bin/ansible-playbook" "${INV[@]}" deevnet.tenant.preflight "$@" >"$W/$name.log" 2>&1
  c=$?
  local w; w=$(writes)
  local got
  got=$(py - "$W/$name.log" "$broken" "$state" "$want" "$CHECKS" <<'PY'
import re, sys
log, broken, state, want, checks = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].split()
text = open(log).read()
rows = dict(re.findall(r'^\s*"(\w+)\s+(ok|differs|warn|unknown|skipped)\b', text, re.M))
bad = []
for ch in checks:
    s = rows.get(ch)
    if ch == broken:
        if s != state:
            bad.append("%s is %s, want %s" % (ch, s, state))
    elif s not in ("ok", "skipped"):
        bad.append("%s is %s, want ok" % (ch, s))
if want and want not in text:
    bad.append("no line with %r" % want)
if state == "differs":
    # the play fails on the assert that names the check, after the whole table
    at = text.find("preflight: %s differ(s)" % broken)
    last = text.rfind('"node_packages ')
    if at < 0 or last < 0 or last > at:
        bad.append("the play did not fail naming %s after the table" % broken)
print("; ".join(bad))
PY
)
  local want_rc=0; [ "$state" = differs ] && want_rc=2
  if [ -z "$got" ] && [ "$w" = 0 ] && { { [ $want_rc = 0 ] && [ $c = 0 ]; } || { [ $want_rc != 0 ] && [ $c != 0 ]; }; }; then
    pass "$name: ${broken/-/every check} ${state}${want:+ ($want)}, the rest ok; play rc $c; 0 writes"
  else
    fail "$name: rc $c, writes $w: $got"; grep -E '^\s*"|fatal|FAILED|ERROR' "$W/$name.log" | head -30
  fi
}

both_good(){ packages dv02hyp002p02 10.4.1-1+pve1 3.3.0-1+pmx9; packages dv02hyp002p03 10.4.1-1+pve1 3.3.0-1+pmx9; }

# --- the lab's cluster as it is: every assumption holds ---------------------------------------------
up "$(config pass)" && both_good || exit 1
case_ cluster-ok - ok "" "${ADMINDIR[@]}"
grep -q 'preflight: 9 of 10 checks ok; skipped: storages' "$W/cluster-ok.log" \
  && pass "cluster-ok: the assert says 9 of 10 ok, storages skipped (substrate_storages is empty)" \
  || fail "cluster-ok: no summary line"
# check mode runs it unchanged (the module and dpkg-query only read)
case_ cluster-ok-check - ok "" "${ADMINDIR[@]}" --check
# without a dpkg database of their own, the lab's nodes are not read: unknown, not a failure
case_ packages-unread node_packages unknown "shares the controller's packages"

# --- each assumption broken in turn -------------------------------------------------------------
up "$(config 'c["version"], c["release"] = "8.4.1", "8.4"')" && both_good || exit 1
case_ pve8 pve_version differs "version 8.4.1, not 9.x" "${ADMINDIR[@]}"

up "$(config pass)" && both_good || exit 1
sim faults '{"faults": [{"method": "GET", "path": "/cluster/sdn/fabrics/all", "nth": 0, "status": 501, "message": "Method '"'"'GET /cluster/sdn/fabrics/all'"'"' not implemented"}]}'
case_ no-fabrics api_endpoints differs "GET /cluster/sdn/fabrics/all: PVE API 501" "${ADMINDIR[@]}"

up "$(config pass)" && both_good || exit 1
sim privileges/drop '{"privileges": ["VM.Migrate"]}'
case_ no-vm-migrate privileges differs "privilege VM.Migrate does not exist" "${ADMINDIR[@]}"

up "$(config pass)" && both_good || exit 1
sim disks/dv02hyp002p03 '{"vg": "pve", "thinpool": "tenant-tdemo", "remove": true}'
case_ no-thinpool tenant_storage differs "node dv02hyp002p03: no thin pool pve/tenant-tdemo" "${ADMINDIR[@]}"

up "$(config 'c["storages"].append({"id": "shared", "type": "dir", "content": ["iso"], "path": "/mnt/shared"})')" && both_good || exit 1
case_ storage-no-images storages differs "storage shared has content iso, not images" "${ADMINDIR[@]}" \
  -e '{"substrate_storages": ["local-lvm", "shared"]}'

up "$(config 'c["storages"][0]["content"] = ["iso", "vztmpl", "backup"]')" && both_good || exit 1
case_ no-snippets hookscript_storage differs "without snippets" "${ADMINDIR[@]}"

up "$(config 'c["templates"] = [{"vmid": 9000, "name": "debian-12-genericcloud", "template": False, "config": {"scsi0": "local-lvm:vm-9000-disk-0,size=3G", "ide2": "local-lvm:vm-9000-cloudinit,media=cdrom", "agent": "1"}}]')" && both_good || exit 1
case_ template-is-vm template differs "9000 is a VM, not a template" "${ADMINDIR[@]}"

up "$(config 'c["templates"] = [{"vmid": 9000, "name": "debian-12-genericcloud", "template": True, "config": {"scsi0": "local-lvm:base-9000-disk-0,size=3G", "agent": "1", "template": "1"}}]')" && both_good || exit 1
case_ no-cloudinit template_guest warn "no cloud-init drive" "${ADMINDIR[@]}"

up "$(config 'c["quorum"] = {"votes": {"dv02hyp002p02": 2}}')" && both_good || exit 1
case_ two-votes quorum differs "node dv02hyp002p02 has quorum_votes 2, not 1" "${ADMINDIR[@]}"

up "$(config pass)" || exit 1
packages dv02hyp002p02 10.4.1-1+pve1 3.3.0-1+pmx9; packages dv02hyp002p03 8.4.4-1.1~deb12u1 3.3.0-1+pmx9
case_ frr8 node_packages differs "dv02hyp002p03: frr 8.4.4-1.1~deb12u1, not 10.x" "${ADMINDIR[@]}"

up "$(config pass)" || exit 1
packages dv02hyp002p02 10.4.1-1+pve1 ""; packages dv02hyp002p03 10.4.1-1+pve1 3.3.0-1+pmx9
case_ no-ifupdown2 node_packages differs "dv02hyp002p02: ifupdown2 is not installed" "${ADMINDIR[@]}"

echo "test-preflight: $([ $rc = 0 ] && echo green || echo RED) in $(( $(date +%s) - start )) s"
exit $rc
