# Sourced by the playbook tests that run against the pvesim CLI (tests/sdn/run.sh, tests/vm/run.sh).
# Usage: pvesim_test_start AREA "$@"
#   parses --venv DIR --collections DIR --pvesim BIN (absolute paths afterwards in VENV,
#   COLLECTIONS, PVESIM), makes WORK=/tmp/dvt-AREA-test.*, starts pvesim on a free 127.0.0.1 port
#   (with PVESIM_CONFIG_YAML, when set, as its --config), waits until it answers, stops it and removes WORK
#   on exit, and exports the Ansible settings these tests share.
# Sets: VENV COLLECTIONS PVESIM WORK SIM_PID PORT URL TOKEN_FILE CA.

pvesim_test_start() {
  local area=$1; shift
  VENV= COLLECTIONS= PVESIM=
  while [ $# -gt 0 ]; do
    case $1 in
      --venv) VENV=$2; shift 2 ;;
      --collections) COLLECTIONS=$2; shift 2 ;;
      --pvesim) PVESIM=$2; shift 2 ;;
      *) echo "usage: $0 --venv DIR --collections DIR --pvesim BIN" >&2; exit 2 ;;
    esac
  done
  local x
  for x in "$VENV/bin/ansible-playbook" "$PVESIM"; do
    [ -x "$x" ] || { echo "missing $x" >&2; exit 1; }
  done
  VENV=$(cd "$VENV" && pwd) COLLECTIONS=$(cd "$COLLECTIONS" && pwd) PVESIM=$(cd "$(dirname "$PVESIM")" && pwd)/$(basename "$PVESIM")
  WORK=$(mktemp -d "/tmp/dvt-$area-test.XXXXXX")
  SIM_PID=
  trap pvesim_test_stop EXIT

  TOKEN_FILE=$WORK/token.json CA=$WORK/ca.pem
  local config=()
  if [ -n "${PVESIM_CONFIG_YAML:-}" ]; then
    printf '%s\n' "$PVESIM_CONFIG_YAML" >"$WORK/pvesim.yml"
    config=(--config "$WORK/pvesim.yml")
  fi
  # Port 0: the simulator picks a free loopback port and writes it to the token file.
  "$PVESIM" --listen 127.0.0.1:0 "${config[@]}" --ca-out "$CA" --token-out "$TOKEN_FILE" >"$WORK/pvesim.log" 2>&1 &
  SIM_PID=$!
  for _ in $(seq 100); do
    if [ -s "$TOKEN_FILE" ]; then
      PORT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["api_port"])' "$TOKEN_FILE")
      URL="https://127.0.0.1:$PORT"
      curl -s -o /dev/null --cacert "$CA" "$URL/api2/json/version" && break
    fi
    kill -0 "$SIM_PID" 2>/dev/null || { cat "$WORK/pvesim.log" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "${URL:-}" ] || { echo "pvesim did not start" >&2; cat "$WORK/pvesim.log" >&2; exit 1; }

  export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
  export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_NOCOLOR=1
  export ANSIBLE_PYTHON_INTERPRETER=$VENV/bin/python
}

pvesim_test_stop() {
  if [ -n "${SIM_PID:-}" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
