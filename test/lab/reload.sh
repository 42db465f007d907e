#!/usr/bin/env bash
# test/lab/reload.sh NODE DIR: pvesim's --reload-command for the lab. What a PVE node does after an
# SDN apply (NODE-RENDERING.md §1), on the lab node over ssh (LAB_DIR/ssh_config, through the jump
# host): install DIR/etc/network/interfaces.d/sdn, `ifreload -a`; set the fabricd=/ospfd= lines of
# /etc/frr/daemons from DIR/etc/frr/daemons.pve, install frr.conf; restart FRR when a daemons line
# changed, else `frr-reload.py --stdout --reload`, falling back to a restart. Exit 0 = reloaded.
# A file LAB_DIR/reload.restart makes every reload a restart (the traffic drill's control).
set -euo pipefail
node=$1 dir=$2
: "${LAB_DIR:?LAB_DIR: the lab this pvesim serves}"
# shellcheck disable=SC2016
remote='set -eu
t=$(mktemp -d); trap "rm -rf $t" EXIT
tar -C "$t" -xf -
install -m 0644 "$t/etc/network/interfaces.d/sdn" /etc/network/interfaces.d/sdn
ifreload -a
cp /etc/frr/daemons "$t/daemons.old"
while IFS= read -r line; do
  k=${line%%=*}
  case $k in fabricd|ospfd) sed -i "s/^$k=.*/$line/" /etc/frr/daemons;; esac
done < "$t/etc/frr/daemons.pve"
install -o frr -g frr -m 0640 "$t/etc/frr/frr.conf" /etc/frr/frr.conf
# the FRR processes of this node (the guest has one PID space; a node is its network namespace):
# the daemons and the frrinit.sh/watchfrr.sh shells that start them, not this script. One pgrep
# and one awk: under TCG every fork costs, and this runs in a loop.
frr_pids() {
  pgrep -a --ns $$ --nslist net -f /usr/lib/frr/ \
    | awk '"'"'$2 ~ "^/usr/lib/frr/" || $3 ~ "^/usr/lib/frr/" { print $1 }'"'"'
}
# wait_gone SECONDS: until no FRR process of this node is left, at most SECONDS
wait_gone() {
  end=$(( $(date +%s) + $1 ))
  while [ -n "$(frr_pids)" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.5; done
}
restart() {
  # frrinit.sh restart stops what the pid files name and skips a daemon without one; a daemon still
  # starting (watchfrr starts them one by one; FRR 10 under TCG takes minutes) can outlive it and
  # keep its pid-file lock ("Could not lock pid_file /run/frr/bgpd.pid" in a CI log; a control with
  # frrinit.sh restart alone ended well, so this is defensive). So: stop, then end every FRR process
  # of this node and wait for them, then start, as systemd ends the cgroup of a unit. A daemon still starting does not act on
  # SIGTERM (seen: minutes): after 20 s it gets SIGKILL, as the stop of systemd would after its timeout.
  # not on the ssh channel: the daemons of FRR 10 would keep it open (guest/node.sh)
  /usr/lib/frr/frrinit.sh stop </dev/null >"$t/restart.log" 2>&1 || true
  left=$(frr_pids)
  if [ -n "$left" ]; then
    echo "frr: still running after stop: $(pgrep -a --ns $$ --nslist net -f /usr/lib/frr/ | cut -c1-60 | tr "\n" ";")"
    kill -TERM $left 2>/dev/null || true
    wait_gone 20
    left=$(frr_pids)
    if [ -n "$left" ]; then echo "frr: killing $left"; kill -KILL $left 2>/dev/null || true; wait_gone 10; fi
  fi
  /usr/lib/frr/frrinit.sh start </dev/null >>"$t/restart.log" 2>&1 || { cat "$t/restart.log"; exit 1; }
  cat "$t/restart.log"
  # systemd waits for watchfrr READY=1, sent after the config is applied; the lab has no systemd:
  # wait for every enabled daemon, then for the config (under TCG watchfrr sometimes never runs
  # its `vtysh -b`: applied here then, and said so)
  # zebra, staticd (and mgmtd from FRR 10 on) always run; the others when their daemons line says yes
  want="zebra staticd $([ -x /usr/lib/frr/mgmtd ] && echo mgmtd) $(sed -n "s/^\([a-z0-9]*d\)=yes$/\1/p" /etc/frr/daemons | tr "\n" " ")"
  # up to 600 s: the daemons of FRR 10 take minutes to start under TCG on a loaded machine
  i=0; while [ $i -lt 1200 ]; do
    have=" $(timeout 30 vtysh -c "show daemons" 2>/dev/null | tr -s " \n" "  ") "
    missing=""; for d in $want; do case $have in *" $d "*) ;; *) missing="$missing $d";; esac; done
    [ -z "$missing" ] && break; sleep 0.5; i=$((i+1))
  done
  [ -z "$missing" ] || { echo "frr: daemons not running after restart:$missing"; exit 1; }
  grep -q "^router bgp" /etc/frr/frr.conf || return 0
  i=0; while [ $i -lt 20 ] && ! timeout 60 vtysh -c "show running-config" | grep -q "^router bgp"; do sleep 0.5; i=$((i+1)); done
  if ! timeout 60 vtysh -c "show running-config" | grep -q "^router bgp"; then echo "lab: frr config not applied at start; vtysh -b"; timeout 300 vtysh -b; fi
}
if [ "$force_restart" = 1 ]; then
  echo "control (LAB_DIR/reload.restart): restarting frr"; restart
elif ! cmp -s /etc/frr/daemons "$t/daemons.old"; then
  echo "daemons changed: restarting frr"; restart
# bounded: vtysh waits without end for a daemon that accepts and never answers, and the SDN apply
# would then wait for its own timeout (20 min in the lab) with nothing said
elif ! timeout 300 /usr/lib/frr/frr-reload.py --stdout --reload /etc/frr/frr.conf; then
  echo "frr-reload.py failed or ran over 300 s: restarting frr"; restart
fi'
# LAB_DIR/reload.restart (a control of the traffic drill, drills.sh): every reload restarts FRR, as
# an apply that restarts it would; the drill must then count the restarts and the lost packets
force_restart=0; [ ! -e "$LAB_DIR/reload.restart" ] || force_restart=1
{ echo "=== $(date -u +%T) reload $node"; tar -C "$dir" -cf - etc | ssh -F "$LAB_DIR/ssh_config" "$node" "force_restart=$force_restart; $remote"; } 2>&1 \
  | tee -a "$LAB_DIR/reload-$node.log"
exit "${PIPESTATUS[0]}"
