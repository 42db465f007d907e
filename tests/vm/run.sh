#!/usr/bin/env bash
# Runs tests/vm/playbook.yml with ansible-playbook against the pvesim CLI on 127.0.0.1.
#   tests/vm/run.sh --venv .venv --collections .ansible/collections --pvesim bin/pvesim
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VENV= COLLECTIONS= PVESIM=
while [ $# -gt 0 ]; do
  case $1 in
    --venv) VENV=$2; shift 2 ;;
    --collections) COLLECTIONS=$2; shift 2 ;;
    --pvesim) PVESIM=$2; shift 2 ;;
    *) echo "usage: $0 --venv DIR --collections DIR --pvesim BIN" >&2; exit 2 ;;
  esac
done
for x in "$VENV/bin/ansible-playbook" "$PVESIM"; do
  [ -x "$x" ] || { echo "missing $x" >&2; exit 1; }
done

VENV=$(cd "$VENV" && pwd) COLLECTIONS=$(cd "$COLLECTIONS" && pwd) PVESIM=$(cd "$(dirname "$PVESIM")" && pwd)/$(basename "$PVESIM")
WORK=$(mktemp -d /tmp/dvt-vm-test.XXXXXX)
SIM_PID=
cleanup() {
  if [ -n "$SIM_PID" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Port 0: the simulator picks a free loopback port and writes it to the token file with the secret.
"$PVESIM" --listen 127.0.0.1:0 --ca-out "$WORK/ca.pem" --token-out "$WORK/token.json" >"$WORK/pvesim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do
  [ -s "$WORK/token.json" ] && break
  kill -0 "$SIM_PID" 2>/dev/null || { cat "$WORK/pvesim.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$WORK/token.json" ] || { echo "pvesim did not start" >&2; cat "$WORK/pvesim.log" >&2; exit 1; }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$WORK/token.json" "$1"; }
PORT=$(field api_port) TOKEN_USER=$(field api_user) TOKEN_ID=$(field full_token_id) TOKEN_SECRET=$(field api_token_secret)
AUTH="PVEAPIToken=$TOKEN_ID=$TOKEN_SECRET"
URL="https://127.0.0.1:$PORT"

# What onboarding and tenant_vrf make: the tenant's pool and its VNet, applied.
api() { curl -sS --fail-with-body --cacert "$WORK/ca.pem" -H "Authorization: $AUTH" -X "$1" "$URL/api2/json$2" "${@:3}" >/dev/null; }
api POST /pools -d poolid=tenant-tdemo
api POST /cluster/sdn/zones -d zone=tn01 -d type=simple
api POST /cluster/sdn/vnets -d vnet=tn01v0 -d zone=tn01 -d tag=20016
api PUT /cluster/sdn

export PROXMOX_HOST=127.0.0.1 PROXMOX_PORT=$PORT PROXMOX_USER=$TOKEN_USER PROXMOX_TOKEN_ID=$TOKEN_ID PROXMOX_TOKEN_SECRET=$TOKEN_SECRET
export SIM_URL=$URL SIM_CA=$WORK/ca.pem SIM_AUTH=$AUTH
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_NOCOLOR=1
export ANSIBLE_PYTHON_INTERPRETER=$VENV/bin/python
start=$(date +%s.%N)
# -v prints every result, so the no_log check below sees all of them.
if ! "$VENV/bin/ansible-playbook" -v -i localhost, -c local "$HERE/playbook.yml" >"$WORK/play.log" 2>&1; then
  cat "$WORK/play.log"; exit 1
fi
grep -E '^(PLAY RECAP|localhost)' "$WORK/play.log"
if grep -q 'not-in-any-output' "$WORK/play.log"; then echo "test-vm: cipassword appears in the output" >&2; exit 1; fi
if grep -q "$TOKEN_SECRET" "$WORK/play.log"; then echo "test-vm: the API token secret appears in the output" >&2; exit 1; fi
echo "test-vm: playbook green in $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
