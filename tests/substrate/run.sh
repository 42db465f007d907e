#!/usr/bin/env bash
# tests/substrate/run.sh --venv DIR --collections DIR
# A new substrate repository made only from examples/substrate converges tdemo against the lab:
# examples/substrate is copied to a temp dir and used as it is, plus a second inventory source
# (lab.yml, written here) that overrides only how things are reached: the PVE and DNS endpoints of
# the lab (pvesim, PowerDNS, Unbound on 127.0.0.1, extensions/molecule/shared/lab.sh) and, per
# hypervisor, a local connection whose become_exe enters a private namespace made here
# (dvt-sub<PID>-p02/-p03: vmbr0.50 and vmbr0.51 veths with the host_vars' addresses), and the files
# a node would own (its interfaces.d file, its ifupdown2 hooks) under the temp dir; the rendered file
# is checked by the role's own ifupdown2 syntax check, run from the Debian tree (whose private mount
# namespace stands in for the role's unshare). transit_route
# runs for real inside those namespaces. Then:
#   - check mode over onboard, fabric and tenant writes nothing (files, pvesim writes, routes);
#   - a real run converges (onboard, fabric, tenant; verify resolves tdemo through Unbound);
#   - a second run and a check-mode run report changed=0 and send no API write;
#   - each contradiction fails before any change, naming the variable: a missing site key, the
#     transit VLAN given twice differently, a tenant.index that disagrees with the attachment,
#     a hypervisor aimed at the controller (in the group, or reached locally without saying so);
#   - a lost registry (#25): rebuilt from PVE and DNS (playbooks/registry.yml) equal to the original; a new tenant
#     gets a free index, never one PVE shows in use; an index in use, a stale registry, a DNS zone PVE lacks: refused;
#   - a node offline (#25): a tenant change is refused before any change, naming it; with the node in
#     substrate_maintenance the change converges around it with a warning; its first run back reaches it;
#     the same for destroy, which reads the nodes before it removes the first record or VM;
#   - the whole site from empty (#25): pvesim and the DNS lab wiped, playbooks/site.yml rebuilds fabric and every
#     tenant from the repository, the registry and the attachments; verify green; a second run changes nothing;
#   - the node network role refuses a main interfaces file that does not source interfaces.d,
#     and ifupdown2 refuses a broken rendered file.
# The tenant's VRF routes need real VRF devices, which this kernel lacks (ADR-0003; the QEMU guest of
# make test-route has them): tenant.yml runs with substrate_routes=false; destroy's removal runs.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=$ROOT/.venv COLLECTIONS=$ROOT/.ansible/collections KEEP=0
while [ $# -gt 0 ]; do
  case $1 in
    --venv) VENV=$2; shift 2 ;;
    --collections) COLLECTIONS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "usage: $0 [--venv DIR] [--collections DIR] [--keep]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "substrate test: needs root (network namespaces)"; [ -n "${CI:-}" ] && exit 1; exit 0; }
W=$(mktemp -d /tmp/dvt-substrate.XXXXXX)
NS=dvt-sub$$
NODES="dv02hyp002p02 dv02hyp002p03"
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false ANSIBLE_NOCOLOR=1 \
  ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_RETRY_FILES_ENABLED=false \
  ANSIBLE_DISPLAY_SKIPPED_HOSTS=false ANSIBLE_HOST_KEY_CHECKING=false
# The lab's hypervisors are reached as root by a local connection; become must still run (its
# become_exe enters the node's namespace), so root -> root is not skipped.
export ANSIBLE_BECOME_ALLOW_SAME_USER=true
rc=0
pass(){ echo "PASS  $*"; }
fail(){ echo "FAIL  $*"; rc=1; }
ns(){ echo "$NS-${1: -3}"; }   # dv02hyp002p02 -> dvt-subPID-p02

