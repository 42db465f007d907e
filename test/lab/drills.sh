#!/usr/bin/env bash
# test/lab/drills.sh: day 2 in the substrate in a box (issue 25), on a lab lab.sh boots.
#   drills.sh test      one lab: phase 2 (test/lab/phase2.sh, kept up: tdemo on both nodes; its
#                       checks count) or, with DRILL_LAB=up, lab.sh up with LAB_TENANTS; then traffic,
#                       drill (a) with drill (b) inside its failure, drill (c); then down (also on
#                       failure); exit 1 when any fails
#   drills.sh traffic   (LAB_DIR of a lab with DRILL_FLOW_TENANT converged) tdemo's flows run while the
#                       other tenant (DRILL_OTHER) is onboarded, converged, converged with a change
#                       (memory + one VM more) and destroyed, and the fabric playbook runs as a no-op;
#                       lost packets and the longest gap per event (flows.py); 0 lost is the goal
#   drills.sh fail      drill (a): on a converged fabric (BGP and BFD up, the failing node's VM known
#                       on the other node), p03 fails (trunk down, FRR killed); tdemo's VMs on the other node
#                       keep egress and DNS; BFD detection and EVPN withdrawal timed against the BFD
#                       detection time of the rendered frr.conf; p03 reboots from its disk and every
#                       check is green
#   drills.sh maint     drill (b): the other tenant converged; the node fails; a converge with the
#                       change fails naming it and changes nothing; with the node in maintenance
#                       (substrate_maintenance) it converges, places new VMs on online nodes and
#                       reports what is left; the node returns; the next converge finishes; every
#                       check is green
#   drills.sh site      drill (c): the registry lost and rebuilt from PVE and DNS (registry playbook);
#                       then the site wiped (lab.sh wipe) and rebuilt by one command, the site
#                       playbook, from the inventory, the registry, the attachments and the tenants'
#                       declarations (test/lab/tenants); every check green; the times printed
#   drills.sh back NODE a node a stopped drill left failed, rebooted from its disk and back online
# Every drill writes its events with timestamps to LAB_DIR/drill.log (and prints them).
# env: LAB_DIR, DRILL_FLOW_TENANT (tdemo), DRILL_OTHER (test/lab/tenants/tother.yml),
#      DRILL_NODE (the node that fails: the inventory's last hypervisor), DRILL_SETTLE (5 s after each
#      event, counted in its window), DRILL_INTERVAL (0.05 s between a flow's packets);
#      DRILL_LAB (phase2, or up: the lab of `drills.sh test`);
#      the controls, each of which must make its drill fail: DRILL_NO_BFD=1 (drill (a): BFD taken
#      out of both nodes' FRR until the failure is timed), DRILL_RESTART_FRR=1 (traffic:
#      every SDN apply restarts FRR), DRILL_IGNORE_MAINT=1 (drill (b): the maintenance variable
#      left out of the converge that needs it), DRILL_NO_QDEVICE=1 (drills (a)/(b): the QDevice's host goes
#      down with the node, so the two-node cluster has no quorum and the converge must fail naming it)
set -euo pipefail
# The drills measure recovery; the envelope's kernel-level proof (check_envelope) is
# test-lab-tenants' and needs both tenants of the start, which drill (c)'s rebuilt site lacks.
export LAB_ENVELOPE=${LAB_ENVELOPE:-0}
# the wire's probes are test-lab-tenants' too (they need two tenants); the wire itself stays loaded
export LAB_WIRE_CHECK=${LAB_WIRE_CHECK:-0}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/test/lab
VENV=${VENV:-$ROOT/.venv}
FLOW_TENANT=${DRILL_FLOW_TENANT:-tdemo}
OTHER=${DRILL_OTHER:-$HERE/tenants/tother.yml}
SETTLE=${DRILL_SETTLE:-5}
INTERVAL=${DRILL_INTERVAL:-0.05}
export VENV

lab() { "$HERE/lab.sh" "$@"; }
sshl() { ssh -F "$LAB_DIR/ssh_config" "$@"; }
log() { echo "drills: $*" >&2; }
# gnow, flows_run, flows_stop
# shellcheck source=test/lab/flows.sh
. "$HERE/flows.sh"
# dlog LINE: the drill log an operator reads (LAB_DIR/drill.log), and stdout
dlog() { echo "$*" | tee -a "$LAB_DIR/drill.log"; }
need_lab() { [ -n "${LAB_DIR:-}" ] && [ -f "$LAB_DIR/ssh_config" ] || { log "LAB_DIR not set (lab.sh up prints it)"; exit 2; }; }

# event NAME CMD...: CMD timed as the event NAME (guest clock, DRILL_SETTLE seconds after it counted)
event() {
  local name=$1 start end d0; shift
  start=$(gnow); d0=$(drops)
  log "event: $name"
  "$@"
  sleep "$SETTLE"
  end=$(gnow)
  echo "${name// /_} $start $end" >> "$LAB_DIR/events"
  echo "$name: the BGP EVPN session between the nodes dropped $(( $(drops) - d0 ))x" >> "$LAB_DIR/events.drops"
}

# drops: how many times the first node's BGP EVPN session to the second was dropped so far (BFD
# down, hold time, a restart of either side's FRR)
drops() {
  local a b
  a=$(tr ' ' '\n' < "$LAB_DIR/nodes" | grep . | head -1 | cut -d, -f1)
  b=$(tr ' ' '\n' < "$LAB_DIR/nodes" | grep . | sed -n 2p | cut -d, -f4)
  sshl "$a" "vtysh -c 'show bgp neighbor $b'" </dev/null | sed -n 's/.*Connections established [0-9]*; dropped \([0-9]*\).*/\1/p' | head -1 | grep . || echo 0
}

