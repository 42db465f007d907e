#!/usr/bin/env bash
# test/lab/demo.sh [up|show|down]: the substrate in a box for a person (make demo-lab).
#   up (default)  boot the lab (test/lab/lab.sh: QEMU guest, two PVE nodes running real ifupdown2
#                 and FRR, perimeter, hosts), run the shipped playbooks (fabric, onboard tdemo,
#                 tenant tdemo with two VMs spread over the nodes), plug the VMs in, then `show`.
#                 The lab keeps running for you to explore (the commands shown work as printed).
#   show          from inside tdemo-1: a ping to tdemo-2 (the other node, over the VNet's VXLAN)
#                 and a dig of tdemo-1's own records, forward and reverse, at the site resolver
#                 10.20.99.1; each command printed, then its output.
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
  local a b na nb ipa ipb zone
  read -r _ a na _ _ ipa _ < <(sed -n 1p "$LAB_DIR/vms")
  read -r _ b nb _ _ ipb _ < <(sed -n 2p "$LAB_DIR/vms")
  # the tenant's DNS zone, as onboarding recorded it in the attachment it wrote
  zone=$("$ROOT/.venv/bin/python" -c 'import sys, yaml; a = yaml.safe_load(open(sys.argv[1])); print(a.get("dns_zone") or a["dns"]["zone"])' \
    "$LAB_DIR/attachments/${a%-*}.yml" 2>/dev/null || echo "${a%-*}.mobile.deevnet.net")
  echo "== inside $a (${ipa%/*} on $na): ping $b (${ipb%/*} on $nb), the same VNet across the fabric (L2VNI)"
  run "$LAB" ssh lab ip netns exec "vm-$a" ping -c3 -W3 "${ipb%/*}"
  echo "== inside $a: its own records at the site resolver 10.20.99.1 (forward, reverse)"
  run "$LAB" ssh lab ip netns exec "vm-$a" dig +time=3 +tries=1 @10.20.99.1 "$a.$zone" A
  run "$LAB" ssh lab ip netns exec "vm-$a" dig +time=3 +tries=1 @10.20.99.1 -x "${ipa%/*}"
  if ! "$LAB" ssh lab ip netns exec "vm-$a" dig +time=3 +tries=1 +short @10.20.99.1 "$a.$zone" A 2>/dev/null | grep -q .; then
    # the lab's resolver host has an address but no Unbound yet (test/lab/README.md, Status):
    # the records exist, as the controller's DNS lab (PowerDNS + Unbound on loopback) answers them
    local port; port=$(sed -n "s/^\(export \)\{0,1\}DNS_LAB_UNBOUND_PORT=['\"]\{0,1\}\([0-9]*\).*/\2/p" "$LAB_DIR/dns/env")
    echo "== no answer from 10.20.99.1 inside the lab yet; the same records through the controller's Unbound (127.0.0.1:$port)"
    run dig +time=3 +tries=1 @127.0.0.1 -p "$port" "$a.$zone" A +short
    run dig +time=3 +tries=1 @127.0.0.1 -p "$port" -x "${ipa%/*}" +short
  fi
  echo "lab kept: LAB_DIR=$LAB_DIR; $LAB ssh lab ip netns list; make demo-lab-down LAB_DIR=$LAB_DIR"
}

case ${1:-up} in
  up)
    [ ! -e "$LAB_DIR" ] || { echo "demo-lab: $LAB_DIR exists (make demo-lab-down, or another LAB_DIR)" >&2; exit 2; }
    t=$(date +%s)
    LAB_TENANTS=$TDEMO "$LAB" up >/dev/null || { echo "demo-lab: lab.sh up failed; logs in $LAB_DIR" >&2; exit 1; }
    echo "demo-lab: lab up, fabric and tdemo converged, VMs plugged in $(( $(date +%s) - t )) s"
    show;;
  show) show;;
  down) "$LAB" down;;
  *) sed -n '2,12p' "$0"; exit 2;;
esac