cleanup(){
  "$ROOT/extensions/molecule/shared/lab.sh" down "$W/lab" >/dev/null 2>&1 || true
  for n in $NODES; do ip netns del "$(ns "$n")" 2>/dev/null || true; done
  if [ "$KEEP" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT

# The Debian tree whose ifupdown2 checks the rendered files: built (when needed) here, once, before
# two hypervisors would race to build it.
"$ROOT/scripts/debian-tree.sh" path >/dev/null || { echo "substrate test: no Debian tree (scripts/debian-tree.sh)"; exit 1; }

# --- the lab: pvesim + PowerDNS + Unbound on loopback ---------------------------------------------
"$ROOT/extensions/molecule/shared/lab.sh" up "$W/lab" >"$W/lab.out" 2>&1 || { cat "$W/lab.out"; exit 1; }
LAB=$W/lab/substrate.yml
labv(){ "$VENV/bin/python" -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); [d := d[k] for k in sys.argv[2].split(".")]; print(d)' "$LAB" "$1"; }
SIM_URL=$(labv pvesim_url); CA=$(labv substrate_pve.ca_path)
writes(){ curl -sf --cacert "$CA" "$SIM_URL/_sim/stats" | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["data"]["writes"])'; }

# --- the substrate repository: examples/substrate copied as it is ---------------------------------
cp -r "$ROOT/examples/substrate" "$W/repo"
REPO=$W/repo
hv(){ "$VENV/bin/ansible-inventory" -i "$REPO/inventory" --host "$1" | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["substrate_node"][sys.argv[1]])' "$2"; }

# The example's DNS endpoints as a site would have them (templates resolved, no lab override):
# PowerDNS (RFC 2136 server and HTTP API) and the site resolver (Unbound on :53) are two daemons,
# so they cannot share one address and port (the example had both on 10.20.99.1:53).
dns_eps=$("$VENV/bin/ansible" -i "$REPO/inventory" localhost -e vault_substrate_pdns_api_key=unused -m ansible.builtin.debug \
  -a 'msg={{ [substrate_pdns.server ~ ":" ~ substrate_pdns.port, substrate_pdns.api_url | urlsplit("hostname"), substrate_resolver.server ~ ":" ~ substrate_resolver.port] | join(" ") }}' 2>&1 \
  | sed -n 's/^ *"msg": "\(.*\)"$/\1/p')
read -r pdns_ep pdns_api res_ep <<<"$dns_eps"
if [ -n "$res_ep" ] && [ "$pdns_ep" != "$res_ep" ] && [ "${pdns_ep%:*}" = "$pdns_api" ]; then
  pass "example inventory: PowerDNS $pdns_ep (API on $pdns_api), the site resolver on $res_ep"
else fail "example inventory: PowerDNS '$pdns_ep' (API on '$pdns_api') and the site resolver '$res_ep' must be two endpoints"; fi

# --- one private namespace per hypervisor, addressed as its host_vars say --------------------------
for n in $NODES; do
  x=$(ns "$n"); ip netns add "$x"; ip -n "$x" link set lo up
  for v in 50:transit 51:underlay; do
    ip -n "$x" link add "vmbr0.${v%%:*}" type veth peer name "peer${v%%:*}"
    ip -n "$x" addr add "$(hv "$n" "${v#*:}")" dev "vmbr0.${v%%:*}"
    ip -n "$x" link set "vmbr0.${v%%:*}" up; ip -n "$x" link set "peer${v%%:*}" up
  done
  mkdir -p "$W/node-$n/hooks"
  printf 'auto lo\niface lo inet loopback\n\nsource %s/*\n' "$W/node-$n/interfaces.d" >"$W/node-$n/interfaces"
  mkdir -p "$W/node-$n/interfaces.d"
done

# --- lab.yml: the second inventory source, connection overrides only --------------------------------
python_bin=$VENV/bin/python
write_lab_yml(){ # from $LAB, the lab's endpoints (again after the lab is restarted)
{
  echo "---"
  echo "# Lab overrides (tests/substrate/run.sh): how things are reached, nothing else."
  echo "all:"
  echo "  hosts:"
  echo "    localhost:"
  "$python_bin" - "$LAB" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
o = {k: d[k] for k in ('substrate_pve', 'substrate_pdns', 'substrate_resolver', 'substrate_unbound_conf_dir')}
print('\n'.join('      ' + l for l in yaml.safe_dump(o, sort_keys=True).splitlines()))
PY
  echo "  children:"
  echo "    hypervisors:"
  echo "      hosts:"
  for n in $NODES; do
    cat <<YML
        $n:
          ansible_connection: local
          ansible_python_interpreter: $python_bin
          ansible_become_exe: $ROOT/extensions/molecule/isolation/nsexec.sh $(ns "$n")
          substrate_node_local: true
          substrate_route_hook_dir: $W/node-$n/hooks
          proxmox_node_network_path: $W/node-$n/interfaces.d/deevnet-tenant
          proxmox_node_network_guard_path: $W/node-$n/deevnet-tenant-guard.nft
          proxmox_node_network_wire_path: $W/node-$n/deevnet-wire.nft
          proxmox_node_network_main_file: $W/node-$n/interfaces
          proxmox_node_network_reload: false
          substrate_snippets_dir: $W/lab/nodes/$n/var/lib/vz/snippets
          substrate_guard_cgroup_root: $W/node-$n/cgroup
          substrate_guard_run_dir: $W/node-$n/run
          substrate_guard_unit_dir: $W/node-$n/systemd
          substrate_guard_systemd: false
          # a node here is a directory: the wire's table is written, not loaded (make test-wire loads it)
          substrate_guard_nft: ""
          substrate_guard_wire_file: $W/node-$n/wire.nft
          substrate_node_environment: {PATH: "$W/lab/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
          proxmox_node_network_validate: >-
            $ROOT/scripts/debian-tree.sh run -b %s:/tmp/dvt-rendered --
            sh -c '{{ proxmox_node_network_syntax_check }}' /tmp/dvt-rendered
YML
  done
} >"$W/lab.yml"
}
write_lab_yml

play(){ # play NAME PLAYBOOK [ARGS...]: run from the repository, log to $W/NAME.log
  local name=$1 pb=$2; shift 2
  (cd "$REPO" && "$VENV/bin/ansible-playbook" -i inventory -i "$W/lab.yml" "deevnet.tenant.$pb" "$@") >"$W/$name.log" 2>&1
}
recap_changed(){ grep -E '^(localhost|dv02hyp)' "$W/$1.log" | grep -o 'changed=[0-9]*' | cut -d= -f2 | paste -sd+ | bc; }
routes(){ for n in $NODES; do echo "$n: $(ip -n "$(ns "$n")" route show table all proto 221 | sort | tr '\n' ';')"; done; }
state(){ # everything a run could change: files, API writes, routes
  echo "writes=$(writes)"; routes
  (cd "$W" && find repo node-* lab/nodes -type f -print0 | sort -z | xargs -0 sha256sum)
}

# --- 1. check mode on a fresh substrate: nothing written ----------------------------------------------
before=$(state)
play check-onboard onboard -e tenant_name=tdemo --check --diff && play check-fabric fabric --check --diff
c=$?
after=$(state)
if [ $c = 0 ] && [ "$before" = "$after" ]; then pass "check mode (onboard, fabric) on a fresh substrate succeeds and changes nothing"
else fail "check mode on a fresh substrate (rc=$c): before [$before] after [$after]"; tail -n 20 "$W/check-onboard.log" "$W/check-fabric.log"; fi

# --- 2. the contradictions: each fails before any change, naming the variable ---------------------------
contradiction(){ # NAME EXPECTED-TEXT PLAYBOOK EXTRA-INVENTORY-YAML [ARGS...]
  local name=$1 want=$2 pb=$3 extra=$4; shift 4
  printf '%s\n' "$extra" >"$W/$name.yml"
  local b a; b=$(state)
  (cd "$REPO" && "$VENV/bin/ansible-playbook" -i inventory -i "$W/lab.yml" -i "$W/$name.yml" "deevnet.tenant.$pb" "$@") >"$W/$name.log" 2>&1
  local c=$?; a=$(state)
  if [ $c != 0 ] && grep -qF -- "$want" "$W/$name.log" && [ "$b" = "$a" ]; then pass "$name: refused before any change ($want)"
  else fail "$name: rc=$c, wanted [$want], unchanged=$([ "$b" = "$a" ] && echo yes || echo no)"; grep -E 'fatal|FAILED|msg' "$W/$name.log" | head -5
    diff <(echo "$b") <(echo "$a") | head -10; fi
}
contradiction missing-site-key "zone found in substrate_site" fabric "$(cat <<'YML'
all:
  hosts:
    localhost:
      substrate_site: {network: 10.20.0.0/16, overlay: 10.20.128.0/18, loopbacks: 10.20.255.0/24, resolver: 10.20.99.1,
        transit_vlan: 50, underlay_vlan: 51, asn: 65020, controller: evpnctl, fabric: ufab, mtu: 1450, bridge: vmbr0,
        management: 10.20.10.0/24, transit: 10.20.50.0/24, transit_gateway: 10.20.50.1, underlay: 10.20.51.0/24}
YML
)"
contradiction vlan-twice "tenant_transit.vlan 60 (dv02hyp002p03) contradicts substrate_site.transit_vlan 50" fabric "$(cat <<'YML'
all:
  children:
    hypervisors:
      hosts:
        dv02hyp002p03: {tenant_transit: {vlan: 60, address: 10.20.50.3/24}}
YML
)"
contradiction route-device-twice "tenant_vrf_route.device vmbr0.60 (localhost) contradicts the transit device vmbr0.50" fabric "$(cat <<'YML'
all:
  hosts:
    localhost: {tenant_vrf_route: {gateway: 10.20.50.1, device: vmbr0.60}}
YML
)"
contradiction controller-as-hypervisor "localhost in group hypervisors: hypervisor tasks (node network, routes) would run on the controller" fabric "$(cat <<'YML'
all:
  children:
    hypervisors:
      hosts:
        localhost: {}
YML
)"
contradiction local-hypervisor "dv02hyp002p02 in group hypervisors: hypervisor tasks (node network, routes) would run on the controller (ansible_connection is local)" fabric "$(cat <<'YML'
all:
  children:
    hypervisors:
      hosts:
        dv02hyp002p02: {substrate_node_local: false}
YML
)"