# flows_start: tdemo's flows, chosen from the VMs pvesim holds (LAB_DIR/vms: vmid name node bridge
# mac cidr gw domain): l2vni between two VMs of one VNet on two nodes, l3vni between two VNets on
# two nodes, egress from one VM on each node to the outside host. Each is `ping -D -O` in the
# VM's namespace, its log and pid under /run/lab/flows in the guest.
flows_start() {
  local spec
  spec=$("$VENV/bin/python" - "$LAB_DIR/vms" "$FLOW_TENANT" <<'PY'
import sys
vms = [l.split() for l in open(sys.argv[1]) if l.split() and l.split()[1].startswith(sys.argv[2] + "-")]
flows, seen = {}, set()
for a in vms:
    for b in vms:
        if a[2] == b[2]:
            continue
        ip = b[5].split("/")[0]
        if a[3] == b[3]:
            flows.setdefault("l2vni", (a[1], ip))
        else:
            flows.setdefault("l3vni", (a[1], ip))
for a in vms:
    if a[2] not in seen:
        seen.add(a[2])
        flows["egress-" + a[2]] = (a[1], "198.51.100.1")
for name in ("l2vni", "l3vni"):
    if name not in flows:
        sys.exit("no %s pair among %s's VMs: two nodes and two VNets are needed" % (name, sys.argv[2]))
for name, (vm, dst) in sorted(flows.items()):
    print(name, vm, dst)
PY
)
  echo "$spec" > "$LAB_DIR/flows"
  echo "$spec" | flows_run "$INTERVAL"
  log "flows: $(echo "$spec" | awk '{printf "%s (%s -> %s) ", $1, $2, $3}')"
}


# tenant_field FILE: "name index" of a declaration
tenant_field() {
  "$VENV/bin/python" -c 'import sys, yaml; t = yaml.safe_load(open(sys.argv[1]))["tenant"]; print(t["name"], t["index"])' "$1"
}

# changed FILE OUT: the declaration with every VM's memory doubled and one VM more (spread), as an
# operator's change would be
changed() {
  "$VENV/bin/python" - "$1" "$2" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
vms = d["tenant"]["vms"]
vms["memory"] = 2 * vms["memory"]
vms["count"] += 1
if vms.get("vnet"):
    vms["vnet"].append(0)
yaml.safe_dump(d, open(sys.argv[2], "w"))
PY
}

# restarts: how many times reload.sh restarted FRR on any node so far
restarts() { cat "$LAB_DIR"/reload-*.log 2>/dev/null | grep -c 'restarting frr' || true; }

tenant_converge() { lab playbook deevnet.tenant.tenant -e "tenant_file=$1"; lab vms; }

# traffic: part 1 of issue 25 (see the header); the table goes to the drill log
traffic() {
  need_lab
  local name index t r0 r0b rc=0
  read -r name index < <(tenant_field "$OTHER")
  changed "$OTHER" "$LAB_DIR/other-changed.yml"
  : > "$LAB_DIR/events"; : > "$LAB_DIR/events.drops"
  r0=$(restarts)
  lab vms
  # the flows start on a converged lab: BGP EVPN and BFD up, every VM's MAC learnt (check_tenants)
  LAB_CONVERGE=${LAB_CONVERGE:-600} lab only fabric tenants > "$LAB_DIR/check-before-traffic.log" 2>&1 \
    || { grep FAIL "$LAB_DIR/check-before-traffic.log" >&2; log "the lab is not converged"; return 1; }
  if [ -n "${DRILL_RESTART_FRR:-}" ]; then
    # the control: every SDN apply restarts FRR (reload.sh); the drill must then fail
    touch "$LAB_DIR/reload.restart"; log "control: every SDN apply restarts FRR"
  fi
  flows_start
  sleep 3
  t=$(gnow); sleep 10; echo "calm_(no_event) $t $(gnow)" >> "$LAB_DIR/events"
  event "onboard $name" lab playbook deevnet.tenant.onboard -e "tenant_name=$name" -e "tenant_index=$index"
  event "converge $name (first run)" tenant_converge "$OTHER"
  event "converge $name (memory x2, one VM more)" tenant_converge "$LAB_DIR/other-changed.yml"
  event "destroy $name" lab destroy "$LAB_DIR/other-changed.yml"
  r0b=$(restarts)
  event "fabric playbook (no-op)" lab playbook deevnet.tenant.fabric
  rm -f "$LAB_DIR/reload.restart"
  flows_stop "$LAB_DIR/flows.d"
  dlog ""
  dlog "## Traffic during other tenants' events ($(date -u +%F), flows of $FLOW_TENANT every ${INTERVAL} s, each event's window includes ${SETTLE} s after it)"
  dlog ""
  "$VENV/bin/python" "$HERE/flows.py" "$LAB_DIR/events" "$LAB_DIR/flows.d" | tee -a "$LAB_DIR/drill.log" || rc=1
  sed 's/^/     /' "$LAB_DIR/events.drops" | tee -a "$LAB_DIR/drill.log"
  # no tenant apply may restart FRR (reload.sh logs each restart): a restart drops every BGP
  # session and EVPN route of the node, every tenant's traffic with them
  if [ "$r0b" -ne "$r0" ]; then
    dlog "FAIL FRR restarted $((r0b - r0))x during the tenant events (LAB_DIR/reload-*.log)"; rc=1
  else dlog "ok   FRR reloaded, never restarted, during the tenant events"; fi
  lab only destroyed || rc=1
  return $rc
}

# node_spec NAME: "NODE,MGMT,PORT,LOOPBACK,UNDERLAY" of a node (LAB_DIR/nodes, from the inventory)
node_spec() { tr ' ' '\n' < "$LAB_DIR/nodes" | grep "^$1,"; }

# bfd_bound NODE: the BFD detection time (ms) the rendered frr.conf gives the EVPN sessions:
# detect-multiplier x receive-interval of the profile its neighbors use, FRR's defaults (3 x 300 ms)
# when they name none. Said on stderr when the neighbors have no BFD at all: then BGP's hold time
# detects a failure, and the drill's check on the detection time fails.
bfd_bound() {
  sshl "$1" cat /etc/frr/frr.conf </dev/null | awk '
    / neighbor [^ ]+ bfd( |$)/ {bfd = 1; if ($4 == "profile") prof = $5}
    /^bfd/ {inbfd = 1} /^ profile / && inbfd {cur = $2}
    cur != "" && / detect-multiplier / {mult[cur] = $2}
    cur != "" && / receive-interval / {rx[cur] = $2}
    END {
      if (!bfd) print "none"
      m = (prof != "" && mult[prof] != "") ? mult[prof] : 3
      r = (prof != "" && rx[prof] != "") ? rx[prof] : 300
      print m, r, m * r
    }'
}

