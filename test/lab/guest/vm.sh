#!/bin/sh
# vm.sh add VMID NAME NODE BRIDGE MAC CIDR GW (inside the lab guest): a tenant VM as a namespace,
# plugged like PVE plugs a VM's NIC: a port named tap<vmid>i0 on the VNet bridge of the node pvesim
# placed it on, the VM side eth0 with the MAC of net0, the address and gateway of ipconfig0 (all
# read back from pvesim by lab.sh, never constants). A VM plugged elsewhere than pvesim says is
# plugged again.
#   vm.sh del VMID NAME
set -eu
case $1 in
  add)
    vmid=$2 name=$3 node=$4 br=$5 mac=$6 cidr=$7 gw=$8
    ns=vm-$name
    if ip netns list | grep -q "^$ns\( \|$\)"; then
      # plugged already: as pvesim says (node and bridge), or unplugged to be plugged again (a NIC
      # moved to another bridge: the vmbr0 move of test/lab/probe.sh)
      ip -n "$node" -o link show "tap${vmid}i0" 2>/dev/null | grep -q " master $br " && exit 0
      ip netns del "$ns"
    fi
    ip netns add "$ns"; ip -n "$ns" link set lo up
    ip link add "tap${vmid}i0" netns "$node" type veth peer name eth0 netns "$ns"
    ip -n "$node" link set "tap${vmid}i0" master "$br" up
    ip -n "$ns" link set eth0 address "$mac"
    ip -n "$ns" link set eth0 up
    ip -n "$ns" addr add "$cidr" dev eth0
    ip -n "$ns" route add default via "$gw";;
  del)
    ip netns del "vm-$3" 2>/dev/null || true;;
esac