# --- 3. converge for real ----------------------------------------------------------------------------
if play onboard onboard -e tenant_name=tdemo && play fabric fabric && play tenant tenant -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false \
   && play verify verify -e tenant_file=tenants/tdemo.yml; then
  pass "onboard, fabric, tenant, verify converge tdemo from the copied examples/substrate (verify: A/PTR through Unbound, PVE config)"
else fail "converge"; for f in onboard fabric tenant verify; do [ -f "$W/$f.log" ] && grep -E 'fatal|FAILED' -A3 "$W/$f.log" | head -12; done; fi
for n in $NODES; do
  r=$(ip -n "$(ns "$n")" route show default)
  case "$r" in *"via 10.20.50.1 dev vmbr0.50 proto 221"*) pass "$n: default route on transit ($r)" ;; *) fail "$n: default route [$r]" ;; esac
  [ "$(ip netns exec "$(ns "$n")" cat /proc/sys/net/ipv4/conf/vmbr0.50/forwarding)" = 1 ] && pass "$n: forwarding on vmbr0.50" || fail "$n: forwarding on vmbr0.50"
  grep -q "route replace 0.0.0.0/0 via 10.20.50.1 dev vmbr0.50 .*proto 221" "$W/node-$n/hooks/deevnet-transit-route" 2>/dev/null \
    && pass "$n: persistence hook written" || fail "$n: hook $W/node-$n/hooks/deevnet-transit-route"
  f=$W/node-$n/interfaces.d/deevnet-tenant
  if grep -q "bridge-ports $(hv "$n" bridge_ports | tr -d "[]'")" "$f" && grep -q "address $(hv "$n" transit)" "$f" && grep -q "iface vmbr0.51 inet static" "$f"; then
    pass "$n: node network rendered from host_vars (ports, transit address) and the site (VLANs)"
  else fail "$n: node network $f"; cat "$f"; fi
done
fab=$(curl -sf --cacert "$CA" -H "Authorization: PVEAPIToken=root@pam!sim=$(labv substrate_pve.api_token_secret)" "$SIM_URL/api2/json/cluster/sdn/fabrics/all")
for ip in 10.20.255.2 10.20.255.3; do
  case "$fab" in *"$ip"*) pass "fabric member loopback $ip (from host_vars substrate_node.loopback)" ;; *) fail "fabric lacks $ip: $fab" ;; esac
done
grep -q "^  index: 1$" "$REPO/attachments/tdemo.yml" && grep -q "tdemo: 1" "$REPO/tenants.yml" \
  && pass "registry and attachment written inside the substrate repository" || fail "registry/attachment"

# --- 4. second run and check mode: nothing to do ------------------------------------------------------
curl -sf --cacert "$CA" -X POST "$SIM_URL/_sim/stats/reset" >/dev/null
ok=1
for m in "" "--check"; do
  play again-onboard$m onboard -e tenant_name=tdemo $m || ok=0
  play again-fabric$m fabric $m || ok=0
  play again-tenant$m tenant -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false $m || ok=0
  for p in onboard fabric tenant; do ch=$(recap_changed "again-$p$m"); [ "$ch" = 0 ] || { ok=0; echo "  $p $m: changed=$ch"; grep -B3 '^changed' "$W/again-$p$m.log" | head; }; done
done
w=$(writes)
if [ $ok = 1 ] && [ "$w" = 0 ]; then pass "second run and check-mode run of onboard, fabric, tenant: changed=0, 0 API writes"
else fail "second run / check mode: ok=$ok writes=$w"; fi

# --- 5. the index given twice: a declaration that disagrees with the attachment ------------------------
sed 's/^  index: 1$/  index: 2/' "$REPO/tenants/tdemo.yml" >"$REPO/tenants/tdemo-wrong.yml"
contradiction index-mismatch "tenant.index 2 disagrees with the index allocated to tdemo: tenant_attachment.index 1" tenant "---" -e tenant_file=tenants/tdemo-wrong.yml
rm -f "$REPO/tenants/tdemo-wrong.yml"

# --- 5b. the envelope (ADR-0014): the attachment carries the substrate's; a bad envelope and a declaration over
# it are refused before any change ------------------------------------------------------------------------
if "$VENV/bin/python" -c 'import sys, yaml; a = yaml.safe_load(open(sys.argv[1]))["tenant_attachment"]
sys.exit(a["envelope"] != {"vms": 8, "cores": 16, "memory": 32768, "disk": 256} or a["usage_limits"] != {"bandwidth": 1000, "broadcast": 200,
         "disk_read_mbps": 400, "disk_write_mbps": 200, "disk_read_iops": 8000, "disk_write_iops": 4000, "dns_records": 1000, "dns_updates": 60})' "$REPO/attachments/tdemo.yml"; then
  pass "the attachment carries the default envelope (8 VMs, 16 vCPUs, 32768 MiB, 256 GiB, as releases before 0.3.0 read it) and beside it the usage limits (1000 Mbit/s, 200 broadcast frames/s, disk I/O)"
else fail "the attachment's envelope and usage limits: $(grep -A12 '^  envelope:' "$REPO/attachments/tdemo.yml")"; fi
contradiction envelope-bad "vms, memory must each be a whole number of at least 1" onboard "$(cat <<'YML'
all:
  hosts:
    localhost:
      substrate_tenant_envelopes: {tdemo: {vms: 0, memory: lots}}
YML
)" -e tenant_name=tdemo
sed 's/^    count: 1$/    count: 9/' "$REPO/tenants/tdemo.yml" >"$REPO/tenants/tdemo-big.yml"
contradiction envelope-over "tenant.vms.count is 9, over the tenant's envelope of 8 (envelope.vms" tenant "---" -e tenant_file=tenants/tdemo-big.yml
rm -f "$REPO/tenants/tdemo-big.yml"

# --- 5a. a lost registry (#25): rebuilt from PVE and DNS; onboarding never gives an index PVE shows in use ----
# tother is onboarded at index 3 (pool, user, DNS zones; no VRF yet), so the lowest free index is 2. With the
# registry deleted, playbooks/registry.yml rebuilds it equal to the original (its check mode writes nothing);
# a new tenant gets index 2, not tdemo's 1 or tother's 3; asking for index 1 is refused before any change
# (index 1's reverse zone keeps tdemo's key); a registry or DNS zone that disagrees with PVE is refused, naming both.
REG=$REPO/tenants.yml
PDNS_URL=$(labv substrate_pdns.api_url)/api/v1/servers/localhost
pdns(){ curl -sf -H "X-API-Key: $(labv substrate_pdns.api_key)" "$@"; }
rev1_key(){ pdns "$PDNS_URL/zones/129.20.10.in-addr.arpa./metadata/TSIG-ALLOW-DNSUPDATE"; }
same_yaml(){ "$VENV/bin/python" -c 'import sys,yaml; sys.exit(yaml.safe_load(open(sys.argv[1])) != yaml.safe_load(open(sys.argv[2])))' "$1" "$2"; }
play onboard-tother onboard -e tenant_name=tother -e tenant_index=3 || { fail "onboard tother"; grep -E 'fatal|FAILED' -A3 "$W/onboard-tother.log" | head -6; }
cp "$REG" "$W/registry.orig"
rm -f "$REG"
if play registry-check registry --check --diff && [ ! -e "$REG" ]; then pass "registry lost: the rebuild's check mode writes nothing"
else fail "registry --check"; tail -n 15 "$W/registry-check.log"; fi
if play registry registry && same_yaml "$REG" "$W/registry.orig"; then pass "registry lost: rebuilt from PVE and DNS equal to the original ($(tr '\n' ' ' <"$REG"))"
else fail "registry rebuild: [$(cat "$REG" 2>/dev/null)] vs [$(cat "$W/registry.orig")]"; grep -E 'fatal|FAILED' -A3 "$W/registry.log" | head -8; fi
rm -f "$REG"
key_before=$(rev1_key)
contradiction lost-registry-index-in-use "refusing to give tenant tnew index 1: PVE shows it in use by tenant tdemo (pool tenant-tdemo, user tenant-tdemo@pve, vm 10101 (tdemo-1), vnet tn01v0 of zone tn01)" \
  onboard "---" -e tenant_name=tnew -e tenant_index=1
