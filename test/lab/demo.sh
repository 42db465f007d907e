#!/usr/bin/env bash
# test/lab/demo.sh [up|show|down]: the substrate in a box for a person (make demo-lab).
#   up (default)  boot the lab (test/lab/lab.sh: QEMU guest, two PVE nodes running real ifupdown2
#                 and FRR, perimeter, hosts), run the shipped playbooks (fabric, perimeter, onboard
#                 tdemo, tenant tdemo: three VMs on two VNets spread over the nodes), start the
#                 resolver host's Unbound, plug the VMs in, then `show`.
#                 The lab keeps running for you to explore (the commands shown work as printed).
#   show          from inside tdemo-1: a ping to tdemo-2 (the other node, over the VNet's VXLAN)
#                 and a dig of tdemo-1's own records, forward and reverse, at the site resolver
#                 10.20.99.1 (Unbound on the lab's resolver host); each command printed, then its
#                 output; fails when the ping or either answer is missing.
#   down          power the lab off and remove LAB_DIR.
# env: LAB_DIR (default /tmp/dvt-lab-demo), and lab.sh's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LAB=$ROOT/test/lab/lab.sh
export LAB_DIR=${LAB_DIR:-/tmp/dvt-lab-demo}
TDEMO=$ROOT/test/lab/tenants/tdemo.yml

# run CMD...: print the command as one would type it, then its output (indented); never fails
run() {
  echo "\$ LAB_DIR=$LAB_DIR ${*/#$ROOT\//}"
  "$@" 2>&1 | sed 's/^/    /' || true
  echo
}

show() {
  [ -s "$LAB_DIR/vms" ] || { echo "demo-lab: no VMs in $LAB_DIR/vms (make demo-lab first)" >&2; exit 2; }
  local a b na nb ba bb ipa ipb dom name node br cidr rc=0
  # a: the first VM; b: the first VM on a's VNet on another node (lab.sh vms: vmid name node bridge
  # mac cidr gw searchdomain, read back from pvesim)
  read -r _ a na ba _ ipa _ dom < <(sed -n 1p "$LAB_DIR/vms")
  while read -r _ name node br _ cidr _ _; do
    [ "$br" = "$ba" ] && [ "$node" != "$na" ] && { b=$name; nb=$node; bb=$br; ipb=$cidr; break; }
  done < "$LAB_DIR/vms"
  [ -n "${b:-}" ] || { echo "demo-lab: no VM on $ba on another node than $na in $LAB_DIR/vms" >&2; exit 1; }
  # the fabric has converged (OpenFabric, BGP EVPN, BFD; lab.sh waits up to LAB_CONVERGE s)
  "$LAB" only fabric >/dev/null || echo "demo-lab: the fabric has not converged (lab.sh only fabric)" >&2
  echo "== inside $a (${ipa%/*} on $na): ping $b (${ipb%/*} on $nb), the same VNet $bb across the fabric (L2VNI)"
  run "$LAB" ssh lab ip netns exec "vm-$a" ping -c3 -W3 "${ipb%/*}"
  echo "== inside $a: its own records at the site resolver 10.20.99.1 (Unbound on the resolver host, onboarding's"
  echo "   stub zones, PowerDNS behind it): forward, then reverse"
  run "$LAB" ssh lab ip netns exec "vm-$a" dig +time=3 +tries=2 @10.20.99.1 "$a.$dom" A
  run "$LAB" ssh lab ip netns exec "vm-$a" dig +time=3 +tries=2 @10.20.99.1 -x "${ipa%/*}"
  # the demo fails when what it showed did not work
  "$LAB" ssh lab ip netns exec "vm-$a" ping -c1 -W3 "${ipb%/*}" >/dev/null 2>&1 || { echo "demo-lab: FAIL $a -> $b no answer" >&2; rc=1; }
  [ "$("$LAB" ssh lab ip netns exec "vm-$a" dig +time=3 +tries=2 +short @10.20.99.1 "$a.$dom" A 2>&1)" = "${ipa%/*}" ] \
    || { echo "demo-lab: FAIL 10.20.99.1 does not answer $a.$dom A with ${ipa%/*}" >&2; rc=1; }
  [ "$("$LAB" ssh lab ip netns exec "vm-$a" dig +time=3 +tries=2 +short @10.20.99.1 -x "${ipa%/*}" 2>&1)" = "$a.$dom." ] \
    || { echo "demo-lab: FAIL 10.20.99.1 does not answer ${ipa%/*} PTR with $a.$dom." >&2; rc=1; }
  echo "lab kept: LAB_DIR=$LAB_DIR; $LAB ssh lab ip netns list; make demo-lab-down LAB_DIR=$LAB_DIR"
  return $rc
}

case ${1:-up} in
  up)
    [ ! -e "$LAB_DIR" ] || { echo "demo-lab: $LAB_DIR exists (make demo-lab-down, or another LAB_DIR)" >&2; exit 2; }
    t=$(date +%s)
    LAB_TENANTS=$TDEMO "$LAB" up >/dev/null || { echo "demo-lab: lab.sh up failed; logs in $LAB_DIR" >&2; exit 1; }
    echo "demo-lab: lab up, fabric, perimeter and tdemo converged, VMs plugged in $(( $(date +%s) - t )) s"
    show;;
  show) show;;
  down) "$LAB" down;;
  *) sed -n '2,12p' "$0"; exit 2;;
esac
