#!/usr/bin/env bash
# Runs tests/sdn/playbook.yml with ansible-playbook against the pvesim CLI on 127.0.0.1:
#   tests/sdn/run.sh --venv .venv --collections .ansible/collections --pvesim bin/pvesim
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/pvesim.sh
. "$HERE/../lib/pvesim.sh"

# A second node, for the Phase 2 member.
PVESIM_CONFIG_YAML='nodes:
  - {name: dv02hyp002p02, maxcpu: 16, maxmem: 68719476736}
  - {name: dv02hyp003p02, maxcpu: 16, maxmem: 68719476736}'
pvesim_test_start sdn "$@"

export SIM_TOKEN_FILE=$TOKEN_FILE
export ANSIBLE_HOME=${ANSIBLE_HOME:-$WORK/ansible-home}
start=$(date +%s.%N)
# From the work dir: no ansible.cfg of the caller applies.
(cd "$WORK" && "$VENV/bin/ansible-playbook" -i localhost, -c local "$HERE/playbook.yml")
echo "test-sdn: playbook green in $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
