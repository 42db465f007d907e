#!/usr/bin/env bash
# netlab.sh up|test|down -- the isolation scenario's data plane in private namespaces (prefix
# dvt-iso-), never linked to this machine's namespace. Tenants tdemo (10.20.129.10) and tother
# (10.20.130.10) hang off a hypervisor whose per-tenant routing tables emulate the VRFs (the host
# kernel has no VRF): the default route in each table is set by deevnet.tenant.transit_route
# (run inside dvt-iso-hv through nsexec.sh). The perimeter's ruleset is the perimeter role's.
#   tdemo-vm ─tapA┐                ┌dnA   perim   mgmt ── mgmt 172.31.0.10
#                 hv  upA/upB ─────┤      (nft)   wan  ── inet 198.51.100.1 (+203.0.113.10)
#   tother-vm─tapB┘                └dnB
set -uo pipefail
P=dvt-iso-
A=${P}tdemo B=${P}tother HV=${P}hv PE=${P}perim MG=${P}mgmt IN=${P}inet
ALL="$A $B $HV $PE $MG $IN"
x(){ local ns=$1; shift; ip netns exec "$ns" "$@"; }
veth(){ ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" || return 1
        x "$1" ip addr add "$3" dev "$2"; x "$1" ip link set "$2" up
        x "$4" ip addr add "$6" dev "$5"; x "$4" ip link set "$5" up; }
up(){ set -e; down
  for n in $ALL; do ip netns add "$n"; x "$n" ip link set lo up; done
  veth $A eth0 10.20.129.10/24 $HV tapA 10.20.129.1/24
  veth $B eth0 10.20.130.10/24 $HV tapB 10.20.130.1/24
  x $A ip route add default via 10.20.129.1
  x $B ip route add default via 10.20.130.1
  veth $HV upA 100.64.1.1/30 $PE dnA 100.64.1.2/30
  veth $HV upB 100.64.2.1/30 $PE dnB 100.64.2.2/30
  veth $PE mgmt 172.31.0.1/24 $MG eth0 172.31.0.10/24
  veth $PE wan 198.51.100.2/24 $IN eth0 198.51.100.1/24
  x $MG ip route add default via 172.31.0.1
  x $IN ip addr add 203.0.113.10/32 dev lo
  # hypervisor: one table per tenant "VRF" (101 tdemo, 102 tother); transit_route adds the defaults
  x $HV sysctl -qw net.ipv4.ip_forward=1
  x $HV ip route add 10.20.129.0/24 dev tapA table 101
  x $HV ip route add 100.64.1.0/30 dev upA table 101
  x $HV ip route add 10.20.130.0/24 dev tapB table 102
  x $HV ip route add 100.64.2.0/30 dev upB table 102
  x $HV ip rule add iif tapA lookup 101 pref 1001
  x $HV ip rule add iif upA lookup 101 pref 1002
  x $HV ip rule add iif tapB lookup 102 pref 1003
  x $HV ip rule add iif upB lookup 102 pref 1004
  # the shared local table would let a tenant reach the hypervisor's other addresses (a real VRF does not)
  x $HV nft -f - <<'NFT'
table inet dvt_vrf_emulation {
  chain input {
    type filter hook input priority filter; policy accept;
    iifname "tapA" ip daddr != 10.20.129.1 drop
    iifname "tapB" ip daddr != 10.20.130.1 drop
  }
}
NFT
  x $PE sysctl -qw net.ipv4.ip_forward=1
  x $PE ip route add 10.20.129.0/24 via 100.64.1.1
  x $PE ip route add 10.20.130.0/24 via 100.64.2.1
  x $PE ip route add default via 198.51.100.1
  echo "netlab up: $ALL"
}
down(){ for n in $ALL; do ip netns del "$n" 2>/dev/null || true; done; }
rc=0
check(){ local want=$1 desc=$2; shift 2; local got=fail
  "$@" >/dev/null 2>&1 && got=ok
  if [ "$got" = "$want" ]; then echo "PASS  $desc"; else echo "FAIL  $desc (want $want, got $got)"; rc=1; fi; }
test_(){
  check ok   "tdemo -> internet 203.0.113.10 through the perimeter (NAT)" x $A ping -c1 -W1 203.0.113.10
  check ok   "tother -> internet 203.0.113.10"                          x $B ping -c1 -W1 203.0.113.10
  check fail "tdemo -> tother 10.20.130.10"                              x $A ping -c1 -W1 10.20.130.10
  check fail "tother -> tdemo 10.20.129.10"                              x $B ping -c1 -W1 10.20.129.10
  check fail "tdemo -> hypervisor's tother side 10.20.130.1"             x $A ping -c1 -W1 10.20.130.1
  check fail "tdemo -> management 172.31.0.10"                           x $A ping -c1 -W1 172.31.0.10
  check fail "tother -> management 172.31.0.10"                          x $B ping -c1 -W1 172.31.0.10
  check fail "tdemo -> perimeter itself 172.31.0.1"                      x $A ping -c1 -W1 172.31.0.1
  check ok   "management -> tdemo 10.20.129.10"                          x $MG ping -c1 -W1 10.20.129.10
  check fail "internet -> tdemo (no route, no DNAT)"                     x $IN ping -c1 -W1 10.20.129.10
  # the internet host must see the perimeter's address (masquerade), not the tenant's
  local seen; seen=$(mktemp)
  timeout 5 ip netns exec $IN python3 -c 'import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(("203.0.113.10",8080)); s.listen()
c,a=s.accept(); open(sys.argv[1],"w").write(a[0]); c.close()' "$seen" &
  local lp=$!; sleep 0.3
  x $A timeout 3 bash -c 'exec 3<>/dev/tcp/203.0.113.10/8080' 2>/dev/null || true
  wait $lp 2>/dev/null || true
  if [ "$(cat "$seen")" = 198.51.100.2 ]; then echo "PASS  internet sees the perimeter's address 198.51.100.2";
  else echo "FAIL  internet saw '$(cat "$seen")', want 198.51.100.2"; rc=1; fi
  rm -f "$seen"
  return $rc; }
case "${1:-}" in up) up ;; down) down ;; test) test_ ;; *) echo "usage: $0 up|test|down" >&2; exit 2 ;; esac
