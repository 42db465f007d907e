#!/bin/sh
# node.sh NODE MGMT_CIDR PORT (inside the lab guest): what a freshly installed PVE 9 node has before
# the collection touches it, then its boot: the installer's /etc/network/interfaces (vmbr0 on the trunk port
# with the management address, `source /etc/network/interfaces.d/*`), `ifup -a`, sshd on the
# management address, and FRR started by Debian's own frrinit.sh from /etc/frr/daemons (zebra,
# staticd always; bgpd and bfdd enabled as a PVE EVPN node needs; fabricd/ospfd are the lines SDN
# apply rewrites).
set -eu
n=$1; mgmt=$2; port=$3
E=/etc/netns/$n
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
printf 'frr defaults datacenter\nhostname %s\nlog syslog informational\nservice integrated-vtysh-config\n!\nline vty\n!\n' "$n" > "$E/frr/frr.conf"
chown -R frr:frr "$E/frr"
/lab/nodeexec "$n" ifup -a
/lab/nodeexec "$n" /usr/sbin/sshd -o ListenAddress="${mgmt%/*}" -o HostKey=/etc/ssh/ssh_host_ed25519_key \
  -o PermitRootLogin=prohibit-password -o UseDNS=no -o PidFile="/run/network/sshd.pid"
/lab/nodeexec "$n" /usr/lib/frr/frrinit.sh start >/dev/null