[ "$(rev1_key)" = "$key_before" ] && pass "index 1's reverse zone still lets only tdemo's key update it ($key_before)" \
  || fail "index 1's reverse zone key changed: [$key_before] -> [$(rev1_key)]"
if play onboard-tnew onboard -e tenant_name=tnew && grep -q "tenant tnew has index 2 " "$W/onboard-tnew.log"; then
  pass "registry lost: a new tenant gets the free index 2, not 1 (tdemo's) or 3 (tother's) that PVE shows in use"
else fail "onboard tnew with the registry lost: $(grep -o 'tenant tnew has index [0-9]*' "$W/onboard-tnew.log")"; grep -E 'fatal|FAILED' -A3 "$W/onboard-tnew.log" | head -6; fi
printf 'tenants:\n  tdemo: 4\n  tother: 3\n' >"$REG"
contradiction stale-registry-onboard "refusing to give tenant tdemo index 4: PVE shows it holding index 1" onboard "---" -e tenant_name=tdemo
contradiction stale-registry-rebuild "gives tenant tdemo index 4, PVE index 1 (pool tenant-tdemo" registry "---"
rm -f "$REG"
pdns -X POST -H 'Content-Type: application/json' -d '{"name": "tghost.mobile.deevnet.net.", "kind": "Native", "nameservers": []}' "$PDNS_URL/zones" >/dev/null
contradiction dns-disagrees "DNS zone tghost.mobile.deevnet.net. names tenant tghost, which PVE holds no index for" registry "---"
pdns -X DELETE "$PDNS_URL/zones/tghost.mobile.deevnet.net." >/dev/null
if play registry-all registry && same_yaml "$REG" <(printf 'tenants:\n  tdemo: 1\n  tnew: 2\n  tother: 3\n'); then pass "registry rebuilt with tnew: $(tr '\n' ' ' <"$REG")"
else fail "registry with tnew: [$(cat "$REG" 2>/dev/null)]"; grep -E 'fatal|FAILED' -A3 "$W/registry-all.log" | head -8; fi

# --- 5c. disk bound by storage (ADR-0014 decision 2): each tenant's own lvmthin storage, from the attachment ---
# The VM's disks are on tenant-tdemo; tdemo's token (from its attachment) is refused space on the shared local-lvm
# with PVE's 403; with tdemo's thin pool written full (POST /_sim/disks, as a guest filling its disk), tdemo's next
# clone fails in its task with lvm2's refusal while tother's clone onto its own storage succeeds; a tenant whose
# thin pool a node lacks is refused at onboarding before any change, naming the node and the pool.
sapi(){ curl -s --cacert "$CA" -H "Authorization: PVEAPIToken=root@pam!sim=$(labv substrate_pve.api_token_secret)" "$SIM_URL/api2/json$1"; }
att(){ "$VENV/bin/python" -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1]))["tenant_attachment"]; [d := d[k] for k in sys.argv[2].split(".")]; print(d)' "$REPO/attachments/$1.yml" "$2"; }
tapi(){ # tapi TENANT METHOD PATH [curl args]: a call with the tenant's own token from its attachment
  local t=$1 m=$2 p=$3; shift 3
  curl -s --cacert "$CA" -X "$m" -H "Authorization: PVEAPIToken=$(att "$t" pve.api_user)!$(att "$t" pve.api_token_id)=$(att "$t" pve.api_token_secret)" "$SIM_URL/api2/json$p" "$@"; }
task_exit(){ # task_exit TENANT NODE UPID: the task's exitstatus once it stopped
  local i st; for i in $(seq 1 50); do
    st=$(tapi "$1" GET "/nodes/$2/tasks/$3/status" | "$VENV/bin/python" -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(d.get("exitstatus","") if d["status"]=="stopped" else "")')
    [ -n "$st" ] && { echo "$st"; return; }; sleep 0.2; done; echo "task still running"; }
upid(){ "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin).get("data") or "")'; }
P2=dv02hyp002p02
[ "$(att tdemo storage)" = tenant-tdemo ] && [ "$(att tother storage)" = tenant-tother ] \
  && pass "the attachments name each tenant's storage (tenant_attachment.storage: tenant-tdemo, tenant-tother)" || fail "attachment storage: [$(att tdemo storage)] [$(att tother storage)]"
vm1=$(sapi "/cluster/resources?type=vm" | "$VENV/bin/python" -c 'import json,sys; print(next(r["node"] for r in json.load(sys.stdin)["data"] if r.get("name") == "tdemo-1"))')
disks=$(sapi "/nodes/$vm1/qemu/10101/config" | "$VENV/bin/python" -c 'import json,re,sys; c=json.load(sys.stdin)["data"]; print(" ".join(sorted(c[k].split(",")[0] for k in c if re.fullmatch(r"(scsi|virtio|sata|ide)[0-9]+", k))))')
case "$disks" in "tenant-tdemo:vm-10101-cloudinit tenant-tdemo:vm-10101-disk-0") pass "tdemo-1's disks live on its own storage ($disks)" ;;
  *) fail "tdemo-1's disks: [$disks]" ;; esac
acl=$(sapi /access/acl | "$VENV/bin/python" -c 'import json,sys; print(" ".join(sorted(e["path"] for e in json.load(sys.stdin)["data"] if e["ugid"] == "tenant-tdemo@pve!iac" and e["path"].startswith("/storage"))))')
[ "$acl" = /storage/tenant-tdemo ] && pass "tdemo's token holds a storage grant on /storage/tenant-tdemo only" || fail "tdemo's storage grants: [$acl]"
r=$(tapi tdemo POST "/nodes/$P2/qemu" -d vmid=10150 -d pool=tenant-tdemo -d scsi0=local-lvm:1)
case "$r" in *'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)'*) pass "tdemo's token refused allocation on the shared local-lvm (PVE's 403)" ;;
  *) fail "tdemo's allocation on local-lvm: $r" ;; esac
for n in $NODES; do curl -sf --cacert "$CA" -X POST "$SIM_URL/_sim/disks/$n" -d '{"vg":"pve","thinpool":"tenant-tdemo","used":274877906944}' >/dev/null; done
u=$(tapi tdemo POST "/nodes/$P2/qemu/9000/clone" -d newid=10150 -d pool=tenant-tdemo -d full=1 -d storage=tenant-tdemo | upid)
e=$(task_exit tdemo "$P2" "$u")
case "$e" in *"lvcreate 'pve/vm-10150-cloudinit' error:   Free space in pool pve/tenant-tdemo is above threshold, new volumes are not allowed."*)
  pass "tdemo's full storage fails its own clone ($e)" ;; *) fail "tdemo's clone onto its full storage: [$e] ($u)" ;; esac
