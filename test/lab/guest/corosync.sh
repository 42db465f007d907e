#!/bin/sh
# corosync.sh (inside the lab guest): the cluster's corosync, what `pvecm create` / `pvecm add` and
# systemd do on a PVE node; the QDevice itself is the collection's (deevnet.tenant.qdevice).
#   corosync.sh create CLUSTER NODE,MGMT_CIDR,PORT...   every node's corosync.conf and the shared
#        authkey on its "disk" (/etc/netns/NODE/corosync), as pvecm writes them; then starts corosync
#   corosync.sh corosync | qdevice | qnetd   (run through nodeexec, on the host) start that daemon
#        in the background, as its systemd unit would (qnetd as coroqnetd); log in /var/lib/lab/HOST
#   corosync.sh boot   (through nodeexec) what a booting node starts: corosync, and corosync-qdevice
#        once its corosync.conf has a quorum device (pvecm enables the unit)
#   corosync.sh wait NODE TOTAL T0 TIMEOUT   (in the guest) NODE's corosync view once it counts TOTAL votes
set -eu
log() { echo "/var/lib/lab/$(hostname)/$1.log"; }
case $1 in
  create)
    cluster=$2; shift 2
    [ -s /var/lib/lab/corosync-authkey ] || corosync-keygen -l -k /var/lib/lab/corosync-authkey >/dev/null
    {
      printf 'logging {\n  debug: off\n  to_syslog: yes\n}\n\nnodelist {\n'
      id=1
      for spec in "$@"; do
        n=${spec%%,*}; a=${spec#*,}; a=${a%%/*}
        printf '  node {\n    name: %s\n    nodeid: %d\n    quorum_votes: 1\n    ring0_addr: %s\n  }\n' "$n" "$id" "$a"
        id=$((id + 1))
      done
      printf '}\n\nquorum {\n  provider: corosync_votequorum\n}\n\n'
      printf 'totem {\n  cluster_name: %s\n  config_version: %d\n  interface {\n    linknumber: 0\n  }\n  ip_version: ipv4-6\n  link_mode: passive\n  secauth: on\n  version: 2\n}\n\n' "$cluster" "$#"
    } > /var/lib/lab/corosync.conf
    for spec in "$@"; do
      n=${spec%%,*}
      install -m 0644 /var/lib/lab/corosync.conf "/etc/netns/$n/corosync/corosync.conf"
      install -m 0400 /var/lib/lab/corosync-authkey "/etc/netns/$n/corosync/authkey"
      /lab/nodeexec "$n" /lab/corosync.sh corosync
    done;;
  corosync)
    setsid corosync -f </dev/null >"$(log corosync)" 2>&1 &;;
  qdevice)
    setsid corosync-qdevice -f </dev/null >"$(log corosync-qdevice)" 2>&1 &;;
  qnetd)
    chown coroqnetd: /run/corosync-qnetd
    setsid runuser -u coroqnetd -- corosync-qnetd -f </dev/null >"$(log corosync-qnetd)" 2>&1 &;;
  boot)
    [ -s /etc/corosync/corosync.conf ] || exit 0
    "$0" corosync
    if grep -q '^ *device {' /etc/corosync/corosync.conf && [ -d /etc/corosync/qdevice/net/nssdb ]; then
      # corosync-qdevice's unit starts after corosync's: it needs corosync's IPC up
      for _ in $(seq 1 50); do corosync-cfgtool -s >/dev/null 2>&1 && break; sleep 0.2; done
      "$0" qdevice
    fi;;
  wait)
    # wait NODE TOTAL T0 TIMEOUT [QUORATE] (in the guest's root namespace): poll NODE's
    # corosync-quorumtool (its IPC sockets are abstract, so the node's network namespace is enough)
    # until its total votes are TOTAL and, given QUORATE (Yes/No), its Quorate is that too (seen:
    # the QDevice's vote counted while Quorate still said No); print the seconds since
    # T0 (guest time), Quorate, total, expected, quorum and flags, or the last view with "timeout"
    # and exit 1
    n=$2; want=$3; t0=$4; end=$(( $(date +%s) + $5 )); wantq=${6:-}
    while :; do
      v=$(ip netns exec "$n" corosync-quorumtool -s 2>/dev/null | awk '
        /^Quorate:/ {q=$2} /^Expected votes:/ {e=$3} /^Total votes:/ {t=$3} /^Quorum:/ {m=$2} /^Flags:/ {sub(/^Flags: */, ""); f=$0}
        END {printf "%s %s %s %s %s", (q ? q : "?"), (t ? t : "?"), (e ? e : "?"), (m ? m : "?"), f}')
      now=$(date +%s.%N)
      if [ "$(echo "$v" | cut -d' ' -f2)" = "$want" ] && { [ -z "$wantq" ] || [ "${v%% *}" = "$wantq" ]; }; then
        awk -v a="$t0" -v b="$now" 'BEGIN {printf "%.1f ", b - a}'; echo "$v"; exit 0
      fi
      [ "$(date +%s)" -lt "$end" ] || { echo "timeout $v"; exit 1; }
      sleep 0.5
    done;;
  *) echo "usage: corosync.sh create CLUSTER NODE,MGMT,PORT... | corosync | qdevice | qnetd | boot | wait NODE TOTAL T0 TIMEOUT [QUORATE]" >&2; exit 2;;
esac
