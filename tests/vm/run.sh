#!/usr/bin/env bash
# Runs tests/vm/playbook.yml with ansible-playbook against the pvesim CLI on 127.0.0.1.
#   tests/vm/run.sh --venv .venv --collections .ansible/collections --pvesim bin/pvesim
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/pvesim.sh
. "$HERE/../lib/pvesim.sh"
pvesim_test_start vm "$@"

field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$TOKEN_FILE" "$1"; }
TOKEN_USER=$(field api_user) TOKEN_ID=$(field full_token_id) TOKEN_SECRET=$(field api_token_secret)
AUTH="PVEAPIToken=$TOKEN_ID=$TOKEN_SECRET"

# What onboarding and tenant_vrf make: the tenant's pool and its VNet, applied.
api() { curl -sS --fail-with-body --cacert "$CA" -H "Authorization: $AUTH" -X "$1" "$URL/api2/json$2" "${@:3}" >/dev/null; }
api POST /pools -d poolid=tenant-tdemo
api POST /cluster/sdn/zones -d zone=tn01 -d type=simple
api POST /cluster/sdn/vnets -d vnet=tn01v0 -d zone=tn01 -d tag=20016
api PUT /cluster/sdn

export PROXMOX_HOST=127.0.0.1 PROXMOX_PORT=$PORT PROXMOX_USER=$TOKEN_USER PROXMOX_TOKEN_ID=$TOKEN_ID PROXMOX_TOKEN_SECRET=$TOKEN_SECRET
export SIM_URL=$URL SIM_CA=$CA SIM_AUTH=$AUTH
start=$(date +%s.%N)
# -v prints every result, so the no_log check below sees all of them.
if ! "$VENV/bin/ansible-playbook" -v -i localhost, -c local "$HERE/playbook.yml" >"$WORK/play.log" 2>&1; then
  cat "$WORK/play.log"; exit 1
fi
grep -E '^(PLAY RECAP|localhost)' "$WORK/play.log"
if grep -q 'not-in-any-output' "$WORK/play.log"; then echo "test-vm: cipassword appears in the output" >&2; exit 1; fi
if grep -q "$TOKEN_SECRET" "$WORK/play.log"; then echo "test-vm: the API token secret appears in the output" >&2; exit 1; fi
echo "test-vm: playbook green in $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