# watch_start NODE PEER_LO BRIDGE ZONE MAC IP: on NODE, what it knows of PEER_LO, every ~0.1 s
# into /run/lab/watch-NODE.log: "time bfd|<status> bgp|<state>" from vtysh and, faster, "time fdb
# N route N" from the kernel: the VM's MAC behind PEER_LO in the VNet's VXLAN fdb (EVPN type-2)
# and its host route via PEER_LO in the tenant's VRF (L3VNI)
watch_start() {
  sshl "$1" "cat > /run/lab/watch.sh" <<'SH'
#!/bin/sh
# watch.sh NODE PEER_LO BRIDGE ZONE MAC IP (on NODE; drills.sh)
n=$1 lo=$2 br=$3 zone=$4 mac=$5 ip=$6
rm -f /run/lab/watch.stop; : > "/run/lab/watch-$n.log"
while [ ! -e /run/lab/watch.stop ]; do
  b=$(vtysh -c "show bfd peers brief" 2>/dev/null | awk -v p="$lo" '$3 == p {print $4}')
  g=$(vtysh -c "show bgp neighbor $lo" 2>/dev/null | sed -n 's/.*BGP state = \([A-Za-z]*\).*/\1/p' | head -1)
  echo "$(date +%s.%N) bfd ${b:-none} bgp ${g:-none}"
  sleep 0.1
done >> "/run/lab/watch-$n.log" 2>/dev/null &
while [ ! -e /run/lab/watch.stop ]; do
  f=$(bridge fdb show dev "vxlan_$br" | grep -i "$mac" | grep -c "dst $lo ")
  r=$(ip route show vrf "vrf_$zone" "$ip" | grep -c "via $lo ")
  echo "$(date +%s.%N) fdb $f route $r"
  sleep 0.05
done >> "/run/lab/watch-$n.log" 2>/dev/null &
SH
  sshl "$1" "setsid sh /run/lab/watch.sh $* </dev/null >/dev/null 2>&1" </dev/null
}

# settled LOG NOBFD SECONDS: polls the watcher's log until its latest samples show BGP Established,
# BFD up (unless NOBFD: no bfd rendered) and the VM's MAC and host route learnt via the peer
settled() {
  local i
  for i in $(seq 1 $(( $3 * 2 ))); do
    sshl lab "cat /run/lab/watch-$DNODE_O.log" > "$1" </dev/null
    awk -v nobfd="$2" '$2 == "bfd" {b = $3; g = $5} $2 == "fdb" {f = $3; r = $5}
      END {exit !(g == "Established" && (nobfd || b == "up") && f > 0 && r > 0)}' "$1" && return 0
    sleep 0.5
  done
  return 1
}

# first LOG SINCE AWK_COND: the first time at or after SINCE at which a line matches
first() { awk -v s="$2" "\$1 >= s && ($3) {print \$1; exit}" "$1"; }

# wait_for LOG SINCE AWK_COND SECONDS: first, polled
wait_for() {
  local i t
  for i in $(seq 1 $(( $4 * 2 ))); do
    sshl lab "cat /run/lab/watch-$DNODE_O.log" > "$1" </dev/null
    t=$(first "$1" "$2" "$3"); [ -n "$t" ] && { echo "$t"; return 0; }
    sleep 0.5
  done
  return 1
}

# secs A B: B - A in seconds, 2 decimals
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
# stamp T: the guest time T as HH:MM:SS.s (UTC)
stamp() { awk -v t="$1" 'BEGIN {printf "%s.%d", strftime("%H:%M:%S", int(t), 1), (t - int(t)) * 10}'; }

# only_vms_on NODE CHECK...: lab.sh's checks for the VMs on NODE alone (LAB_DIR/vms filtered)
only_vms_on() {
  local node=$1 rc=0; shift
  cp "$LAB_DIR/vms" "$LAB_DIR/vms.all"
  awk -v n="$node" '$3 == n' "$LAB_DIR/vms.all" > "$LAB_DIR/vms"
  lab only "$@" || rc=1
  mv "$LAB_DIR/vms.all" "$LAB_DIR/vms"
  return $rc
}

# sim NODE online|offline: the cluster sees the node leave or return (corosync): pvesim's admin
# endpoint; prints what pvesim did
sim() {
  PYTHONPATH=$HERE "$VENV/bin/python" -c 'import sys; from pvesimapi import Pvesim; r = Pvesim(sys.argv[1]).call("/_sim/nodes/%s/%s" % (sys.argv[2], sys.argv[3]), method="POST", auth=False); print("pvesim: %s %s: %s" % (sys.argv[2], sys.argv[3], " / ".join(r.get("data") or []) if isinstance(r, dict) else ""))' "$LAB_DIR" "$1" "$2"
}

# quorum_line: votequorum's figures as pvesim has them (GET /_sim/quorum: ADR-0015)
quorum_line() {
  PYTHONPATH=$HERE "$VENV/bin/python" -c 'import sys; from pvesimapi import Pvesim; q = Pvesim(sys.argv[1]).call("/_sim/quorum", auth=False)["data"]; d = q.get("qdevice")
print("quorum: quorate %s, %d votes of %d expected (quorum %d); %s" % ("yes" if q["quorate"] else "NO", q["total_votes"], q["expected_votes"], q["quorum"],
      "QDevice %s (%s, %d vote(s)) %s" % (d["host"], d["algorithm"], d["votes"], "up, vote cast" if d["cast_vote"] else "down") if d else "no QDevice"))' "$LAB_DIR"
}

# corosync_agrees NODE T0 WHAT: NODE's real corosync (knet on the management network, the QDevice
# from deevnet.tenant.qdevice) against pvesim's quorum: waits (at most 60 s) until corosync counts
# the total votes pvesim counts and is as quorate as pvesim says (votequorum turns Quorate a moment
# after the vote that makes it: seen 2 votes of 3, quorum 2, still "Quorate No"), then logs the
# seconds since T0 and corosync's figures; "FAIL corosync" when it never gets there (pvesim's model
# would then not be PVE's). Writes only to the drill log.
corosync_agrees() {
  local n=$1 t0=$2 what=$3 want v
  want=$(PYTHONPATH=$HERE "$VENV/bin/python" -c 'import sys; from pvesimapi import Pvesim; q = Pvesim(sys.argv[1]).call("/_sim/quorum", auth=False)["data"]; print(q["total_votes"], "Yes" if q["quorate"] else "No")' "$LAB_DIR")
  if v=$(sshl lab "/lab/corosync.sh wait $n ${want% *} $t0 60 ${want#* }" </dev/null); then
    # shellcheck disable=SC2086
    set -- $v
    if [ "$2" = "${want#* }" ]; then
      echo "ok   corosync on $n $what ${1} s after it: Quorate $2, $3 votes of $4 expected (quorum $5), flags ${*:6}; pvesim agrees (${want% *} votes, quorate ${want#* })"
    else
      echo "FAIL corosync on $n $what: Quorate $2 ($3 votes of $4, quorum $5) where pvesim says quorate ${want#* } with ${want% *} votes"
    fi
  else
    echo "FAIL corosync on $n never counted pvesim's ${want% *} votes, quorate ${want#* }, within 60 s ($what): $v"
  fi >> "$LAB_DIR/drill.log"
}

