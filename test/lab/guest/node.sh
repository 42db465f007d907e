#!/bin/sh
# node.sh NODE MGMT_CIDR PORT (inside the lab guest): what a freshly installed PVE 9 node has before
# the collection touches it, then its boot: the installer's /etc/network/interfaces (vmbr0 on the trunk port
# with the management address, `source /etc/network/interfaces.d/*`), `ifup -a`, sshd on the
# management address, and FRR started by Debian's own frrinit.sh from /etc/frr/daemons (zebra,
# staticd always; bgpd and bfdd enabled as a PVE EVPN node needs; fabricd/ospfd are the lines SDN
# apply rewrites).
#   node.sh NODE MGMT_CIDR PORT boot: the boot alone, from the files on the node's "disk"
#   (/etc/netns/NODE as the last install and SDN apply left them): a node back from a power loss
set -eu
n=$1; mgmt=$2; port=$3
E=/etc/netns/$n
if [ "${4:-}" != boot ]; then
mkdir -p "$E/network" "$E/frr"
cp -a /etc/network/. "$E/network/"
# the hook directories a PVE node has (other packages ship scripts there; ifupdown2 alone does not)
mkdir -p "$E/network/interfaces.d" "$E/network/if-up.d" "$E/network/if-down.d" "$E/network/if-pre-up.d" "$E/network/if-post-down.d"
cat > "$E/network/interfaces" <<IFS
auto lo
iface lo inet loopback

iface $port inet manual

auto vmbr0
iface vmbr0 inet static
	address $mgmt
	bridge-ports $port
	bridge-stp off
	bridge-fd 0

source /etc/network/interfaces.d/*
IFS
cp -a /etc/frr/. "$E/frr/"
sed -i -e 's/^bgpd=no/bgpd=yes/' -e 's/^bfdd=no/bfdd=yes/' "$E/frr/daemons"
# watchfrr's 90 s timeouts are for real hardware: under TCG on a loaded machine FRR 10's daemons
# (each loads its YANG modules at start) took longer to answer, watchfrr killed them mid-start
# ("restart bgpd child process ... still running after 90 seconds") and looped, bgpd/bfdd/mgmtd down
sed -i 's/^#\{0,1\}watchfrr_options=.*/watchfrr_options="--timeout 600 --restart-timeout 600"/' "$E/frr/daemons"
grep -q '^watchfrr_options="--timeout 600' "$E/frr/daemons"
printf 'frr defaults datacenter\nhostname %s\nlog syslog informational\nservice integrated-vtysh-config\n!\nline vty\n!\n' "$n" > "$E/frr/frr.conf"
chown -R frr:frr "$E/frr"
# corosync as Debian's packages install it on a PVE node (no qnetd there: that is the QDevice host's);
# corosync.sh create writes the cluster's corosync.conf and authkey here, as pvecm does
mkdir -p "$E/corosync" "/var/lib/lab/$n/lib-corosync"
# (Debian's example corosync.conf removed: a node is no cluster member until pvecm writes its file,
# and corosync.sh boot starts corosync only where there is one)
cp -a /etc/corosync/. "$E/corosync/"; rm -rf "$E/corosync/qnetd" "$E/corosync/corosync.conf"
fi
/lab/nodeexec "$n" ifup -a
/lab/nodeexec "$n" /usr/sbin/sshd -o ListenAddress="${mgmt%/*}" -o HostKey=/etc/ssh/ssh_host_ed25519_key \
  -o PermitRootLogin=prohibit-password -o UseDNS=no -o PidFile="/run/network/sshd.pid"
# FRR 10's daemons keep the descriptors they are started with: started on this ssh session's
# stdout/stderr, they held the channel open and `ssh lab node.sh` never returned. A log file instead.
log=/var/lib/lab/$n/frr-start.log
/lab/nodeexec "$n" /usr/lib/frr/frrinit.sh start </dev/null >"$log" 2>&1 || { cat "$log"; exit 1; }
# corosync (and corosync-qdevice once the QDevice is set up), as a booting node's systemd starts them
/lab/nodeexec "$n" /lab/corosync.sh boot
