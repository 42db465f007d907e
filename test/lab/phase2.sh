#!/usr/bin/env bash
# test/lab/phase2.sh: Phase 2 in the lab (issue #13): the second node joins the fabric after tdemo
# exists, and tdemo's VM there joins without any change to tdemo's existing objects.
#   1. lab.sh boot: both nodes installed, only the inventory's first hypervisor is a member: the
#      operator runs the shipped playbooks with `-e substrate_hypervisors=phase1`, a group of an
#      extra inventory source naming only that node (the inventory itself stays as it is);
#   2. the perimeter playbook; onboard tdemo and converge it with its first VM only (tdemo.yml with
#      vms.count 1; its VNets as declared): on the first node; checks on the member only (trunk,
#      tdemo's VRF, VNet and VNIs, the VM's gateway, its egress through the perimeter), and the
#      second node has no tdemo VRF;
#   3. snapshot of pvesim's objects (zones, VNets, subnets, controllers, fabrics, pools, ACLs,
#      users and tokens, every VM's node and config), read from its API;
#   4. Phase 2: the fabric playbook with the full inventory (the second node's network, transit
#      route, fabric member, apply), then tdemo converged as declared (test/lab/tenants/tdemo.yml:
#      3 VMs on 2 VNets, placement spread: tdemo-2 on the second node, tdemo-3 on the first, VNet 1),
#      pvesim's request counters reset before it; during the fabric run, tdemo-1's egress flow (a
#      ping every 50 ms to the outside host): the fabric change's lost packets and longest gap
#      (test/lab/flows.py's table, LAB_DIR/fabric-change.md), reported, not judged;
#   5. checks: every object of tdemo in the snapshot is unchanged after the fabric run and after the
#      tenant run (the zone's `nodes` aside, which must have grown by exactly the new node: see
#      check_objects), tdemo-1 did not move, tdemo-2 is on the new node, then on both nodes: trunk,
#      underlay, OpenFabric, BGP EVPN, BFD, the new node's VRF, VNets and both VNIs in FRR, EVPN
#      type-2/3 both ways, tdemo-1 <-> tdemo-2 over the VNet's VXLAN (L2VNI), tdemo-2 <-> tdemo-3
#      through the VRF (L3VNI), every VM's egress (the new node's through its VRF default route).
# Prints one ok/FAIL line per check and the time of every step; exit 1 on any FAIL.
# env: LAB_DIR (default /tmp/dvt-lab-phase2.<pid>), LAB_KEEP=1 keeps the lab up, LAB_LOGS (the run's
# logs are copied there; default LAB_DIR.logs when the run failed), and lab.sh's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/test/lab
LAB=$HERE/lab.sh
VENV=${VENV:-$ROOT/.venv}
TDEMO=$HERE/tenants/tdemo.yml
export LAB_DIR=${LAB_DIR:-/tmp/dvt-lab-phase2.$$}
export LAB_TENANTS=''
ms(){ echo $(( ($(date +%s%N) - $1) / 1000000 )); }
log(){ echo "phase2: $*" >&2; }
# play NAME PLAYBOOK [ARGS...]: lab.sh playbook, its log kept as LAB_DIR/ansible-NAME.log
play() { local n=$1; shift; local r=0; "$LAB" playbook "$@" || r=$?; cp "$LAB_DIR/ansible.log" "$LAB_DIR/ansible-$n.log"; return $r; }
rc=0
ok(){ echo "ok   $*"; }
fail(){ echo "FAIL $*"; rc=1; }

# snapshot FILE: pvesim's objects, as read from its API, keyed by kind and id
snapshot() {
  PYTHONPATH=$HERE "$VENV/bin/python" - "$LAB_DIR" "$1" <<'PY'
import json, sys, urllib.parse
from pvesimapi import Pvesim
lab, out = sys.argv[1], sys.argv[2]
get = Pvesim(lab).get
q = urllib.parse.quote
snap = {}
for z in get("/cluster/sdn/zones"):
    snap["zone/" + z["zone"]] = get("/cluster/sdn/zones/" + q(z["zone"]))
for v in get("/cluster/sdn/vnets"):
    snap["vnet/" + v["vnet"]] = get("/cluster/sdn/vnets/" + q(v["vnet"]))
    for s in get("/cluster/sdn/vnets/%s/subnets" % q(v["vnet"])):
        snap["subnet/%s/%s" % (v["vnet"], s["subnet"])] = s
for c in get("/cluster/sdn/controllers"):
    snap["controller/" + c["controller"]] = c
fab = get("/cluster/sdn/fabrics/all")
for f in fab.get("fabrics", []):
    snap["fabric/" + f["id"]] = f
for n in fab.get("nodes", []):
    snap["fabric-node/%s/%s" % (n["fabric_id"], n["node_id"])] = n
for p in get("/pools"):
    snap["pool/" + p["poolid"]] = get("/pools/" + q(p["poolid"]))
for a in get("/access/acl"):
    snap["acl/%s/%s/%s" % (a["path"], a["ugid"], a["roleid"])] = a
for u in get("/access/users?full=1"):
    snap["user/" + u["userid"]] = u
for r in get("/cluster/resources?type=vm"):
    snap["vm/%d" % r["vmid"]] = {"node": r["node"], "config": get("/nodes/%s/qemu/%d/config" % (r["node"], r["vmid"]))}
json.dump(snap, open(out, "w"), indent=1, sort_keys=True)
PY
}