u=$(tapi tother POST "/nodes/$P2/qemu/9000/clone" -d newid=10350 -d pool=tenant-tother -d full=1 -d storage=tenant-tother | upid)
e=$(task_exit tother "$P2" "$u")
[ "$e" = OK ] && pass "tother's clone onto its own storage succeeds beside tdemo's full one" || fail "tother's clone: [$e] ($u)"
u=$(tapi tother DELETE "/nodes/$P2/qemu/10350" | upid); [ "$(task_exit tother "$P2" "$u")" = OK ] || fail "remove tother's clone"
for n in $NODES; do curl -sf --cacert "$CA" -X POST "$SIM_URL/_sim/disks/$n" -d '{"vg":"pve","thinpool":"tenant-tdemo","used":0}' >/dev/null; done
contradiction no-thin-pool "node dv02hyp002p02 has no thin pool pve/tenant-tnope" onboard "---" -e tenant_name=tnope
# an envelope below what tdemo's pool already runs (ADR-0014): refused at onboarding, nothing stopped or written
contradiction envelope-below-use "over the envelope's 512 (envelope.memory)" onboard "$(cat <<'YML'
all:
  vars:
    substrate_tenant_envelopes: {tdemo: {memory: 512}}
YML
)" -e tenant_name=tdemo

# --- 5d. the envelope guard (ADR-0014 decision 3), installed by the hypervisor plays --------------------------
# onboard and fabric put the guard and the envelope file in each node's snippets directory (pvesim's node disk,
# where it runs a hookscript from) and set it on the template as root on the node; tdemo-1, cloned after, carries
# it. A VM tdemo's own token makes with POST /qemu (no hookscript, 32 vCPUs) is guarded by the next tenant
# converge's sweep and refused at start naming the envelope. The control: with substrate_envelope_guard=false
# the converge leaves such a VM unguarded, and it starts over the envelope.
for n in $NODES; do
  d=$W/lab/nodes/$n/var/lib/vz/snippets
  if [ "$(stat -c %a "$d/deevnet-envelope-guard" 2>/dev/null)" = 755 ] \
     && "$VENV/bin/python" -c 'import json,sys; t=json.load(open(sys.argv[1]))["tenants"]; sys.exit(t["tdemo"] != {"pool": "tenant-tdemo", "vg": "pve", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256, "bandwidth": 1000, "broadcast": 200, "disk_read_mbps": 400, "disk_write_mbps": 200, "disk_read_iops": 8000, "disk_write_iops": 4000, "dns_records": 1000, "dns_updates": 60}})' "$d/deevnet-envelopes.json"; then
    pass "$n: the guard (0755) and tdemo's envelope in its snippets directory"
  else fail "$n: guard [$(ls -l "$d" 2>&1 | tr '\n' ' ')] envelopes [$(cat "$d/deevnet-envelopes.json" 2>&1 | tr -d ' \n')]"; fi
done
hook_of(){ sapi "/nodes/$1/qemu/$2/config" | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["data"].get("hookscript", "none"))'; }
[ "$(hook_of "$P2" 9000)" = local:snippets/deevnet-envelope-guard ] && [ "$(hook_of "$vm1" 10101)" = local:snippets/deevnet-envelope-guard ] \
  && pass "the template's hookscript is the guard (set as root on the node), and tdemo-1, its clone, carries it" \
  || fail "hookscripts: template [$(hook_of "$P2" 9000)] tdemo-1 [$(hook_of "$vm1" 10101)]"
start_exit(){ # start_exit TENANT NODE VMID: the start task's exit status
  task_exit "$1" "$2" "$(tapi "$1" POST "/nodes/$2/qemu/$3/status/start" | upid)"; }
tapi tdemo POST "/nodes/$P2/qemu" -d vmid=10151 -d pool=tenant-tdemo -d cores=8 -d sockets=4 -d memory=1024 >/dev/null
if play guard-sweep tenant -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false -v \
   && grep -qF "tenant tdemo: VM 10151: hookscript local:snippets/deevnet-envelope-guard, was none" "$W/guard-sweep.log"; then
  pass "the tenant converge's sweep guards tdemo's VM made without the template (10151) and says so"
else fail "sweep of 10151: $(grep -E 'fatal|FAILED|hookscript' "$W/guard-sweep.log" | head -5)"; fi
e=$(start_exit tdemo "$P2" 10151)
case "$e" in "hookscript error for 10151 on pre-start: command '/var/lib/vz/snippets/deevnet-envelope-guard 10151 pre-start' failed: exit code 1 ")
  pass "tdemo's start of 10151 (32 vCPUs) is refused by the guard ($e)" ;; *) fail "start of 10151: [$e]" ;; esac
tapi tdemo POST "/nodes/$P2/qemu" -d vmid=10152 -d pool=tenant-tdemo -d cores=8 -d sockets=4 -d memory=1024 >/dev/null
play guard-off tenant -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false -e substrate_envelope_guard=false \
  || fail "the converge without the guard"
e=$(start_exit tdemo "$P2" 10152)
[ "$e" = OK ] && [ "$(hook_of "$P2" 10152)" = none ] && pass "control: without the guard's sweep, tdemo's 32-vCPU VM 10152 starts unguarded (start $e)" \
  || fail "control: 10152 start [$e] hookscript [$(hook_of "$P2" 10152)]"
# The next converge with the guard puts 10152, running unguarded, into tdemo's cgroup group on its node (here a
# directory laid out like cgroupfs, and its QEMU pid where qemu-server keeps it), and 10153, made and started the same
# way on p03, into tdemo's group there: each group at tdemo's share on its node, max(the envelope less what tdemo's
# VMs running on the other node are configured with, what runs on it), not the whole envelope on each node. The
# expected shares are computed here from what pvesim says runs where (the rule, independently of the guard). Both
# keep running. The converge after it changes nothing (its recap: changed=0).
P3=dv02hyp002p03
tapi tdemo POST "/nodes/$P3/qemu" -d vmid=10153 -d pool=tenant-tdemo -d cores=2 -d sockets=2 -d memory=8192 >/dev/null
e=$(start_exit tdemo "$P3" 10153); [ "$e" = OK ] || fail "start of 10153 on $P3 (no hookscript yet): [$e]"
for n in $P2 $P3; do
  mkdir -p "$W/node-$n/cgroup" "$W/node-$n/run"
  echo "cpuset cpu io memory pids" > "$W/node-$n/cgroup/cgroup.controllers"
