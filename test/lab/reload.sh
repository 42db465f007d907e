#!/usr/bin/env bash
# test/lab/reload.sh NODE DIR: pvesim's --reload-command for the lab. What a PVE node does after an
# SDN apply (NODE-RENDERING.md §1), on the lab node over ssh (LAB_DIR/ssh_config, through the jump
# host): install DIR/etc/network/interfaces.d/sdn, `ifreload -a`; set the fabricd=/ospfd= lines of
# /etc/frr/daemons from DIR/etc/frr/daemons.pve, install frr.conf; restart FRR when a daemons line
# changed, else `frr-reload.py --stdout --reload`, falling back to a restart. Exit 0 = reloaded.
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
restart() {
  # not on the ssh channel: the daemons of FRR 10 would keep it open (guest/node.sh)
  /usr/lib/frr/frrinit.sh restart </dev/null >"$t/restart.log" 2>&1 || { cat "$t/restart.log"; exit 1; }
  cat "$t/restart.log"
  # systemd waits for watchfrr READY=1, sent after the config is applied; the lab has no systemd:
  # wait for every enabled daemon, then for the config (under TCG watchfrr sometimes never runs
  # its `vtysh -b`: applied here then, and said so)
  # zebra and staticd always run; the others when their daemons line says yes
  want="zebra staticd $(sed -n "s/^\([a-z0-9]*d\)=yes$/\1/p" /etc/frr/daemons | tr "\n" " ")"
  # up to 600 s: the daemons of FRR 10 take minutes to start under TCG on a loaded machine
  i=0; while [ $i -lt 1200 ]; do
    have=" $(vtysh -c "show daemons" 2>/dev/null | tr -s " \n" "  ") "
    missing=""; for d in $want; do case $have in *" $d "*) ;; *) missing="$missing $d";; esac; done
    [ -z "$missing" ] && break; sleep 0.5; i=$((i+1))
  done
  [ -z "$missing" ] || { echo "frr: daemons not running after restart:$missing"; exit 1; }
  grep -q "^router bgp" /etc/frr/frr.conf || return 0
  i=0; while [ $i -lt 20 ] && ! vtysh -c "show running-config" | grep -q "^router bgp"; do sleep 0.5; i=$((i+1)); done
  if ! vtysh -c "show running-config" | grep -q "^router bgp"; then echo "lab: frr config not applied at start; vtysh -b"; vtysh -b; fi
}
if ! cmp -s /etc/frr/daemons "$t/daemons.old"; then
  echo "daemons changed: restarting frr"; restart
elif ! /usr/lib/frr/frr-reload.py --stdout --reload /etc/frr/frr.conf; then
  echo "frr-reload.py failed: restarting frr"; restart
fi'
{ echo "=== $(date -u +%T) reload $node"; tar -C "$dir" -cf - etc | ssh -F "$LAB_DIR/ssh_config" "$node" "$remote"; } 2>&1 \
  | tee -a "$LAB_DIR/reload-$node.log"
exit "${PIPESTATUS[0]}"