# check_objects BEFORE AFTER TENANT NEWNODE WHAT: every object of TENANT in BEFORE (an object whose
# JSON names the tenant, its zone or one of its VNets) is in AFTER and unchanged, field by field
# (`digest` aside: PVE's digest is of the config file holding the object, which changes with any
# object in it). What may grow, and must grow exactly so:
#   - the EVPN zone's `nodes`: the plan sets it to the site's nodes (the hypervisors group) so that a
#     cluster node outside the fabric never gets the zone; PVE generates a zone with `nodes` on those
#     nodes only, so a new member needs it ("A new PVE node needs a nodes change and an apply").
#     In AFTER it is BEFORE's list plus exactly NEWNODE (unchanged when NEWNODE is empty);
#   - the tenant pool's `members`: BEFORE's members unchanged, plus exactly the VMs added.
check_objects() {
  "$VENV/bin/python" - "$@" <<'PY'
import json, sys
before, after, tenant, new, what = sys.argv[1:6]
a, b = json.load(open(before)), json.load(open(after))
zones = {v["config"]["net0"].split("bridge=")[1].split(",")[0] for v in a.values()
         if isinstance(v, dict) and "config" in v and str(v["config"].get("name", "")).startswith(tenant + "-")}
zones = {a["vnet/" + br]["zone"] for br in zones if "vnet/" + br in a}
names = [tenant] + sorted(zones) + sorted(k.split("/", 1)[1] for k, v in a.items() if k.startswith("vnet/") and v.get("zone") in zones)
mine = sorted(k for k, v in a.items() if any(n in k or n in json.dumps(v) for n in names))
bad = 0
for k in mine:
    if k not in b:
        print("FAIL %s: %s gone" % (what, k)); bad = 1; continue
    x, y = dict(a[k]), dict(b[k])
    if "config" in x:  # a VM: its node and each config key, compared one by one
        x = dict(x.pop("config", {}), node=x.get("node")); y = dict(y.pop("config", {}), node=y.get("node"))
    x.pop("digest", None); y.pop("digest", None)
    if k.startswith("pool/"):
        mx, my = x.pop("members", []), y.pop("members", [])
        grown = [m for m in my if m not in mx]
        added_vms = sorted("vm/%d" % m.get("vmid", -1) for m in grown)
        if any(m not in my for m in mx) or added_vms != sorted(v for v in set(b) - set(a) if v.startswith("vm/")):
            print("FAIL %s: %s members %s -> %s" % (what, k, mx, my)); bad = 1
    if k.startswith("zone/") and k[5:] in zones:
        nx = [n for n in str(x.pop("nodes", "")).split(",") if n]
        ny = [n for n in str(y.pop("nodes", "")).split(",") if n]
        want = sorted(nx + ([new] if new and new not in nx else []))
        if sorted(ny) != want:
            print("FAIL %s: %s nodes %s, want %s" % (what, k, ",".join(ny), ",".join(want))); bad = 1
    if x != y:
        ch = sorted(f for f in set(x) | set(y) if x.get(f) != y.get(f))
        print("FAIL %s: %s changed: %s" % (what, k, "; ".join("%s %r -> %r" % (f, x.get(f), y.get(f)) for f in ch))); bad = 1
if not mine:
    print("FAIL %s: no object of %s in the snapshot" % (what, tenant)); bad = 1
if not bad:
    kinds = {}
    for k in mine:
        kinds[k.split("/")[0]] = kinds.get(k.split("/")[0], 0) + 1
    print("ok   %s: the %d objects of %s unchanged (%s)" % (what, len(mine), tenant, ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
added = sorted(set(b) - set(a))
print("     %s: objects added: %s" % (what, ", ".join(added) or "none"))
sys.exit(bad)
PY
}

# gnow, flows_run, flows_stop
# shellcheck source=test/lab/flows.sh
. "$HERE/flows.sh"

stats() {
  PYTHONPATH=$HERE "$VENV/bin/python" - "$LAB_DIR" "$1" <<'PY'
import sys
from pvesimapi import Pvesim
lab, verb = sys.argv[1], sys.argv[2]
d = Pvesim(lab).call("/_sim/stats" + ("/reset" if verb == "reset" else ""), method="POST" if verb == "reset" else "GET", auth=False).get("data") or {}
if verb != "reset":
    w = {k: v for k, v in sorted(d["requests"].items()) if k.split()[0] in ("POST", "PUT", "DELETE")}
    print("     pvesim writes of the phase-2 tenant run: %d (%s)" % (d["writes"], ", ".join("%s x%d" % kv for kv in w.items())))
PY
}

# vm_node NAME: the node pvesim placed the VM on (LAB_DIR/vms, read back by lab.sh vms)
vm_node() { awk -v n="$1" '$2 == n {print $3}' "$LAB_DIR/vms"; }

# the checks on a kept lab (LAB_KEEP=1), to see them fail with a cause removed:
#   phase2.sh snapshot FILE                       pvesim's objects now
#   phase2.sh compare BEFORE AFTER TENANT NEWNODE  check_objects
case ${1:-} in
  snapshot) snapshot "$2"; exit;;
  compare) shift; check_objects "$@" "compare"; exit;;