done
echo 4152 > "$W/node-$P2/run/10152.pid"; echo 4153 > "$W/node-$P3/run/10153.pid"
share_of(){ # share_of NODE: tdemo's share there as "memory.max / cpu.max", from pvesim's running VMs and configs
  # memory.max adds QEMU's own memory for each VM running there (internal/guard QEMUOverheadMiB:
  # 128 MiB + its memory / 128 rounded up, + 1024 MiB with kvm: 0); keep in step
  local node=$1 r c mem cores kvm hm=0 hc=0 hq=0 am=0 ac=0
  while read -r r; do
    c=$(sapi "/nodes/${r#* }/qemu/${r% *}/config?current=1")
    read -r mem cores kvm < <("$VENV/bin/python" -c 'import json,re,sys; c=json.load(sys.stdin)["data"]; print(re.match(r"(?:current=)?(\d+)", str(c.get("memory", 512))).group(1), int(c.get("sockets", 1)) * int(c.get("cores", 1)), c.get("kvm", 1))' <<<"$c")
    if [ "${r#* }" = "$node" ]; then
      hm=$((hm + mem)) hc=$((hc + cores)) hq=$((hq + 128 + (mem + 127) / 128))
      [ "$kvm" != 0 ] || hq=$((hq + 1024))
    else am=$((am + mem)) ac=$((ac + cores)); fi
  done < <(sapi "/cluster/resources?type=vm" | "$VENV/bin/python" -c 'import json,sys; [print(r["vmid"], r["node"]) for r in json.load(sys.stdin)["data"] if r.get("pool") == "tenant-tdemo" and r.get("status") == "running"]')
  local m=$((32768 - am)) k=$((16 - ac)); [ $m -ge $hm ] || m=$hm; [ $k -ge $hc ] || k=$hc; [ $m -ge 1 ] || m=1; [ $k -ge 1 ] || k=1
  echo "$(( (m + hq) << 20 )) / $((k * 100000)) 100000"
}
limits_of(){ local d=$W/node-$1/cgroup/deevnet.slice/tenant-tdemo.slice; echo "$(cat "$d/memory.max" 2>&1) / $(cat "$d/cpu.max" 2>&1)"; }
want2=$(share_of "$P2") want3=$(share_of "$P3")
slice=$W/node-$P2/cgroup/deevnet.slice/tenant-tdemo.slice
slice3=$W/node-$P3/cgroup/deevnet.slice/tenant-tdemo.slice
if play guard-contain tenant -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false \
   && grep -qF "tenant tdemo: VM 10152 (pid 4152) ran outside its tenant's group: placed in $slice, its envelope caps it (not stopped)" "$W/guard-contain.log" \
   && grep -qF "tenant tdemo: VM 10153 (pid 4153) ran outside its tenant's group: placed in $slice3, its envelope caps it (not stopped)" "$W/guard-contain.log" \
   && [ "$(cat "$slice/cgroup.procs")" = 4152 ] && [ "$(cat "$slice3/cgroup.procs")" = 4153 ] \
   && [ "$(limits_of "$P2")" = "$want2" ] && [ "$(limits_of "$P3")" = "$want3" ] && [ "$want2" != "34359738368 / 1600000 100000" ] \
   && [ "$(sapi "/nodes/$P2/qemu/10152/status/current" | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["data"]["status"])')" = running ] \
   && [ "$(sapi "/nodes/$P3/qemu/10153/status/current" | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["data"]["status"])')" = running ]; then
  pass "the next converge puts 10152 (on $P2) and 10153 (on $P3), running unguarded, into tdemo's group on each node at its share ($P2: $want2; $P3: $want3; not 32768 MiB / 16 vCPUs each), and stops nothing"
else fail "contain of 10152 and 10153: $(grep -E 'fatal|outside|pid file|share' "$W/guard-contain.log" | head -5) $P2 [$(limits_of "$P2")] want [$want2], $P3 [$(limits_of "$P3")] want [$want3]"; fi
if play guard-contain-again tenant -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false \
   && [ "$(recap_changed guard-contain-again)" = 0 ] && [ "$(limits_of "$P2")" = "$want2" ]; then
  pass "the converge after it changes nothing (the shares stand: changed=0)"
else fail "the converge after the contain: changed=$(recap_changed guard-contain-again)"; grep -B2 -A4 'changed:' "$W/guard-contain-again.log" | head -20; fi
# 10153 and 10152 stop: p02's share grows back at the next converge (the envelope less what runs on p03 now),
# reported first by check mode, which writes nothing
task_exit tdemo "$P3" "$(tapi tdemo POST "/nodes/$P3/qemu/10153/status/stop" | upid)" >/dev/null
task_exit tdemo "$P2" "$(tapi tdemo POST "/nodes/$P2/qemu/10152/status/stop" | upid)" >/dev/null
rm -f "$W/node-$P3/run/10153.pid" "$W/node-$P2/run/10152.pid"
was2=$want2 want2=$(share_of "$P2")
if play guard-share-check tenant -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false --check \
   && grep -qF "tenant tdemo: $slice on $P2: memory.max ${was2%% *} -> ${want2%% *}" "$W/guard-share-check.log" && [ "$(limits_of "$P2")" = "$was2" ] \
   && play guard-share tenant -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false \
   && [ "$(limits_of "$P2")" = "$want2" ]; then
  pass "10153 stopped on $P3: check mode reports $P2's share growing ($was2 -> $want2) and writes nothing; the converge sets it"
else fail "$P2's share after 10153 stopped: [$(limits_of "$P2")], want [$was2] after check mode, then [$want2]"; grep -E 'fatal|share|memory.max' "$W/guard-share-check.log" "$W/guard-share.log" | head -6; fi
for v in 10151 10152; do [ "$(task_exit tdemo "$P2" "$(tapi tdemo DELETE "/nodes/$P2/qemu/$v" | upid)")" = OK ] || fail "remove $v"; done
[ "$(task_exit tdemo "$P3" "$(tapi tdemo DELETE "/nodes/$P3/qemu/10153" | upid)")" = OK ] || fail "remove 10153"

# --- 5e. the guard's timer on each node (ADR-0014 decision 3): between the hypervisor plays, a systemd service
# runs the play's own sweep and this node's contain every substrate_guard_interval (default 1min). The units the
# plays wrote (here under the node's directory: the test's nodes run no systemd of theirs, substrate_guard_systemd
# false) are read strictly by units.py against the argv the guard-sweep play ran (its -v log) and, where this
# machine has systemd-analyze, verified by it (silent, exit 0). Controls: a contain line that lost an argument is
# refused by units.py, a line systemd cannot unquote by systemd-analyze. check mode writing nothing and the second
# run changing nothing (section 3) cover the units too; a bad interval is refused before any change.
guard_env="{\"PATH\": \"$W/lab/bin:/usr/sbin:/usr/bin:/sbin:/bin\"}"
units_check(){ "$VENV/bin/python" "$ROOT/tests/substrate/units.py" "$1" "$W/guard-sweep.log" "$2" 1min "$guard_env" 2>&1; }
verify_units(){ systemd-analyze verify --man=no "$1/deevnet-envelope-guard.service" "$1/deevnet-envelope-guard-watch.service" "$1/deevnet-envelope-guard.timer" 2>&1; }
for n in $NODES; do
  u=$W/node-$n/systemd
  if out=$(units_check "$u" "$n"); then pass "$n: the guard's service runs the play's own sweep and contain, its timer every 1min ($out)"
  else fail "$n: the guard's units: $out"; fi
  if command -v systemd-analyze >/dev/null; then
    out=$(verify_units "$u"); c=$?
    [ $c = 0 ] && [ -z "$out" ] && pass "$n: systemd-analyze verify accepts the guard's service and timer, silently" \
      || fail "$n: systemd-analyze verify (exit $c): $out"
  else echo "SKIP  $n: no systemd-analyze on this machine: the units are read by units.py alone"; fi
