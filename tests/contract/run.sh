#!/usr/bin/env bash
# tests/contract/run.sh --venv DIR --collections DIR: tests/contract/playbook.yml and substrate.yml against the
# installed collection: each rejection rule of the tenant contract refuses its declaration.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv= coll=
while [ $# -gt 0 ]; do
  case $1 in
    --venv) venv=$2; shift 2 ;; --collections) coll=$2; shift 2 ;;
    *) echo "usage: $0 --venv DIR --collections DIR" >&2; exit 2 ;;
  esac
done
export ANSIBLE_COLLECTIONS_PATH=$coll ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false ANSIBLE_NOCOLOR=1
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false
log=$(mktemp /tmp/dvt-contract.XXXXXX); trap 'rm -f "$log"' EXIT
if "$venv/bin/ansible-playbook" -i localhost, -e "ansible_python_interpreter=$venv/bin/python" "$here/playbook.yml" >"$log" 2>&1; then
  n=$(grep -c 'TASK \[Run the tenant role on the declaration\]' "$log" || true)
  echo "test-contract: every rule refused its declaration, naming the field ($n declarations)"
else
  grep -E 'FAILED|fatal|msg' "$log" | tail -30; echo "test-contract: FAILED"; exit 1
fi
# The substrate role's site, hypervisor and tenant-file rules (tests/contract/substrate.yml).
if "$venv/bin/ansible-playbook" -i localhost, -e "ansible_python_interpreter=$venv/bin/python" "$here/substrate.yml" >"$log" 2>&1; then
  n=$(grep -c 'TASK \[Run the substrate role.s checks\]' "$log" || true)
  echo "test-contract: every substrate rule refused its inventory, naming the key and host ($n inventories)"
else
  grep -E 'FAILED|fatal|msg' "$log" | tail -30; echo "test-contract: substrate rules FAILED"; exit 1
fi
