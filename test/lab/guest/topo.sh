#!/bin/sh
# topo.sh (runs inside the lab guest, as root): the wiring around the PVE nodes, i.e. what a site
# has and PVE does not make: a VLAN-aware switch, the perimeter (core router), a management host,
# the DNS host (the resolver, PowerDNS's address) and an outside host. The nodes' own network
# (vmbr0, VLANs 50/51, SDN) is NOT made here: ifupdown2 brings it up from the rendered files (node.sh).
#   topo.sh up NODE,MGMT_CIDR,PORT...   e.g. topo.sh up dv02hyp002p02,10.20.10.2/24,enp1s0 dv02hyp002p03,10.20.10.3/24,eno1
#   (PORT: the node's trunk port, its inventory's substrate_node.bridge_ports[0])
#   topo.sh node NODE,MGMT_CIDR,PORT   one node's namespace and switch port again (a node that lost power)
#   topo.sh down
# Switch ports: every port has VLAN 1 untagged (management); node ports also carry 50 (transit)
# and 51 (underlay) tagged, like the site's trunk to the hypervisor. The perimeter has one access
# port per segment, named as the inventory's group_vars/perimeter.yml names them: mgmt (VLAN 1),
# transit (VLAN 50), wan (the uplink to the outside host) and svc (the services /24 with the
# resolver host). Its forwarding, routes and nftables come from deevnet.tenant.perimeter (lab.sh);
# sshd on its management address lets the playbook reach it.
# The outside host counts what reaches it by source address (table ip seen): the egress check
# reads there which address a tenant's packets arrive with.
set -eu
MGMT_GW=10.20.10.254/24      # the perimeter's management leg
CONTROLLER=10.20.10.5/24     # this guest's root namespace: where ansible's ssh jump lands
MGMT_HOST=10.20.10.1/24
TRANSIT_GW=10.20.50.1/24
RESOLVER=10.20.99.1/24; RESOLVER_GW=10.20.99.254/24
# PowerDNS's site address (the inventory's substrate_pdns.server): PowerDNS itself runs on the
# controller's loopback, the DNS host holds its address so that a packet the perimeter let through
# would land there and be counted (test/lab/probe.sh)
PDNS=10.20.99.2/24
OUTSIDE=198.51.100.1/24; WAN=198.51.100.2/24

