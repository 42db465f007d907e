#!/usr/bin/env bash
# tests/takeover/run.sh [--venv DIR] [--collections DIR]
# docs/migrate-from-terraform.md end to end, with the collection's own playbooks, against the
# lifecycle lab (extensions/molecule/shared/lab.sh: pvesim, PowerDNS, Unbound on 127.0.0.1):
#   0. what Terraform left: the bpg/proxmox provider's calls for tdemo replayed into pvesim
#      (terraform-tdemo.json, replay.py), and tdemo's zones, its TSIG key and its records as
#      Terraform's PowerDNS and RFC 2136 providers make them (API + nsupdate);
#   1. onboard with tenant_adopt in check mode writes nothing, then for real;
#   2. tenant without tenant_adopt is refused (the unmarked VRF), nothing written;
#   3. tenant with tenant_adopt in check mode writes nothing, then for real: no VM destroyed,
#      cloned, stopped or started, no SDN object deleted or created, vmid, MAC and disk unchanged,
#      the records' values unchanged;
#   4. tenant without tenant_adopt: changed=0 and no API write; verify passes.
# The hypervisor plays (node network, routes) are off, as in the molecule scenarios.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/takeover
# Options come in pairs; TAKEOVER_KEEP=1 keeps the work directory (logs, lab) for a look afterwards.
VENV=$ROOT/.venv COLLECTIONS=$ROOT/.ansible/collections
while [ $# -ge 2 ]; do
  case $1 in --venv) VENV=$2 ;; --collections) COLLECTIONS=$2 ;; *) break ;; esac
  shift 2
