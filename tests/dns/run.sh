#!/usr/bin/env bash
# Runs tests/dns/playbook.yml with ansible-playbook against a fresh scripts/dns-lab.sh (PowerDNS +
# Unbound on loopback), then checks the key secret appears nowhere in the -vvv output.
#   tests/dns/run.sh --venv .venv --collections .ansible/collections
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
VENV= COLLECTIONS=
while [ $# -gt 0 ]; do
  case $1 in
    --venv) VENV=$2; shift 2 ;;
    --collections) COLLECTIONS=$2; shift 2 ;;
    *) echo "usage: $0 --venv DIR --collections DIR" >&2; exit 2 ;;
  esac
done
[ -x "$VENV/bin/ansible-playbook" ] || { echo "missing $VENV/bin/ansible-playbook (make venv)" >&2; exit 1; }
VENV=$(cd "$VENV" && pwd); COLLECTIONS=$(cd "$COLLECTIONS" && pwd)
export DNS_LAB_DIR
DNS_LAB_DIR=$(mktemp -d /tmp/dvt-dns-test.XXXXXX)
trap '"$ROOT/scripts/dns-lab.sh" down; rm -rf "$DNS_LAB_DIR"' EXIT
"$ROOT/scripts/dns-lab.sh" up >/dev/null
set -a; . "$DNS_LAB_DIR/env"; set +a
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_NOCOLOR=1
export ANSIBLE_PYTHON_INTERPRETER=$VENV/bin/python
cd "$DNS_LAB_DIR"   # no ansible.cfg from the caller's directory
start=$(date +%s%N)
log=$DNS_LAB_DIR/playbook.log
if ! "$VENV/bin/ansible-playbook" -vvv -i localhost, -c local "$HERE/playbook.yml" >"$log" 2>&1; then
  grep -E '^(TASK|fatal|failed)|"msg"' "$log" | tail -40 || true; echo "test-dns: playbook FAILED (log: $log)"; trap - EXIT
  "$ROOT/scripts/dns-lab.sh" down; exit 1
fi
grep -E '^PLAY RECAP' -A1 "$log"
for s in "$DNS_LAB_KEY_TENANT_TDEMO" "$DNS_LAB_KEY_TENANT_TOTHER"; do
  if grep -qF "$s" "$log"; then echo "test-dns: FAILED, a TSIG secret appears in the -vvv output"; exit 1; fi
done
echo "test-dns: playbook green, no secret in $(wc -l <"$log") lines of -vvv output, $(( ($(date +%s%N) - start) / 1000000 )) ms"
