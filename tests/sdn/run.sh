#!/usr/bin/env bash
# Runs tests/sdn/playbook.yml with ansible-playbook against the pvesim CLI on 127.0.0.1:
#   tests/sdn/run.sh --venv .venv --collections .ansible/collections --pvesim bin/pvesim
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

WORK=$(mktemp -d /tmp/dvt-sdn-test.XXXXXX)
SIM_PID=
cleanup() {
  if [ -n "$SIM_PID" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# A second node, for the Phase 2 member.
cat >"$WORK/pvesim.yml" <<'YAML'
nodes:
  - {name: dv02hyp002p02, maxcpu: 16, maxmem: 68719476736}
  - {name: dv02hyp003p02, maxcpu: 16, maxmem: 68719476736}
YAML
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$PVESIM" --listen "127.0.0.1:$PORT" --config "$WORK/pvesim.yml" --ca-out "$WORK/ca.pem" --token-out "$WORK/token.json" >"$WORK/pvesim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do
  [ -s "$WORK/token.json" ] && curl -s -o /dev/null --cacert "$WORK/ca.pem" "https://127.0.0.1:$PORT/api2/json/version" && break
  kill -0 "$SIM_PID" 2>/dev/null || { cat "$WORK/pvesim.log" >&2; exit 1; }
  sleep 0.1
done

export SIM_TOKEN_FILE=$WORK/token.json
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_NOCOLOR=1
export ANSIBLE_PYTHON_INTERPRETER=$VENV/bin/python ANSIBLE_HOME=${ANSIBLE_HOME:-$WORK/ansible-home}
start=$(date +%s.%N)
# From the work dir: no ansible.cfg of the caller applies.
(cd "$WORK" && "$VENV/bin/ansible-playbook" -i localhost, -c local "$HERE/playbook.yml" "$@")
echo "test-sdn: playbook green in $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