# qdevice_host down|up: the QDevice's host (the lab's mgmt namespace) fails (corosync-qnetd killed)
# or returns (started again), and pvesim's QDevice with it
qdevice_host() {
  PYTHONPATH=$HERE "$VENV/bin/python" -c 'import sys; from pvesimapi import Pvesim; Pvesim(sys.argv[1]).call("/_sim/qdevice/" + sys.argv[2], method="POST", auth=False)' "$LAB_DIR" "$1" >/dev/null
  if [ "$1" = down ]; then
    # shellcheck disable=SC2016
    sshl lab 'for p in $(ip netns pids mgmt); do [ "$(cat /proc/$p/comm)" != corosync-qnetd ] || kill -9 $p; done' </dev/null
  else sshl lab '/lab/nodeexec mgmt /lab/corosync.sh qnetd' </dev/null; fi
}

# has_qdevice: pvesim's cluster has a QDevice (LAB_NO_QDEVICE=1 starts it without one)
has_qdevice() {
  PYTHONPATH=$HERE "$VENV/bin/python" -c 'import sys; from pvesimapi import Pvesim; sys.exit(0 if Pvesim(sys.argv[1]).call("/_sim/quorum", auth=False)["data"].get("qdevice") else 1)' "$LAB_DIR"
}

# node_down NODE: the node fails as one losing power: its trunk down and every FRR daemon, corosync
# and corosync-qdevice killed at once, then pvesim's node offline. Prints the guest time of the
# failure.
node_down() {
  local spec port o t0
  spec=$(node_spec "$1"); port=$(echo "$spec" | cut -d, -f3)
  o=$(tr ' ' '\n' < "$LAB_DIR/nodes" | grep . | grep -v "^$1," | head -1 | cut -d, -f1)
  # shellcheck disable=SC2016
  t0=$(sshl lab "date +%s.%N; ip -n $1 link set $port down
    for p in \$(ip netns pids $1); do case \$(cat /proc/\$p/comm) in zebra|bgpd|bfdd|staticd|fabricd|ospfd|mgmtd|watchfrr|corosync|corosync-qdevic) kill -9 \$p;; esac; done" </dev/null)
  echo "$t0"
  sim "$1" offline >> "$LAB_DIR/drill.log"
  # the control DRILL_NO_QDEVICE=1: the QDevice's host goes too, so the cluster has no vote to spare
  if [ -n "${DRILL_NO_QDEVICE:-}" ]; then
    qdevice_host down
    echo "control: the QDevice's host down too" >> "$LAB_DIR/drill.log"
  fi
  quorum_line >> "$LAB_DIR/drill.log"
  corosync_agrees "$o" "$t0" "saw $1 go"
}

# node_back NODE: the node rebooted from its installed state (namespace and trunk anew, the VMs on
# it restarted, ifupdown2 and FRR started from the files on its disk), back in the cluster (pvesim
# online: pve-sdn-commit at boot), its VMs plugged again. Prints the guest time of the reboot.
node_back() {
  local spec port mgmt
  spec=$(node_spec "$1"); port=$(echo "$spec" | cut -d, -f3); mgmt=$(echo "$spec" | cut -d, -f2)
  ssh -F "$LAB_DIR/ssh_config" -O exit "$1" 2>/dev/null || true
  rm -rf "$LAB_DIR/cp"
  # shellcheck disable=SC2016
  sshl lab "date +%s.%N
    for p in \$(ip netns pids $1); do kill -9 \$p; done; ip netns del $1
    for v in \$(awk -v n=$1 '\$3 == n {print \$2}'); do ip netns del vm-\$v; done
    /lab/topo.sh node ${spec%,*,*} && /lab/node.sh $1 $mgmt $port boot >/dev/null" < "$LAB_DIR/vms"
  sim "$1" online | tee -a "$LAB_DIR/drill.log" >&2
  # the control's QDevice host back with the node (the cluster quorate again either way)
  [ -z "${DRILL_NO_QDEVICE:-}" ] || qdevice_host up
  quorum_line >> "$LAB_DIR/drill.log"
  corosync_agrees "$1" "$(sshl lab 'date +%s.%N' </dev/null)" "counted the cluster again after the reboot"
  lab vms >&2
}