port() { # port NS IFNAME SWPORT [MAC]: a veth from NS (named IFNAME, with MAC if given) to the switch (named SWPORT)
  ip link add "$3" netns sw type veth peer name "$2" netns "$1" ${4:+address "$4"}
  ip -n sw link set "$3" master br0 up
  ip -n "$1" link set "$2" up
}
# node NODE,MGMT_CIDR,PORT: the node's namespace and its trunk on the switch (also when the node
# comes back from a power loss: drills.sh); its /run (run-network, run-frr) starts empty, as a
# booting node's tmpfs does
node() {
  n=${1%%,*}; p=${1##*,}
  ip netns add "$n"; ip -n "$n" link set lo up
  # the old namespace of a node back from a power loss is freed by the kernel in its own time (tens
  # of seconds under TCG), its trunk's switch end with it: removed here, the pair goes at once
  ip -n sw link del "p-$(echo "$n" | tail -c 4)" 2>/dev/null || true
  # the trunk's MAC is the node's own, the same after a reboot, as a NIC's is: vmbr0 and its VLAN
  # devices take it, and the other node's neighbour entries stay right (a new random MAC after a
  # drill's reboot left the other node's ARP entry stale, and its first underlay ping unanswered)
  port "$n" "$p" "p-$(echo "$n" | tail -c 4)" "$(echo "$n" | md5sum | sed 's/^\(..\)\(..\)\(..\)\(..\).*/02:dd:\1:\2:\3:\4/')"
  for v in 50 51; do bridge -n sw vlan add dev "p-$(echo "$n" | tail -c 4)" vid $v; done
  rm -rf "/var/lib/lab/$n/run-network" "/var/lib/lab/$n/run-frr" "/var/lib/lab/$n/run-corosync-qdevice"
  mkdir -p "/var/lib/lab/$n/run-network" "/var/lib/lab/$n/run-frr" "/var/lib/lab/$n/run-corosync-qdevice" "/etc/netns/$n"
  chown frr:frr "/var/lib/lab/$n/run-frr"
  : > "/var/lib/lab/$n/corosync.pid"
}
# mgmt_host: the management host (the seed's management hypervisor, dv02hyp001p01, outside the
# fabric), where the QDevice's corosync-qnetd runs (deevnet.tenant.qdevice): its own /etc/corosync
# (Debian's corosync-qnetd package as installed: its postinst made qnetd's CA) and /run, and sshd
# on its management address so the playbook reaches it (nodeexec gives it all, as a node's)
mgmt_host() {
  d=/var/lib/lab/mgmt
  mkdir -p "$d/run-network" "$d/run-frr" "$d/run-corosync-qnetd" "$d/lib-corosync" /etc/netns/mgmt/corosync
  : > "$d/corosync.pid"
  cp -a /etc/corosync/. /etc/netns/mgmt/corosync/; rm -f /etc/netns/mgmt/corosync/corosync.conf
  /lab/nodeexec mgmt /usr/sbin/sshd -o ListenAddress=${MGMT_HOST%/*} -o HostKey=/etc/ssh/ssh_host_ed25519_key \
    -o PermitRootLogin=prohibit-password -o UseDNS=no -o PidFile=/run/network/sshd.pid
}
up() {
  ip netns add sw; ip -n sw link set lo up
  ip -n sw link add br0 type bridge vlan_filtering 1 stp_state 0 forward_delay 0
  ip -n sw link set br0 up
  for spec in "$@"; do node "$spec"; done
  ip netns add perimeter; ip -n perimeter link set lo up
  port perimeter mgmt p-perim
  ip -n perimeter addr add $MGMT_GW dev mgmt
  port perimeter transit p-transit
  bridge -n sw vlan del dev p-transit vid 1; bridge -n sw vlan add dev p-transit vid 50 pvid untagged
  ip -n perimeter addr add $TRANSIT_GW dev transit
  ip netns add mgmt; ip -n mgmt link set lo up
  port mgmt eth0 p-mgmt; ip -n mgmt addr add $MGMT_HOST dev eth0
  ip -n mgmt route add default via ${MGMT_GW%/*}
  mgmt_host
  # the controller's leg: the root namespace (sshd, the jump host) on the management VLAN
  ip link add p-ctl netns sw type veth peer name mgmt0
  ip -n sw link set p-ctl master br0 up; ip link set mgmt0 up; ip addr add $CONTROLLER dev mgmt0
  ip netns add resolver; ip -n resolver link set lo up
  ip link add svc netns perimeter type veth peer name eth0 netns resolver
  ip -n resolver addr add $RESOLVER dev eth0; ip -n resolver addr add $PDNS dev eth0; ip -n resolver link set eth0 up
  ip -n perimeter addr add $RESOLVER_GW dev svc; ip -n perimeter link set svc up
  ip -n resolver route add default via ${RESOLVER_GW%/*}
  ip netns add outside; ip -n outside link set lo up
  ip link add wan netns perimeter type veth peer name eth0 netns outside
  ip -n outside addr add $OUTSIDE dev eth0; ip -n outside link set eth0 up
  ip -n perimeter addr add $WAN dev wan; ip -n perimeter link set wan up
  # the outside host knows only its own /24 (the perimeter's uplink): a tenant address cannot be answered
  ip netns exec outside nft -f - <<'NFT'
table ip seen {
  chain input {
    type filter hook input priority 0; policy accept;
    icmp type echo-request ip saddr 198.51.100.2 counter comment "from the perimeter's NAT address"
    icmp type echo-request ip saddr 10.20.0.0/16 counter comment "from a site address"
  }
}
NFT
  # the perimeter's sshd (the perimeter playbook), on its management address
  ip netns exec perimeter /usr/sbin/sshd -o ListenAddress=${MGMT_GW%/*} -o HostKey=/etc/ssh/ssh_host_ed25519_key \
    -o PermitRootLogin=prohibit-password -o UseDNS=no -o PidFile=/run/sshd-perimeter.pid
}
down() {
  for n in $(ip netns list | cut -d' ' -f1); do
    ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$n"
  done
}
cmd=$1; shift; "$cmd" "$@"
