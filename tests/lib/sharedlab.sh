# Sourced by the tests that run the playbooks against the lifecycle lab of
# extensions/molecule/shared (tests/secrets/run.sh, tests/adversary/run.sh).
# Usage: sharedlab_args AREA "$@"
#   parses --venv DIR --collections DIR --pvesim BIN (absolute paths afterwards in VENV,
#   COLLECTIONS, PVESIM), checks that ansible-playbook and pvesim are there, names the lab
#   (MOLECULE_SCENARIO_NAME=AREA-$$: the shared inventory puts it in /tmp/dvt-molecule-<name>), makes
#   WORK=/tmp/dvt-AREA-test.*, and exports the Ansible settings these tests share.
# Sets: ROOT SHARED VENV COLLECTIONS PVESIM LAB WORK. The caller starts and stops the lab.
sharedlab_args() {
  local area=$1; shift
  ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  SHARED=$ROOT/extensions/molecule/shared
  VENV= COLLECTIONS= PVESIM=
  while [ $# -gt 0 ]; do
    case $1 in
      --venv) VENV=$(cd "$2" && pwd); shift 2 ;;
      --collections) COLLECTIONS=$(cd "$2" && pwd); shift 2 ;;
      --pvesim) PVESIM=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
      *) echo "usage: $0 --venv DIR --collections DIR --pvesim BIN" >&2; exit 2 ;;
    esac
  done
  [ -x "$VENV/bin/ansible-playbook" ] && [ -x "$PVESIM" ] || { echo "test-$area: missing ansible-playbook or pvesim" >&2; exit 2; }
  export MOLECULE_SCENARIO_NAME=$area-$$
  LAB=/tmp/dvt-molecule-$MOLECULE_SCENARIO_NAME
  WORK=$(mktemp -d "/tmp/dvt-$area-test.XXXXXX")
  export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
  export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_NOCOLOR=1
}
