#!/usr/bin/env bash
# tests/substrate/quorum.sh: the fabric playbook's quorum rule (docs/adr/0015-quorum.md), on
# examples/substrate's inventory as it ships, in check mode. The rule is checked before any API
# call, so no PVE is needed: a refused inventory fails at the quorum check, an accepted one gets past
# it (and then stops at the unreachable example PVE, which this test does not need).
#   - two hypervisors and the example's substrate_qdevice: accepted
#   - two hypervisors, substrate_qdevice empty: refused, naming substrate_qdevice and the rule
#   - the QDevice on a member: refused
#   - one hypervisor (Phase 1) without a QDevice: accepted (quorate alone)
#   - three hypervisors without a QDevice: accepted (an odd number has a majority)
#   - four without: refused
# usage: quorum.sh --venv DIR --collections DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=$ROOT/.venv; COLL=$ROOT/.ansible/collections
while [ $# -gt 0 ]; do case $1 in --venv) VENV=$2; shift 2;; --collections) COLL=$2; shift 2;; *) echo "unknown $1"; exit 2;; esac; done
W=$(mktemp -d /tmp/dvt-quorum.XXXXXX); trap 'rm -rf "$W"' EXIT
cp -r "$ROOT/examples/substrate" "$W/repo"
# Phase 1's repository: the example with its first hypervisor only
cp -r "$ROOT/examples/substrate" "$W/repo1"; sed -i '/^ *dv02hyp002p03: {}$/d' "$W/repo1/inventory/hosts.yml"
rc=0
pass(){ echo "ok   $*"; }
fail(){ echo "FAIL $*"; rc=1; }

# more hypervisors: p04.. as the example's p03 with the next addresses (site.yml checks them)
hosts(){ # N: an inventory with N hypervisors (p02, p03, p04..), the example's host_vars for the first two
  local n=$1 i
  echo "all: {children: {hypervisors: {hosts: {"
  for i in $(seq 2 $((n + 1))); do
    if [ "$i" -le 3 ]; then echo "  dv02hyp002p0$i: {},"
    else echo "  dv02hyp002p0$i: {substrate_node: {loopback: 10.20.255.$i, bridge_ports: [eno1], management: 10.20.10.$i/24, transit: 10.20.50.$i/24, underlay: 10.20.51.$i/24}},"; fi
  done
  echo "}}}}"
}
# run NAME N QDEVICE: the fabric playbook with N hypervisors (only those) and substrate_qdevice QDEVICE
run(){
  local name=$1 n=$2 q=$3
  if [ "$n" = 1 ]; then echo "all: {}" > "$W/$name.yml"; else hosts "$n" > "$W/$name.yml"; fi
  local repo=$W/repo; [ "$n" != 1 ] || repo=$W/repo1
  (cd "$repo" && ANSIBLE_COLLECTIONS_PATH=$COLL "$VENV/bin/ansible-playbook" -i inventory -i "$W/$name.yml" deevnet.tenant.fabric --check \
    -e "{\"substrate_qdevice\": \"$q\"}" -e vault_substrate_pve_token_secret=x -e vault_substrate_pdns_api_key=x) > "$W/$name.log" 2>&1
}
quorum_result(){ # LOG: ok or the quorum check's message
  awk '/TASK \[.*Check the cluster.s quorum \(/ {f=1; next} f && /^(ok|fatal)/ {print; exit}' "$1"
}
accepted(){ # NAME N QDEVICE
  run "$@"; local r; r=$(quorum_result "$W/$1.log")
  if [ "${r#ok}" != "$r" ]; then pass "$1: $2 hypervisor(s), substrate_qdevice '$3': past the quorum check"
  else fail "$1: $2 hypervisor(s), substrate_qdevice '$3': ${r:-the quorum check did not run}"; grep -E 'fatal' "$W/$1.log" | head -3 | cut -c1-400; fi
}
refused(){ # NAME N QDEVICE WANT
  run "$1" "$2" "$3"; local r; r=$(quorum_result "$W/$1.log")
  if [ "${r#fatal}" != "$r" ] && grep -qF -- "$4" <<<"$r" && ! grep -q "Stage the fabric" "$W/$1.log"; then
    pass "$1: refused before any API call: $(sed -n 's/.*"msg": "\([^"]*\)".*/\1/p' <<<"$r" | cut -c1-200)"
  else fail "$1: wanted a refusal naming [$4], got: ${r:-no quorum check}"; fi
}
accepted two-with-qdevice 2 dv02hyp001p01
refused two-without 2 "" "substrate_qdevice: the group hypervisors has 2 members, an even number: without a QDevice the cluster loses quorum with 1 of them away (votequorum: 1 votes of 2, quorum 2)"
refused qdevice-on-member 2 dv02hyp002p03 "substrate_qdevice: dv02hyp002p03 is a member of hypervisors: the QDevice must run outside the fabric"
accepted one-member 1 ""
accepted three-members 3 ""
refused four-without 4 "" "has 4 members, an even number: without a QDevice the cluster loses quorum with 2 of them away (votequorum: 2 votes of 4, quorum 3)"
exit $rc