done
mkdir -p "$W/units-bad"
cp "$W/node-$P2/systemd/"* "$W/units-bad/"
sed -i '/^ExecStart=-"/s/ "-run-dir" "[^"]*"\( "contain"\)$/\1/' "$W/units-bad/deevnet-envelope-guard.service"
out=$(units_check "$W/units-bad" "$P2") && fail "control: units.py accepted a contain without -run-dir" \
  || { grep -qF "ExecStart= contain" <<<"$out" && pass "control: units.py refuses a contain line that lost -run-dir" || fail "control: units.py: $out"; }
if command -v systemd-analyze >/dev/null; then
  cp "$W/node-$P2/systemd/"* "$W/units-bad/"
  sed -i '/^ExecStart=-"/s/ "contain"$/ "contain/' "$W/units-bad/deevnet-envelope-guard.service"
  out=$(verify_units "$W/units-bad"); c=$?
  { [ $c != 0 ] || [ -n "$out" ]; } && grep -qi "quot" <<<"$out" && pass "control: systemd-analyze verify refuses an unbalanced quote (exit $c)" \
    || fail "control: systemd-analyze verify on a broken unit: exit $c [$out]"
fi
# --- 5f. the wire on each node (docs/adr/0016-tenant-wire.md): the table the hypervisor play wrote (here not
# loaded: the nodes are directories; make test-wire loads it in a kernel) admits exactly the tenant VMs pvesim says
# run on that node, each NIC with its MAC and its ipconfig address as pvesim holds them, and each tenant at its
# envelope's rate. Control: the comparison fails on a table that lost a port.
wire_check(){ # wire_check NODE FILE: the admitted lines of FILE against pvesim's running tenant VMs on NODE
  "$VENV/bin/python" - "$1" "$2" "$SIM_URL" "$CA" "$(labv substrate_pve.api_token_secret)" <<'PY'
import json, re, ssl, sys, urllib.request
node, path, url, ca, secret = sys.argv[1:6]
ctx = ssl.create_default_context(cafile=ca)
def get(p):
    r = urllib.request.Request(url + "/api2/json" + p, headers={"Authorization": "PVEAPIToken=root@pam!sim=" + secret})
    return json.load(urllib.request.urlopen(r, context=ctx))["data"]
want = set()
for r in get("/cluster/resources?type=vm"):
    if r.get("node") != node or r.get("status") != "running" or not str(r.get("pool", "")).startswith("tenant-") or r.get("template"):
        continue
    c = get("/nodes/%s/qemu/%d/config?current=1" % (node, r["vmid"]))
    for k in sorted(k for k in c if re.fullmatch(r"net\d+", k)):
        n = k[3:]
        nic = dict(kv.split("=", 1) for kv in c[k].split(",") if "=" in kv)
        mac = next(v for m, v in nic.items() if m in ("virtio", "e1000", "rtl8139", "vmxnet3")).lower()
        ip = dict(kv.split("=", 1) for kv in c["ipconfig" + n].split(","))["ip"].split("/")[0]
        want.add("tenant %s: VM %d %s on %s (tap%di%s, fwpr%dp%s) sends as %s %s only"
                 % (r["pool"][len("tenant-"):], r["vmid"], k, nic["bridge"], r["vmid"], n, r["vmid"], n, mac, ip))
got = {l[len("# admitted: "):].rstrip("\n") for l in open(path) if l.startswith("# admitted: ") and " sends as " in l}
if got != want:
    print("missing %s; unexpected %s" % (sorted(want - got), sorted(got - want)))
    sys.exit(1)
print("%d port(s) admitted as pvesim holds them" % len(got))
PY
}
for n in $NODES; do
  if out=$(wire_check "$n" "$W/node-$n/wire.nft" 2>&1); then pass "$n: the wire admits its tenant VMs' NICs: $out"
  else fail "$n: the wire on $n: $out"; fi
done
grep -v "^# admitted: .* sends as " "$W/node-$P2/wire.nft" > "$W/wire-bad.nft" || true
if out=$(wire_check "$P2" "$W/wire-bad.nft" 2>&1); then
  grep -q "sends as" "$W/node-$P2/wire.nft" && fail "control: the wire check accepted a table without its ports" || pass "control: no port on $P2 to remove"
else pass "control: the wire check refuses a table that lost its ports ($out)"; fi

contradiction guard-interval 'substrate_guard_interval "5 parsecs": must be a systemd time span above zero' tenant "---" \
  -e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false -e 'substrate_guard_interval="5 parsecs"'

# --- 5b. a node offline (#25): refused before any change, naming it; in maintenance, converged around it -------
# p03 leaves the membership (pvesim as PVE shows it: offline in /nodes, 595 behind it). The operator's change
# (a second VM) is refused before any change while substrate_maintenance is empty; once the copied repository
# lists p03 there, the run converges (the new VM on p02, SDN applied to p02) and warns about p03; after p03
# is back, the first run reaches it (its zones were pending: PVE regenerates nothing at boot when nothing is pending).
P3=dv02hyp002p03
simnode(){ curl -sf --cacert "$CA" -X POST -H 'Content-Type: application/json' -d '{}' "$SIM_URL/_sim/nodes/$P3/$1" >/dev/null; }
api(){ curl -sf --cacert "$CA" -H "Authorization: PVEAPIToken=root@pam!sim=$(labv substrate_pve.api_token_secret)" "$SIM_URL/api2/json$1"; }
tenant_args=(-e tenant_file=tenants/tdemo.yml -e substrate_routes=false -e tenant_run_verify=false)
simnode offline
sed -i 's/^    count: 1$/    count: 2/' "$REPO/tenants/tdemo.yml"
contradiction offline-p03 "node $P3 is offline (GET /nodes): an SDN apply cannot reach it" tenant "---" "${tenant_args[@]}"
sed -i "s/^substrate_maintenance: \[\]$/substrate_maintenance: [$P3]/" "$REPO/inventory/group_vars/all/maintenance.yml"
contradiction maintenance-typo "substrate_maintenance: dv02hyp002p09 is not in group hypervisors" tenant "---" "${tenant_args[@]}" \
  -e '{"substrate_maintenance": ["dv02hyp002p09"]}'
if play maint tenant "${tenant_args[@]}" && grep -q "node(s) $P3 offline in maintenance: the SDN configuration applied now has not reached them" "$W/maint.log" \
   && grep -q "$P3 is in maintenance (substrate_maintenance)" "$W/maint.log"; then
  pass "$P3 in maintenance: the tenant converges around it and warns what is left for it"