# fail: drill (a) (see the header)
fail() {
  need_lab
  local fspec ospec F O lof vm br mac ip gw bound b n t0 t1 tret tb tg tf tr tbu tgu w rc=0
  lab vms
  F=${DRILL_NODE:-$(tr ' ' '\n' < "$LAB_DIR/nodes" | grep . | tail -1 | cut -d, -f1)}
  fspec=$(node_spec "$F"); ospec=$(tr ' ' '\n' < "$LAB_DIR/nodes" | grep . | grep -v "^$F," | head -1)
  O=${ospec%%,*}; DNODE_O=$O
  lof=$(echo "$fspec" | cut -d, -f4)
  # the flow tenant's VM on F: its MAC must leave O's fdb and its host route O's VRF
  read -r _ vm _ br mac ip gw _ < <(awk -v n="$F" -v t="$FLOW_TENANT-" '$3 == n && index($2, t) == 1' "$LAB_DIR/vms" | head -1)
  [ -n "${vm:-}" ] || { log "no $FLOW_TENANT VM on $F"; return 1; }
  if [ -n "${DRILL_NO_BFD:-}" ]; then
    # the control: BFD taken out of both nodes' frr.conf (the drill must then fail; on one side
    # only, the side that keeps it holds BGP down while its BFD session is down); the rendered files
    # come back before F returns. frr-reload resets the session: the failure waits for it (settled)
    for n in "$O" "$F"; do
      sshl "$n" "cp /etc/frr/frr.conf /etc/frr/frr.conf.drill && sed -i '/ neighbor [^ ]* bfd/d' /etc/frr/frr.conf && /usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf >/dev/null" </dev/null
    done
    log "control: no BFD on $O and $F"
  fi
  local bfdinfo nobfd=""
  bfdinfo=$(bfd_bound "$O"); bound=${bfdinfo##*$'\n'}; b=${bound##* }
  [ "${bfdinfo%%$'\n'*}" != none ] || { nobfd=1; dlog "note: the EVPN neighbors in $O's frr.conf have no bfd"; }
  watch_start "$O" "$lof" "$br" "${br%v*}" "$mac" "${ip%/*}"
  w=$LAB_DIR/watch-$O.log
  # the VM talks (to its gateway, twice a second), as a VM in use does: F keeps its ARP entry, and
  # with it the MAC/IP route that gives O the host route (an idle VM's entry ages out, and the
  # host route with it); it ends with F's reboot, which removes the VM's namespace
  sshl lab "setsid ip netns exec vm-$vm ping -q -i 0.5 -w 600 $gw </dev/null >/dev/null 2>&1 &" </dev/null
  # the failure is timed only on a converged fabric: a session already down (the control's reload
  # reset it once, and every later sample said "withdrawn" at once) would time nothing
  if ! settled "$w" "$nobfd" 180; then
    dlog "FAIL before $F's failure, $O's BGP EVPN session to $F was not Established (BFD up) with $vm's MAC and route learnt within 180 s: $(tail -2 "$w" | tr '\n' ' ')"
    sshl lab 'touch /run/lab/watch.stop' </dev/null
    return 1
  fi
  t0=$(node_down "$F")
  # (no BFD session to go down when none is rendered: the watcher's "bfd none" is not a detection)
  tb=""; [ -n "$nobfd" ] || tb=$(wait_for "$w" "$t0" '$2 == "bfd" && $3 != "up"' 60) || tb=""
  tg=$(wait_for "$w" "$t0" '$2 == "bfd" && $5 != "Established"' 60) || tg=""
  tf=$(wait_for "$w" "$t0" '$2 == "fdb" && $3 == 0' 60) || tf=""
  tr=$(wait_for "$w" "$t0" '$2 == "fdb" && $5 == 0' 60) || tr=""
  dlog ""
  dlog "## Drill (a): $F fails ($(date -u +%F); BFD detection time from $O's rendered frr.conf: $bound ms (multiplier, receive interval, product))"
  dlog ""
  dlog "| event | time (UTC, guest) | after the failure |"
  dlog "|---|---|---|"
  dlog "| $F's trunk down, FRR killed | $(stamp "$t0") | 0 |"
  for e in "BFD session to $F down on $O:$tb" "BGP EVPN session to $F left Established on $O:$tg" "$vm's MAC $mac withdrawn from $O's vxlan_$br fdb:$tf" "$vm's host route ${ip%/*} withdrawn from $O's vrf_${br%v*}:$tr"; do
    if [ -n "${e##*:}" ]; then dlog "| ${e%:*} | $(stamp "${e##*:}") | $(secs "$t0" "${e##*:}") s |"
    elif [ -n "$nobfd" ] && [ "${e#BFD session}" != "$e" ]; then dlog "| ${e%:*} | none: no bfd in $O's frr.conf | - |"
    else dlog "| ${e%:*} | not within 60 s | - |"; rc=1; fi
  done
  # detection and withdrawal against BFD's detection time (+ DRILL_SLACK s for the lab's polling
  # and TCG's slowness); without BFD, BGP's hold time (9 s with `frr defaults datacenter`) detects
  local slack=${DRILL_SLACK:-2} lim d
  lim=$(awk -v b="$b" -v s="$slack" 'BEGIN {print b / 1000 + s}')
  # detection: BGP leaving Established as vtysh samples it, or the first withdrawal if that was seen
  # earlier: O withdraws F's MAC or route only once its BGP (or fabric) has seen F go, and a vtysh
  # sample under TCG takes longer than the kernel's (the period is said below)
  local td=$tg per
  for d in $tf $tr; do [ -z "$td" ] || awk -v a="$d" -v b="$td" 'BEGIN {exit !(a < b)}' && td=$d; done
  per=$(awk '$2 == "bfd" {if (p) {n++; s += $1 - p} p = $1} END {if (n) printf "%.2f", s / n; else print "?"}' "$w")
  dlog "     (vtysh sampled BFD and BGP every $per s on average, the kernel's fdb and routes every ~0.05 s)"
  for e in "detection (BGP session down, or the first withdrawal it caused):$td" "withdrawal of MAC and route:$( [ -n "$tf" ] && [ -n "$tr" ] && awk -v a="$tf" -v b="$tr" 'BEGIN {print (a > b ? a : b)}')"; do
    d=never; [ -z "${e##*:}" ] || d="$(secs "$t0" "${e##*:}") s"
    if [ "$d" != never ] && awk -v d="${d% s}" -v l="$lim" 'BEGIN {exit !(d <= l)}'; then
      dlog "ok   ${e%:*} $d <= BFD detection ${b} ms + ${slack} s"
    else dlog "FAIL ${e%:*} $d: not within BFD detection ${b} ms + ${slack} s"; rc=1; fi
  done
  if [ -n "${DRILL_NO_BFD:-}" ]; then
    sshl "$O" "mv /etc/frr/frr.conf.drill /etc/frr/frr.conf && /usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf >/dev/null" </dev/null
    # F is down: its disk is the guest's /etc/netns/F (its /etc/frr), which its reboot reads
    sshl lab "mv /etc/netns/$F/frr/frr.conf.drill /etc/netns/$F/frr/frr.conf" </dev/null
    log "control: the rendered frr.conf back on $O and $F"
  fi
  # tdemo's VMs on the other node keep egress and DNS
  if only_vms_on "$O" egress dns | tee -a "$LAB_DIR/drill.log"; then :; else rc=1; fi
  # DRILL_WITH_MAINT=1 (drills.sh test): drill (b) in this failure, after maint_prepare: one node
  # reboot and one full check for both drills
  [ -z "${DRILL_WITH_MAINT:-}" ] || maint_while_down "$F" "$O" || rc=1
  # and then without quorum (not in the control, whose QDevice is already away)
  if [ -n "${DRILL_WITH_MAINT:-}" ] && [ -z "${DRILL_NO_QDEVICE:-}" ] && has_qdevice; then quorum_loss "$F" "$O" || rc=1; fi
  # back: rebooted from its installed state (namespace and trunk anew, the VMs on it restarted,
  # ifupdown2 and FRR started from the files on its disk), back in the cluster (pve-sdn-commit at boot)
  tret=$(node_back "$F")
  tbu=$(wait_for "$w" "$tret" '$2 == "bfd" && $3 == "up"' 300) || tbu=""
  tgu=$(wait_for "$w" "$tret" '$2 == "bfd" && $5 == "Established"' 300) || tgu=""
  [ -z "${DRILL_WITH_MAINT:-}" ] || maint_after_return "$F" || rc=1
  if lab check > "$LAB_DIR/check-after-fail.log" 2>&1; then t1=$(gnow); else t1=""; rc=1; fi
  sshl lab 'touch /run/lab/watch.stop' </dev/null
  dlog ""
  dlog "| event | time (UTC, guest) | after the return |"
  dlog "|---|---|---|"
  dlog "| $F back: booted from its disk | $(stamp "$tret") | 0 |"
  for e in "BFD session to $F up on $O:$tbu" "BGP EVPN session to $F Established on $O:$tgu" "every check of lab.sh green (restored):$t1"; do
    if [ -n "${e##*:}" ]; then dlog "| ${e%:*} | $(stamp "${e##*:}") | $(secs "$tret" "${e##*:}") s |"
    else dlog "| ${e%:*} | never | - |"; rc=1; fi
  done
  dlog "$(grep -c '^ok' "$LAB_DIR/check-after-fail.log") checks ok, $(grep -c '^FAIL' "$LAB_DIR/check-after-fail.log") FAIL after the return"
  grep '^FAIL' "$LAB_DIR/check-after-fail.log" | tee -a "$LAB_DIR/drill.log" || true
  return $rc
}

# tenant_vms NAME: "vmid name node memory" of each VM of tenant NAME pvesim holds, read back from its
# API (as root), sorted; memory "offline" for a VM on an offline node
tenant_vms() {
  PYTHONPATH=$HERE "$VENV/bin/python" - "$LAB_DIR" "$1" <<'PY'
import sys
import urllib.error
from pvesimapi import Pvesim
get = Pvesim(sys.argv[1]).get
rows = []
for r in get("/cluster/resources?type=vm"):
    if r.get("template") or not r.get("name", "").startswith(sys.argv[2] + "-"):
        continue
    try:
        mem = get("/nodes/%s/qemu/%d/config" % (r["node"], r["vmid"])).get("memory", "-")
    except urllib.error.HTTPError as e:
        if e.code != 595:  # PVE's answer for a node that is offline: its config cannot be read
            raise
        mem = "offline"
    rows.append("%d %s %s %s" % (r["vmid"], r["name"], r["node"], mem))
print("\n".join(sorted(rows)))
PY
}

# maint_prepare: drill (b)'s start: the other tenant onboarded and converged with every node up,
# its changed declaration (memory x2, one VM more) written for the converges while the node is down
maint_prepare() {
  local name index
  read -r name index < <(tenant_field "$OTHER")
  changed "$OTHER" "$LAB_DIR/other-changed.yml"
  dlog ""
  dlog "## Drill (b): ${DRILL_NODE:-the last node} in maintenance while $name is converged with a change ($(date -u +%F))"
  dlog ""
  lab playbook deevnet.tenant.onboard -e "tenant_name=$name" -e "tenant_index=$index"
  # its index is no longer checked as destroyed (the traffic drill destroyed it; lab.sh reuse does the same)
  if [ -f "$LAB_DIR/destroyed" ]; then awk -v i="$index" '$2 != i' "$LAB_DIR/destroyed" > "$LAB_DIR/destroyed.new"; mv "$LAB_DIR/destroyed.new" "$LAB_DIR/destroyed"; fi
  tenant_converge "$OTHER"
}

# maint_while_down F O: with F offline, the changed declaration converged: without the maintenance
# variable it must fail before any write, naming F; with it, converge what it can, place new VMs on
# the online nodes and report what is left for F; the VMs on O keep egress and DNS
maint_while_down() {
  local F=$1 O=$2 name index before after rc=0
  read -r name index < <(tenant_field "$OTHER")
  # the control: the maintenance variable not set, the converge must fail before any write and
  # name the node
  before=$(tenant_vms "$name")
  if lab playbook deevnet.tenant.tenant -e "tenant_file=$LAB_DIR/other-changed.yml" 2> "$LAB_DIR/maint-control.log"; then
    dlog "FAIL $name converged with $F offline and not in maintenance (a silent success)"; rc=1
  elif ! grep '^fatal: ' "$LAB_DIR/maint-control.log" | grep -q "$F"; then
    dlog "FAIL the converge with $F offline failed without naming $F:"; tail -5 "$LAB_DIR/maint-control.log" | tee -a "$LAB_DIR/drill.log"; rc=1
  else
    dlog "ok   $F offline, not in maintenance: the converge failed naming it: $(sed -n 's/^fatal: .*"msg": "\(.*\)"}$/\1/p' "$LAB_DIR/maint-control.log" | head -1 | cut -c1-240)"
  fi
  after=$(tenant_vms "$name")
  if [ "$before" = "$after" ]; then dlog "ok   that failed converge changed none of $name's VMs"
  else dlog "FAIL that failed converge changed $name's VMs: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"; rc=1; fi
  # the change with the node in maintenance: what can be converged is, new VMs go to online nodes,
  # what is left for F is reported
  local maint_var=(-e "{\"substrate_maintenance\": [\"$F\"]}")
  # the control: as if the playbooks ignored the variable (the drill must then fail)
  [ -z "${DRILL_IGNORE_MAINT:-}" ] || { maint_var=(); log "control: substrate_maintenance left out"; }
  if [ -n "${DRILL_NO_QDEVICE:-}" ]; then
    # the control without the QDevice: 1 vote of 2 (or 3), no quorum, /etc/pve read-only: the
    # converge must fail naming quorum (the drill then fails: its converge did not happen)
    if lab playbook deevnet.tenant.tenant -e "tenant_file=$LAB_DIR/other-changed.yml" "${maint_var[@]}" 2>/dev/null; then
      dlog "FAIL $name converged with $F away and no QDevice: PVE would have had no quorum"
    elif grep -q "no quorum" "$LAB_DIR/ansible-last.log"; then
      dlog "FAIL (the control) $name's converge without quorum failed, naming it: $(grep -m1 -o '[^"]*no quorum[^"]*' "$LAB_DIR/ansible-last.log" | cut -c1-200)"
    else dlog "FAIL $name's converge without quorum failed without naming quorum"; tail -5 "$LAB_DIR/ansible-last.log" | tee -a "$LAB_DIR/drill.log"; fi
    return 1
  fi
  if lab playbook deevnet.tenant.tenant -e "tenant_file=$LAB_DIR/other-changed.yml" "${maint_var[@]}" 2>/dev/null; then
    dlog "ok   $name converged with $F in maintenance ($(date -u +%H:%M:%S)); $(quorum_line)"
  else dlog "FAIL $name's converge with $F in maintenance failed"; tail -20 "$LAB_DIR/ansible-last.log" >&2; rc=1; fi
  if grep -q "WARNING.*$F" "$LAB_DIR/ansible-last.log"; then
    dlog "ok   what was left for $F was reported: $(grep -m1 -o "WARNING.*$F.*" "$LAB_DIR/ansible-last.log" | cut -c1-200)"
  else dlog "FAIL no warning named what was left for $F"; rc=1; fi
  after=$(tenant_vms "$name")
  echo "$after" | sed 's/^/     /' | tee -a "$LAB_DIR/drill.log"
  if echo "$after" | awk -v f="$F" -v n="$(echo "$before" | grep -c .)" 'NR > n && $3 == f {bad = 1} END {exit bad}'; then
    dlog "ok   no new VM of $name placed on $F"
  else dlog "FAIL a new VM of $name was placed on $F, which is in maintenance"; rc=1; fi
  lab vms
  # (check_tenants looks at every node, the failed one too: egress and DNS of the VMs on O only)
  if only_vms_on "$O" egress dns | tee -a "$LAB_DIR/drill.log"; then :; else rc=1; fi
  return $rc
}

# quorum_loss F O: inside drill (b), F still away, the QDevice's host fails too: the quorum rule seen
# failing in every run, not only in the control. O's real corosync and pvesim must both lose quorum;
# a converge with a change must fail naming quorum and change nothing; the VMs on O keep egress and
# DNS (running guests go on); the host returns and O's corosync counts the QDevice's vote again
quorum_loss() {
  local F=$1 O=$2 name index before after t0 rc=0
  read -r name index < <(tenant_field "$OTHER")
  dlog ""
  dlog "### $F away and the QDevice's host down too: no quorum"
  t0=$(sshl lab 'date +%s.%N' </dev/null)
  qdevice_host down
  quorum_line >> "$LAB_DIR/drill.log"
  corosync_agrees "$O" "$t0" "lost the QDevice"
  tail -1 "$LAB_DIR/drill.log" | grep -q "^ok   corosync on $O lost the QDevice .*Quorate No" || { dlog "FAIL corosync on $O did not lose quorum with $F and the QDevice away"; rc=1; }
  before=$(tenant_vms "$name")
  # the declaration as it was before drill (b)'s change: every VM's memory would change
  if lab playbook deevnet.tenant.tenant -e "tenant_file=$OTHER" -e "{\"substrate_maintenance\": [\"$F\"]}" 2>/dev/null; then
    dlog "FAIL $name converged a change without quorum: PVE would have refused it"; rc=1
  elif grep -q "no quorum" "$LAB_DIR/ansible-last.log"; then
    dlog "ok   without quorum $name's converge failed, naming it: $(grep -m1 -o '[^"]*no quorum[^"]*' "$LAB_DIR/ansible-last.log" | cut -c1-200)"
  else dlog "FAIL $name's converge without quorum failed without naming quorum"; tail -5 "$LAB_DIR/ansible-last.log" | tee -a "$LAB_DIR/drill.log"; rc=1; fi
  after=$(tenant_vms "$name")
  if [ "$before" = "$after" ]; then dlog "ok   that failed converge changed none of $name's VMs"
  else dlog "FAIL that failed converge changed $name's VMs: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"; rc=1; fi
  if only_vms_on "$O" egress dns | tee -a "$LAB_DIR/drill.log"; then :; else rc=1; fi
  t0=$(sshl lab 'date +%s.%N' </dev/null)
  qdevice_host up
  quorum_line >> "$LAB_DIR/drill.log"
  corosync_agrees "$O" "$t0" "counted the QDevice again"
  tail -1 "$LAB_DIR/drill.log" | grep -q "^ok   corosync on $O counted the QDevice again .*Quorate Yes" || { dlog "FAIL corosync on $O not quorate again after the QDevice's host returned"; rc=1; }
  return $rc
}

# maint_after_return F: F is back; the first converge without the maintenance variable finishes
# what was left: every VM of the other tenant has the changed memory, the one on F included
maint_after_return() {
  local F=$1 name index after rc=0
  read -r name index < <(tenant_field "$OTHER")
  if tenant_converge "$LAB_DIR/other-changed.yml"; then dlog "ok   $name converged after $F returned ($(date -u +%H:%M:%S))"
  else dlog "FAIL $name's converge after $F returned failed"; rc=1; fi
  after=$(tenant_vms "$name")
  if echo "$after" | awk -v m="$(yq_memory "$LAB_DIR/other-changed.yml")" '$4 != m {bad = 1} END {exit bad}'; then
    dlog "ok   every VM of $name has the changed memory, the one on $F included"
  else dlog "FAIL not every VM of $name has the changed memory: $(echo "$after" | tr '\n' ' ')"; rc=1; fi
  return $rc
}

# maint: drill (b) alone (see the header); `drills.sh test` runs it inside drill (a)'s failure
maint() {
  need_lab
  local F O t0 tret rc=0
  F=${DRILL_NODE:-$(tr ' ' '\n' < "$LAB_DIR/nodes" | grep . | tail -1 | cut -d, -f1)}
  O=$(tr ' ' '\n' < "$LAB_DIR/nodes" | grep . | grep -v "^$F," | head -1 | cut -d, -f1)
  maint_prepare || rc=1
  t0=$(node_down "$F")
  dlog "$(stamp "$t0") $F down (trunk, FRR), offline in pvesim"
  maint_while_down "$F" "$O" || rc=1
  tret=$(node_back "$F")
  dlog "$(stamp "$tret") $F back (rebooted from its disk), online in pvesim"
  maint_after_return "$F" || rc=1
  if lab check > "$LAB_DIR/check-after-maint.log" 2>&1; then dlog "ok   every check of lab.sh green after $F returned ($(date -u +%H:%M:%S))"
  else rc=1; fi
  dlog "$(grep -c '^ok' "$LAB_DIR/check-after-maint.log") checks ok, $(grep -c '^FAIL' "$LAB_DIR/check-after-maint.log") FAIL after the return"
  grep '^FAIL' "$LAB_DIR/check-after-maint.log" | tee -a "$LAB_DIR/drill.log" || true
  lab destroy "$LAB_DIR/other-changed.yml" || rc=1
  return $rc
}

# yq_memory FILE: the memory (MiB) a declaration gives its VMs
yq_memory() { "$VENV/bin/python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["tenant"]["vms"]["memory"])' "$1"; }

# registry_entries FILE: "name index" of each tenant of a registry file, sorted
registry_entries() {
  "$VENV/bin/python" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])) or {}; [print(k, v["index"] if isinstance(v, dict) else v) for k, v in sorted((d.get("tenants") or {}).items())]' "$1"
}

# site: drill (c) (see the header)
site() {
  need_lab
  local reg t0 t1 rc=0 before after
  reg=$LAB_DIR/tenants.yml
  dlog ""
  dlog "## Drill (c): a lost registry, then the whole site from empty ($(date -u +%F))"
  dlog ""
  # a lost registry, rebuilt from what PVE and DNS hold: every tenant PVE holds at the index it had
  before=$(registry_entries "$reg")
  mv "$reg" "$LAB_DIR/tenants.yml.lost"
  if lab playbook deevnet.tenant.registry; then
    after=$(registry_entries "$reg")
    # the registry also keeps indexes reserved after a destroy (tenants PVE no longer holds): the
    # rebuilt one must give every tenant PVE holds the index it had, and invent nothing
    if [ -n "$after" ] && [ -z "$(comm -13 <(echo "$before") <(echo "$after"))" ]; then
      dlog "ok   the registry rebuilt from PVE and DNS: $(echo "$after" | tr '\n' ' ')(lost: $(echo "$before" | tr '\n' ' '))"
    else dlog "FAIL the rebuilt registry ($(echo "$after" | tr '\n' ' ')) is not within the lost one ($(echo "$before" | tr '\n' ' '))"; rc=1; fi
  else dlog "FAIL the registry playbook failed on a lost registry"; rc=1; fi
  # the reserved indexes PVE cannot know of come back from the substrate repository's copy
  cp "$LAB_DIR/tenants.yml.lost" "$reg"
  t0=$(date +%s)
  lab wipe
  dlog "$(date -u +%H:%M:%S) the site wiped: pvesim and DNS empty, every node installed again; kept: registry, attachments ($(ls "$LAB_DIR/attachments" | tr '\n' ' '))"
  t1=$(date +%s)
  if lab playbook deevnet.tenant.site -e "substrate_tenants_dir=$HERE/tenants"; then
    dlog "ok   $(grep -o 'site restored in [^"]*' "$LAB_DIR/ansible-last.log" | head -1 | cut -c1-200)"
  else dlog "FAIL the site playbook failed on the wiped site"; rc=1; fi
  dlog "     the site playbook took $(( $(date +%s) - t1 )) s (the wipe $(( t1 - t0 )) s)"
  lab vms
  if lab check > "$LAB_DIR/check-after-site.log" 2>&1; then
    dlog "ok   every check of lab.sh green on the rebuilt site, $(( $(date +%s) - t1 )) s after the site playbook started"
  else rc=1; fi
  dlog "$(grep -c '^ok' "$LAB_DIR/check-after-site.log") checks ok, $(grep -c '^FAIL' "$LAB_DIR/check-after-site.log") FAIL on the rebuilt site"
  grep '^FAIL' "$LAB_DIR/check-after-site.log" | tee -a "$LAB_DIR/drill.log" || true
  return $rc
}

case ${1:-} in
  site) site;;
  traffic) traffic;;
  fail) fail;;
  maint) maint;;
  # a node a drill left failed (stopped half way): rebooted from its disk, back online in pvesim
  back) need_lab; node_back "$2";;
  test)
    export LAB_TENANTS=${LAB_TENANTS:-$HERE/tenants/tdemo.yml}
    # named here, so that down finds it even when up fails half way
    LAB_DIR=${LAB_DIR:-$(mktemp -u /tmp/dvt-drills.XXXXXX)}; export LAB_DIR
    # a failed run leaves the lab's state per node in its output (lab.sh state), then goes
    trap 'rc=$?; [ "$rc" = 0 ] || lab state || true; lab down' EXIT
    rc=0
    if [ "${DRILL_LAB:-phase2}" = phase2 ]; then
      # the drills' lab is phase 2's (test/lab/phase2.sh: the second node joins after tdemo exists,
      # then tdemo converged as declared, three VMs on both nodes; its checks count here): one lab
      # boot for both. Once more on a fresh lab when it fails, as make retries a lab target: a
      # TCG guest on a loaded machine sometimes does not bring its fabric up in time
      if ! LAB_KEEP=1 "$HERE/phase2.sh"; then
        log "phase 2 failed (its logs: $LAB_DIR.logs); once more on a fresh lab"
        lab down >/dev/null 2>&1 || true
        LAB_DIR=$(mktemp -u /tmp/dvt-drills.XXXXXX); export LAB_DIR
        LAB_KEEP=1 "$HERE/phase2.sh" || exit 1
      fi
      # the resolver host (lab.sh up starts it; phase 2 checks no DNS)
      lab resolver-up
    else
      lab up >/dev/null
    fi
    t=$(date +%s)
    traffic || rc=1
    # drill (b) inside drill (a)'s failure: one reboot of the node and one full check for both
    maint_prepare || rc=1
    DRILL_WITH_MAINT=1 fail || rc=1
    lab destroy "$LAB_DIR/other-changed.yml" || rc=1
    site || rc=1
    # the real corosync's view against pvesim's, after each failure and return (corosync_agrees)
    ! grep -q '^FAIL corosync' "$LAB_DIR/drill.log" || rc=1
    cat "$LAB_DIR/drill.log"
    log "drills in $(( $(date +%s) - t )) s"
    cat "$LAB_DIR/drill.log"
    exit $rc;;
  *) sed -n '2,34p' "$0"; exit 2;;
esac
