#!/usr/bin/env bash
# test/lab/probe.sh: packets from inside the tenants' VMs (issue 24, docs/security.md), on a lab at
# stage D (lab.sh check probes; LAB_DIR set, the tenants converged and their VMs plugged).
#  1. The sweep: from inside every tenant VM, ICMP echo, TCP 22/53/179/8006 and UDP 53/3784/3785/4789
#     to every site address (probe.py: read from the inventory, pvesim and the nodes' rendered
#     files), all side by side with short timeouts (guest/sweep.py). Each receiver (the nodes, the
#     perimeter, the management host, the controller's leg, the DNS host, the outside host, the
#     VMs) counts in nftables what reached it from a tenant address; a forbidden destination passes
#     when nothing answered and its counters are 0, an allowed flow (the resolver on 53, the
#     egress through NAT, the tenant's own peers, its gateway's ICMP) when it answered and counted.
#  2. The vmbr0 move: with nothing but the tenant's attachment file (its token), PUT net0 of its
#     first VM onto the site bridge must answer 403; lab.sh vms then plugs the VM where pvesim says
#     (still its VNet), and from inside it, with an on-link route to the management segment, not a
#     packet reaches any management address. Were the PUT accepted, net0 is put back afterwards
#     (the substrate's token) so that the checks after this one find the lab as converged.
#   env: LAB_DIR, VENV, LAB_INVENTORY (default examples/substrate/inventory), PROBE_TENANT (tdemo)
# Output: the table (LAB_DIR/probes.txt) and ok/FAIL lines; exit 1 on any FAIL.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/test/lab
VENV=${VENV:-$ROOT/.venv}
INVENTORY=${LAB_INVENTORY:-$ROOT/examples/substrate/inventory}
TENANT=${PROBE_TENANT:-tdemo}
sshl() { ssh -F "$LAB_DIR/ssh_config" "$@"; }
py() { PYTHONPATH=$HERE "$VENV/bin/python" "$HERE/probe.py" "$@"; }
t0=$(date +%s%N)
fail=0

# sweep NAME: the plan in LAB_DIR/NAME.json run in the guest; its table into LAB_DIR/NAME.txt
sweep() {
  sshl lab "mkdir -p /run/lab && cat > /run/lab/sweep.py" < "$HERE/guest/sweep.py" || return 1
  sshl lab "cat > /run/lab/$1.json" < "$LAB_DIR/$1.json" || return 1
  sshl lab "python3 /run/lab/sweep.py run /run/lab/$1.json" > "$LAB_DIR/$1.txt" 2>&1 </dev/null; local rc=$?
  sed 's/^/       /' "$LAB_DIR/$1.txt"
  return $rc
}

# 1. the sweep
if ! py sweep "$LAB_DIR" "$INVENTORY" > "$LAB_DIR/probes.json"; then echo "FAIL probes: no plan (above)"; exit 1; fi
if sweep probes; then echo "ok   probes: $(tail -1 "$LAB_DIR/probes.txt")"
else echo "FAIL probes: $(tail -1 "$LAB_DIR/probes.txt")"; grep -E ' FAIL ' "$LAB_DIR/probes.txt" | sed 's/^/FAIL probe /'; fail=1; fi

# 2. the vmbr0 move
read -r status vm node vmid vnet reason < <(py move "$LAB_DIR" "$INVENTORY" "$TENANT")
bridge=$("$VENV/bin/ansible-inventory" -i "$INVENTORY" --host "$node" 2>/dev/null | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["substrate_site"]["bridge"])')
if [ "${status:-}" = 403 ]; then echo "ok   $TENANT's token: PUT /nodes/$node/qemu/$vmid/config net0 on $bridge: 403 $reason"
else echo "FAIL $TENANT's token: PUT /nodes/$node/qemu/$vmid/config net0 on $bridge: ${status:-no answer} ${reason:-}"; fail=1; fi
LAB_DIR=$LAB_DIR VENV=$VENV "$HERE/lab.sh" vms || fail=1
now=$(sshl lab "ip -n $node -o link show tap${vmid}i0" </dev/null | grep -o ' master [^ ]*' | cut -d' ' -f3)
if [ "$now" = "$vnet" ]; then echo "ok   $vm plugged where pvesim says: tap${vmid}i0 on $now ($node)"
else echo "FAIL $vm plugged on ${now:-nothing} ($node), was $vnet"; fail=1; fi
if py movesweep "$LAB_DIR" "$INVENTORY" "$TENANT" > "$LAB_DIR/probes-move.json" && sweep probes-move; then
  echo "ok   $vm (on $now, an on-link route to the management segment): $(tail -1 "$LAB_DIR/probes-move.txt")"
else echo "FAIL $vm (on ${now:-nothing}, an on-link route to the management segment): $(tail -1 "$LAB_DIR/probes-move.txt" 2>/dev/null)"
  grep -E ' FAIL ' "$LAB_DIR/probes-move.txt" 2>/dev/null | sed 's/^/FAIL probe /'; fail=1; fi
if [ "${status:-}" != 403 ] && [ -n "${vnet:-}" ]; then
  py restore "$LAB_DIR" "$TENANT" "$vnet" && LAB_DIR=$LAB_DIR VENV=$VENV "$HERE/lab.sh" vms && echo "note $vm's net0 put back on $vnet (the substrate's token)"
fi
echo "note probes: $(( ($(date +%s%N) - t0) / 1000000 )) ms (table: $LAB_DIR/probes.txt, $LAB_DIR/probes-move.txt)"
exit $fail