else fail "maintenance run"; grep -E 'fatal|FAILED|WARNING' -A3 "$W/maint.log" | head -12; fi
vm2=$(api "/cluster/resources?type=vm" | "$VENV/bin/python" -c 'import json,sys; print(" ".join(r["node"] for r in json.load(sys.stdin)["data"] if r.get("name") == "tdemo-2"))')
[ "$vm2" = dv02hyp002p02 ] && pass "the new VM tdemo-2 is placed on dv02hyp002p02 (p03 in maintenance)" || fail "tdemo-2 on [$vm2]"
simnode online
if play back tenant "${tenant_args[@]}" && api "/nodes/$P3/sdn/zones" | grep -q '"zone":"tn01"' \
   && ! api "/nodes/$P3/sdn/zones" | grep -q '"status":"pending"'; then
  pass "$P3 back: the first run applies SDN again and reaches it"
else fail "after $P3's return: $(api "/nodes/$P3/sdn/zones")"; grep -E 'fatal|FAILED' -A3 "$W/back.log" | head -8; fi
sed -i "s/^substrate_maintenance: \[$P3\]$/substrate_maintenance: []/" "$REPO/inventory/group_vars/all/maintenance.yml"

# --- 6. the node network role: main file must source interfaces.d; ifupdown2 refuses a broken file -----
n=dv02hyp002p02
cp "$W/node-$n/interfaces" "$W/interfaces.good"
printf 'auto lo\niface lo inet loopback\n' >"$W/node-$n/interfaces"
contradiction no-source-line "does not source $W/node-$n/interfaces.d/*" fabric "---"
cp "$W/interfaces.good" "$W/node-$n/interfaces"
contradiction broken-file "unsupported keyword (bogus-keyword)" fabric "$(cat <<'YML'
all:
  children:
    hypervisors:
      hosts:
        dv02hyp002p02: {proxmox_node_network_vids: "2-4094\n    bogus-keyword 1"}
YML
)"

# --- 7. destroy with p03 offline (#25): refused before any change (no record, VM or API object removed),
# naming it; in maintenance, done around it; the first destroy after p03 returns finishes its play there;
# the tenant's routes are removed on every node (its hook too) --------------------------------------------
simnode offline
contradiction destroy-offline "node $P3 is offline (GET /nodes): an SDN apply cannot reach it" destroy "---" -e tenant_file=tenants/tdemo.yml
sed -i "s/^substrate_maintenance: \[\]$/substrate_maintenance: [$P3]/" "$REPO/inventory/group_vars/all/maintenance.yml"
if play destroy-maint destroy -e tenant_file=tenants/tdemo.yml \
   && grep -q "node(s) $P3 offline in maintenance: the SDN configuration applied now has not reached them" "$W/destroy-maint.log" \
   && grep -q "$P3 is in maintenance (substrate_maintenance)" "$W/destroy-maint.log"; then
  pass "destroy with $P3 in maintenance: done around it, and the run says what is left for it"
else fail "destroy in maintenance"; grep -E 'fatal|FAILED|WARNING' -A3 "$W/destroy-maint.log" | head -12; fi
simnode online
sed -i "s/^substrate_maintenance: \[$P3\]$/substrate_maintenance: []/" "$REPO/inventory/group_vars/all/maintenance.yml"
# p03 boots from the running config, which no longer has tn01 (pvesim models PVE's boot commit); the first
# destroy after its return removes what its play left for p03 (routes, hook) and changes nothing else.
if play destroy destroy -e tenant_file=tenants/tdemo.yml && ! api "/nodes/$P3/sdn/zones" | grep -q '"zone":"tn01"' \
   && [ "$(grep -c '^fatal' "$W/destroy.log")" = 0 ]; then
  pass "destroy again after $P3's return: tn01 gone from $P3 too, routes and hooks removed on every node"
else fail "destroy after $P3's return: $(api "/nodes/$P3/sdn/zones")"; grep -E 'fatal|FAILED' -A3 "$W/destroy.log" | head; fi

# --- 8. the whole site from empty (#25, drill (c) without the QEMU lab) ------------------------------------
# tdemo (onboarded again: destroy kept its index) and tother (declared here beside it) are converged; tnew is
# onboarded only. Then pvesim and the DNS lab are wiped (stopped and started empty: no SDN, pool, user, token,
# VM or zone; new endpoints and root token), and the one command, playbooks/site.yml, rebuilds fabric, tenants
# and attachments from the repository, the registry and the attachment files; verify is green for each tenant.
sed -e 's/tdemo/tother/g' -e 's/^  index: 1$/  index: 3/' "$REPO/tenants/tdemo.yml" >"$REPO/tenants/tother.yml"
tenant_args=(-e substrate_routes=false -e tenant_run_verify=false)
sed -i 's/^    count: 2$/    count: 1/' "$REPO/tenants/tdemo.yml"
if play s-onboard onboard -e tenant_name=tdemo && play s-tdemo tenant -e tenant_file=tenants/tdemo.yml "${tenant_args[@]}" \
   && play s-tother tenant -e tenant_file=tenants/tother.yml "${tenant_args[@]}"; then pass "site before the wipe: tdemo and tother converged"
else fail "site before the wipe"; for f in s-onboard s-tdemo s-tother; do grep -E 'fatal|FAILED' -A3 "$W/$f.log" | head -6; done; fi
"$ROOT/extensions/molecule/shared/lab.sh" down "$W/lab" >/dev/null 2>&1
"$ROOT/extensions/molecule/shared/lab.sh" up "$W/lab" >"$W/lab2.out" 2>&1 || { cat "$W/lab2.out"; exit 1; }
SIM_URL=$(labv pvesim_url); CA=$(labv substrate_pve.ca_path); write_lab_yml
[ "$(api "/pools" | "$VENV/bin/python" -c 'import json,sys; print(len(json.load(sys.stdin)["data"]))')" = 0 ] \
  && pass "wiped: pvesim has no pool, DNS lab restarted empty" || fail "pvesim not empty after the wipe: $(api /pools)"
t0=$(date +%s%N)
if play site site "${tenant_args[@]:0:2}"; then
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  pass "site.yml rebuilt the site from empty in ${ms} ms wall ($(grep -o 'site restored in [0-9.]* s[^"]*' "$W/site.log" | head -1))"
else fail "site.yml"; grep -E 'fatal|FAILED' -A4 "$W/site.log" | head -12; fi
for tn in tdemo tother; do
  if play "s-verify-$tn" verify -e "tenant_file=tenants/$tn.yml"; then pass "after the rebuild: verify $tn green (A/PTR through Unbound, PVE config and state)"
  else fail "verify $tn after the rebuild"; grep -E 'fatal|FAILED|ok=false|"ok": false' -A3 "$W/s-verify-$tn.log" | head -8; fi
done
grep -q "^  index: 2$" "$REPO/attachments/tnew.yml" && api "/pools" | grep -q '"poolid":"tenant-tnew"' \
  && pass "tnew (onboarded, no declaration) onboarded again: pool and attachment" || fail "tnew after the rebuild: $(api /pools)"
play s-again site "${tenant_args[@]:0:2}" && [ "$(recap_changed s-again)" = 0 ] \
  && pass "site.yml again: changed=0" || { fail "site.yml again: changed=$(recap_changed s-again)"; grep -B2 '^changed' "$W/s-again.log" | head; }

[ $rc = 0 ] && echo "substrate test: all passed" || { echo "substrate test: FAILED (logs in $W with --keep)"; }
exit $rc