done
[ $# = 0 ] || { echo "usage: $0 [--venv DIR] [--collections DIR]" >&2; exit 2; }
W=$(mktemp -d /tmp/dvt-takeover.XXXXXX)
LAB=$W/lab
cleanup(){
  "$ROOT/extensions/molecule/shared/lab.sh" down "$LAB" >/dev/null 2>&1 || true
  if [ "${TAKEOVER_KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false ANSIBLE_NOCOLOR=1 \
  ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_RETRY_FILES_ENABLED=false \
  PVESIM=$ROOT/bin/pvesim
rc=0
pass(){ echo "PASS  $*"; }
fail(){ echo "FAIL  $*"; rc=1; }
start=$(date +%s)

"$ROOT/extensions/molecule/shared/lab.sh" up "$LAB" >"$W/lab.out" 2>&1 || { cat "$W/lab.out"; exit 1; }
labv(){ "$VENV/bin/python" -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); [d := d[k] for k in sys.argv[2].split(".")]; print(d)' "$LAB/substrate.yml" "$1"; }
SIM=$(labv pvesim_url); CA=$(labv substrate_pve.ca_path)
# shellcheck disable=SC1091
. "$LAB/dns/env"
api(){ curl -sf --cacert "$CA" -H "Authorization: PVEAPIToken=root@pam!sim=$(labv substrate_pve.api_token_secret)" "$SIM/api2/json$1"; }
stats(){ curl -sf --cacert "$CA" "$SIM/_sim/stats"; }
reset(){ curl -sf --cacert "$CA" -X POST "$SIM/_sim/stats/reset" >/dev/null; }
jq_(){ "$VENV/bin/python" -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
writes(){ stats | jq_ 'd["data"]["writes"]'; }
pdns(){ curl -sf -H "X-API-Key: $DNS_LAB_API_KEY" -H 'Content-Type: application/json' "$DNS_LAB_API_URL$2" -X "$1" "${@:3}"; }
dig_(){ dig +short +norecurse @127.0.0.1 -p "$DNS_LAB_PDNS_PORT" "$@"; }
dnsupdates(){ pdns GET /statistics | jq_ '[i["value"] for i in d if i["name"]=="dnsupdate-answers"][0]'; }

# --- 0. what Terraform left ----------------------------------------------------------------------
"$VENV/bin/python" "$HERE/replay.py" "$HERE/terraform-tdemo.json" "$SIM" "$CA" "$LAB/pvesim-token.json" || exit 1
ZONE=tdemo.mobile.deevnet.net REV=129.20.10.in-addr.arpa
for z in $ZONE $REV; do
  pdns POST /zones -d "{\"name\": \"$z.\", \"kind\": \"Native\", \"nameservers\": [\"ns1.mobile.deevnet.net.\"]}" >/dev/null || exit 1
done
# The module named its key as the plan does (tenant-<name>): onboarding must keep it, not replace it.
# (A record set written with another key: internal/dnsupdate's TestAdoptRecordsAnotherToolPublished.)
TF_SECRET=$(pdns POST /tsigkeys -d '{"name": "tenant-tdemo", "algorithm": "hmac-sha256"}' | jq_ 'd["key"]')
for z in $ZONE $REV; do
  pdns PUT "/zones/$z./metadata/TSIG-ALLOW-DNSUPDATE" -d '{"metadata": ["tenant-tdemo"]}' >/dev/null || exit 1
done
nsupdate -y "hmac-sha256:tenant-tdemo:$TF_SECRET" <<EOF || exit 1
server 127.0.0.1 $DNS_LAB_PDNS_PORT
zone $ZONE
update add tdemo-1.$ZONE. 300 A 10.20.129.10
update add www.$ZONE. 300 CNAME tdemo-1.$ZONE.
send
zone $REV
update add 10.$REV. 300 PTR tdemo-1.$ZONE.
send
EOF
vm(){ api /nodes/dv02hyp002p02/qemu/10101/config | jq_ "d['data'].get('$1')"; }
MAC=$(vm net0) DISK=$(vm scsi0) CI=$(vm ide2)
if [ "$DISK" = "local-lvm:vm-10101-disk-0,backup=1,discard=ignore,iothread=1,replicate=1,size=8G,ssd=0" ] && [ "$CI" = "local-lvm:vm-10101-cloudinit,media=cdrom" ]; then
  pass "Terraform's tdemo replayed: scsi0 and ide2 stored as PVE stores them ($DISK; $CI)"
else fail "replayed drives: scsi0 [$DISK] ide2 [$CI]"; fi

INV=(-i "$ROOT/extensions/molecule/shared/inventory" -e "lab_dir=$LAB")
play(){ # NAME PLAYBOOK [ARGS...]
  local name=$1 pb=$2 t0 c; shift 2
  t0=$(date +%s)
  "$VENV/bin/ansible-playbook" "${INV[@]}" "deevnet.tenant.$pb" "$@" >"$W/$name.log" 2>&1
  c=$?; echo "      ($name: $pb $*: $(( $(date +%s) - t0 )) s)"; return $c
}
changed(){ grep -E '^localhost' "$W/$1.log" | grep -o 'changed=[0-9]*' | cut -d= -f2; }
TENANT=(-e "tenant_file=$HERE/tdemo.yml")

# --- 1. onboard with tenant_adopt: check mode, then for real ----------------------------------------
reset; u0=$(dnsupdates)
play check-onboard onboard -e tenant_name=tdemo -e tenant_index=1 -e tenant_adopt=true --check --diff
c=$?
if [ $c = 0 ] && [ "$(writes)" = 0 ] && [ "$(dnsupdates)" = "$u0" ]; then pass "onboard --check with tenant_adopt: no PVE write, no DNS update"
else fail "onboard --check with tenant_adopt: rc=$c, writes $(writes)"; tail -n 20 "$W/check-onboard.log"; fi
play onboard onboard -e tenant_name=tdemo -e tenant_index=1 -e tenant_adopt=true
c=$?
att_key=$("$VENV/bin/python" -c 'import sys,yaml; print(yaml.safe_load(open(sys.argv[1]))["tenant_attachment"]["dns"]["key_secret"])' "$LAB/attachments/tdemo.yml" 2>/dev/null)
if [ $c = 0 ] && [ "$(dig_ tdemo-1.$ZONE A)" = 10.20.129.10 ] && [ "$(pdns GET /tsigkeys/tenant-tdemo. | jq_ 'd["key"]')" = "$TF_SECRET" ] && [ "$att_key" = "$TF_SECRET" ]; then
  pass "onboard with tenant_adopt: pool, user, token and ACLs; the zones, their records and the TSIG key kept (the attachment carries it)"
else fail "onboard with tenant_adopt: rc=$c, key kept: $([ "$att_key" = "$TF_SECRET" ] && echo yes || echo no)"; tail -n 20 "$W/onboard.log"; fi

# --- 2. tenant without tenant_adopt: refused, nothing written ----------------------------------------
reset; u0=$(dnsupdates)
play refuse tenant "${TENANT[@]}"
c=$?
if [ $c != 0 ] && grep -q 'its vnet tn01v0 is marked \\"(no mark)\\"' "$W/refuse.log" && [ "$(writes)" = 0 ] && [ "$(dnsupdates)" = "$u0" ]; then
  pass "tenant without tenant_adopt refuses Terraform's VRF: no PVE write, no DNS update"
else fail "tenant without tenant_adopt: rc=$c, writes $(writes)"; grep -E 'fatal|msg' "$W/refuse.log" | head -5; fi

# --- 3. tenant with tenant_adopt: check mode, then for real ------------------------------------------
reset; u0=$(dnsupdates)
play check-tenant tenant "${TENANT[@]}" -e tenant_adopt=true --check --diff
c=$?
if [ $c = 0 ] && [ "$(writes)" = 0 ] && [ "$(dnsupdates)" = "$u0" ]; then pass "tenant --check with tenant_adopt: no PVE write, no DNS update"
else fail "tenant --check with tenant_adopt: rc=$c, writes $(writes)"; tail -n 30 "$W/check-tenant.log"; fi
reset
play adopt tenant "${TENANT[@]}" -e tenant_adopt=true
c=$?
bad=$(stats | jq_ '" ".join(k for k in d["data"]["requests"] if k.startswith("DELETE") or k.endswith("/clone") or "/status/" in k and k.startswith("POST") or k.startswith("POST /cluster/sdn/") and not k.endswith("/lock"))')
if [ $c = 0 ] && [ -z "$bad" ] && [ "$(vm net0)" = "$MAC" ] && [ "$(vm scsi0)" = "$DISK" ] && [ "$(vm ide2)" = "$CI" ] \
   && [ "$(api /nodes/dv02hyp002p02/qemu/10101/status/current | jq_ 'd["data"]["status"]')" = running ]; then
  pass "tenant with tenant_adopt: 0 destroys, 0 clones, 0 restarts; vmid 10101, MAC, disk and cloud-init drive unchanged ($(writes) writes)"
else fail "tenant with tenant_adopt: rc=$c, requests [$bad], net0 $(vm net0), scsi0 $(vm scsi0)"; tail -n 30 "$W/adopt.log"; fi
if [ "$(dig_ tdemo-1.$ZONE A)" = 10.20.129.10 ] && [ "$(dig_ www.$ZONE CNAME)" = "tdemo-1.$ZONE." ] \
   && dig_ _dvt-a.tdemo-1.$ZONE TXT | grep -q owner=tdemo && [ "$(api /pools/tenant-tdemo | jq_ '[m["vmid"] for m in d["data"]["members"] if "vmid" in m]')" = "[10101]" ]; then
  pass "after the takeover: records kept and registered to tdemo, VM 10101 in pool tenant-tdemo"
else fail "after the takeover: records or pool"; fi

# --- 4. an ordinary run: nothing to do; verify ---------------------------------------------------------
reset; u0=$(dnsupdates)
play second tenant "${TENANT[@]}"
c=$?
if [ $c = 0 ] && [ "$(changed second)" = 0 ] && [ "$(writes)" = 0 ] && [ "$(dnsupdates)" = "$u0" ]; then pass "tenant without tenant_adopt afterwards: changed=0, no PVE write, no DNS update"
else fail "second run: rc=$c changed=$(changed second) writes=$(writes)"; grep -E 'changed:' "$W/second.log" | head; fi
play verify verify "${TENANT[@]}"
c=$?
if [ $c = 0 ]; then pass "verify after the takeover"; else fail "verify: rc=$c"; tail -n 20 "$W/verify.log"; fi

echo "test-takeover: $([ $rc = 0 ] && echo green || echo RED) in $(( $(date +%s) - start )) s"
exit $rc