esac

# on exit: the run's logs (each playbook's, each node's reloads, pvesim's, the snapshots, the VMs and
# the rendered files) copied to LAB_LOGS (default LAB_DIR.logs, kept only when the run failed), then
# the lab down unless LAB_KEEP=1
finish() {
  local r=$? keep=${LAB_LOGS:-}
  [ $r = 0 ] && [ $rc = 0 ] || keep=${keep:-$LAB_DIR.logs}
  if [ -n "$keep" ] && [ -d "$LAB_DIR" ]; then
    mkdir -p "$keep"
    (cd "$LAB_DIR" && cp -r -- $(ls -d ./*.log ./*.json ./vms ./nodes* ./*.yml ./render 2>/dev/null | grep -v -e pvesim-token -e inventory.yml) "$keep/") 2>/dev/null || true
    log "logs kept in $keep"
  fi
  # a guest kernel that stopped answering (once: a soft lockup in sshd, every check after it timed out)
  if [ -n "$keep" ] && grep -aqE 'BUG:|Oops|soft lockup' "$LAB_DIR/console.log" 2>/dev/null; then
    log "the guest kernel reported:"; grep -aE 'BUG:|Oops|soft lockup' "$LAB_DIR/console.log" | head -5 >&2
  fi
  [ "${LAB_KEEP:-}" = 1 ] || "$LAB" down >/dev/null 2>&1 || true
}
trap finish EXIT
T0=$(date +%s%N)
t=$(date +%s%N); "$LAB" boot >/dev/null; log "boot (guest, both nodes as installed, pvesim, DNS lab) in $(ms $t) ms"
read -r -a NODES < "$LAB_DIR/nodes"
FIRST=${NODES[0]%%,*}; NEW=${NODES[1]%%,*}
cp "$LAB_DIR/nodes" "$LAB_DIR/nodes.all"
# phase 1: the fabric's only member is the first hypervisor, said the way an operator would: a group
# of an extra inventory source, named by substrate_hypervisors
printf 'all:\n  children:\n    phase1:\n      hosts:\n        %s: {}\n' "$FIRST" > "$LAB_DIR/phase1.yml"
P1=(-i "$LAB_DIR/phase1.yml" -e substrate_hypervisors=phase1)
# phase 1's tdemo: the declaration with its first VM only (and that VM's VNet choice); its VNets as declared
"$VENV/bin/python" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); v = d["tenant"]["vms"]; v["count"] = 1
if "vnet" in v: v["vnet"] = v["vnet"][:1]
yaml.safe_dump(d, open(sys.argv[2], "w"))' "$TDEMO" "$LAB_DIR/tdemo-phase1.yml"
read -r NAME INDEX COUNT < <("$VENV/bin/python" -c 'import sys, yaml; t = yaml.safe_load(open(sys.argv[1]))["tenant"]; print(t["name"], t["index"], t["vms"]["count"])' "$TDEMO")
VRF=vrf_$(printf 'tn%02d' "$INDEX")
t=$(date +%s%N); play 1-fabric deevnet.tenant.fabric "${P1[@]}"; log "phase 1 fabric ($FIRST only) in $(ms $t) ms"
# the perimeter (NAT, policy, its route back to the overlay through the first node): the egress checks
# of both phases go through it
t=$(date +%s%N); play 1-perimeter deevnet.tenant.perimeter; log "perimeter in $(ms $t) ms"
t=$(date +%s%N)
play 1-onboard deevnet.tenant.onboard "${P1[@]}" -e "tenant_name=$NAME" -e "tenant_index=$INDEX"
play 1-tenant deevnet.tenant.tenant "${P1[@]}" -e "tenant_file=$LAB_DIR/tdemo-phase1.yml"
"$LAB" vms
log "phase 1 $NAME (onboard, tenant with 1 VM, VM namespace) in $(ms $t) ms"
# phase 1's checks on the member only: its trunk, the tenant's VRF, VNet and VNIs, the VM's gateway
# and its egress through the perimeter
echo "${NODES[0]} " > "$LAB_DIR/nodes"
t=$(date +%s%N); "$LAB" only box fabric frrconf tenants egress || rc=1; log "phase 1 checks ($FIRST) in $(ms $t) ms"
cp "$LAB_DIR/nodes.all" "$LAB_DIR/nodes"
[ "$(vm_node "$NAME-1")" = "$FIRST" ] && ok "phase 1: $NAME-1 on $FIRST" || fail "phase 1: $NAME-1 on '$(vm_node "$NAME-1")', not $FIRST"
if "$LAB" ssh "$NEW" "ip link show $VRF" >/dev/null 2>&1; then fail "phase 1: $NEW has $VRF before it is a member"
else ok "phase 1: $NEW (not a member yet) has no $VRF"; fi
snapshot "$LAB_DIR/snap-1.json"

# phase 2: the second node joins (the inventory as it is), then tdemo as declared. Meanwhile
# tdemo-1's egress flow runs: a fabric change's loss, measured (issue 25)
echo "egress-$FIRST $NAME-1 198.51.100.1" | flows_run 0.05
t=$(date +%s%N); g0=$(gnow); play 2-fabric deevnet.tenant.fabric; log "phase 2 fabric (+ $NEW) in $(ms $t) ms"
sleep 5; echo "fabric_change_($NEW joins) $g0 $(gnow)" > "$LAB_DIR/fabric-change.events"
flows_stop "$LAB_DIR/fabric-change.flows"
# reported, not judged: flows.py holds only tenant events and fabric no-ops to 0 lost
"$VENV/bin/python" "$HERE/flows.py" "$LAB_DIR/fabric-change.events" "$LAB_DIR/fabric-change.flows" \
  | tee "$LAB_DIR/fabric-change.md" | sed 's/^/     /' || true
snapshot "$LAB_DIR/snap-2.json"
check_objects "$LAB_DIR/snap-1.json" "$LAB_DIR/snap-2.json" "$NAME" "" "phase 2, after the fabric run" || rc=1
# the seed's Phase 2 also brings the QDevice: two members need its vote to stay quorate with one
# away (docs/adr/0015-quorum.md); the drills that follow on this lab take a member away
if [ -z "${LAB_NO_QDEVICE:-}" ]; then
  t=$(date +%s%N); play 2-qdevice deevnet.tenant.qdevice || fail "phase 2: the qdevice playbook failed"
  q=$("$LAB" corosync-line "$FIRST")
  log "phase 2 QDevice in $(ms $t) ms; $q"
  case $q in *"quorate yes, 3 votes of 3 expected (quorum 2)"*) ok "phase 2: $q";; *) fail "phase 2: $q (want 3 votes of 3, quorum 2, with the QDevice)";; esac
fi
stats reset
t=$(date +%s%N)
play 2-tenant deevnet.tenant.tenant -e "tenant_file=$TDEMO"
log "phase 2 $NAME (tenant, $COUNT VMs spread) in $(ms $t) ms"
stats show
snapshot "$LAB_DIR/snap-3.json"
check_objects "$LAB_DIR/snap-1.json" "$LAB_DIR/snap-3.json" "$NAME" "$NEW" "phase 2, after the tenant run" || rc=1
"$LAB" vms
[ "$(vm_node "$NAME-1")" = "$FIRST" ] && ok "phase 2: $NAME-1 still on $FIRST" || fail "phase 2: $NAME-1 on '$(vm_node "$NAME-1")'"
[ "$(vm_node "$NAME-2")" = "$NEW" ] && ok "phase 2: $NAME-2 placed on the new node $NEW" || fail "phase 2: $NAME-2 on '$(vm_node "$NAME-2")', not $NEW"
# both nodes: trunks, underlay, OpenFabric, BGP EVPN, BFD; the new node's VRF, VNets and VNIs, type-2/3
# both ways; the VNet's VXLAN (L2VNI) and the VRF's (L3VNI) across the nodes; every VM's egress (the
# new node's VM through its VRF default route, set by the tenant playbook's routes on that node)
t=$(date +%s%N); "$LAB" only box fabric frrconf tenants l2vni l3vni egress || rc=1; log "phase 2 checks (both nodes) in $(ms $t) ms"
log "total $(ms "$T0") ms"
[ $rc = 0 ] && log "all ok" || log "FAILED"
exit $rc
