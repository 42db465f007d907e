#!/usr/bin/env bash
# demo.sh [up|down|bench] -- the whole tenant path on this machine, on loopback only.
#
#   up (default)  build the modules, pvesim and the collection (make venv install-collection tools),
#                 start pvesim + PowerDNS + Unbound (extensions/molecule/shared/lab.sh), then with
#                 ansible-playbook: onboard tdemo (index 1), converge the fabric, converge tdemo
#                 (zone tn01, VNet tn01v0, VM tdemo-1 = 10.20.129.10, A + PTR records), then tother
#                 (index 2) beside it, verify both (playbooks/verify.yml), which writes the site
#                 report $DEMO_DIR/reports/mobile.deevnet.net.md (Mermaid topology + checks), and print
#                 what was built and how to look at it. The lab keeps running for you to explore:
#                 $DEMO_DIR/env.sh (source it) and the inventory $DEMO_DIR/inventory are what the
#                 demo's own runs used, and what docs/first-tenant.md's commands name.
#   down          stop what `up` started (by the PIDs it recorded) and keep the files.
#   bench         `up`'s converge timed, then a no-op converge timed, with pvesim's request
#                 counts for each; then `down`.
# State lives in $DEMO_DIR (default /tmp/dvt-demo). Needs the Debian packages of
# scripts/install-deps.sh (pdns-server pdns-backend-sqlite3 sqlite3 unbound bind9-dnsutils).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${DEMO_DIR:-/tmp/dvt-demo}
LAB=$ROOT/extensions/molecule/shared/lab.sh
export PVESIM=${PVESIM:-$ROOT/bin/pvesim}
export ANSIBLE_COLLECTIONS_PATH=${ANSIBLE_COLLECTIONS_PATH:-$ROOT/.ansible/collections}
export MOLECULE_SCENARIO_NAME=demo   # the shared inventory derives lab_dir from it
export ANSIBLE_FORCE_COLOR=0
PLAYBOOK=${ANSIBLE_PLAYBOOK:-$ROOT/.venv/bin/ansible-playbook}
SHARED=$ROOT/extensions/molecule/shared
# The demo's inventory, one directory (written by inventory()): the lifecycle's (examples/substrate's
# inventory with the lab's connection details, shared/inventory), the envelope guard and the thin
# pools on the lab's nodes (shared/guard), and lab_dir, where the lab's file is.
INV=$DIR/inventory
ms(){ echo $(( ($(date +%s%N) - $1) / 1000000 )); }

build(){
  if [ -z "${DEMO_SKIP_BUILD:-}" ]; then
    make -C "$ROOT" --no-print-directory venv install-collection tools >/dev/null
  fi
}
stats(){ curl -sf --cacert "$DIR/pvesim-ca.pem" "$(url)/_sim/stats"; }
reset_stats(){ curl -sf -X POST --cacert "$DIR/pvesim-ca.pem" "$(url)/_sim/stats/reset" >/dev/null; }
url(){ sed -n 's/^pvesim_url: //p' "$DIR/substrate.yml"; }
converge(){ # log file
  "$PLAYBOOK" -i "$INV" "$SHARED/converge-tdemo.yml" > "$1" 2>&1 \
    || { tail -40 "$1"; echo "demo: converge failed, log $1" >&2; exit 1; }
  grep -E '^localhost +:' "$1" | tail -1
}

# inventory: $DIR/inventory, the demo's inventory as one directory of links (its group_vars and
# host_vars at its root, where ansible reads them), and $DIR/env.sh, the environment of its runs.
inventory(){
  rm -rf "$DIR/inventory"; mkdir -p "$DIR/inventory"
  local f
  for f in 10-substrate.yml 20-lab.yml group_vars host_vars; do
    ln -s "$(readlink -f "$SHARED/inventory/$f")" "$DIR/inventory/$f"
  done
  ln -s "$SHARED/guard/guard.yml" "$DIR/inventory/30-guard.yml"
  printf -- '---\n# Written by scripts/demo.sh: where the lab keeps its file (shared/lab.sh).\nall:\n  vars:\n    lab_dir: %s\n' "$DIR" > "$DIR/inventory/40-demo.yml"
  cat > "$DIR/env.sh" <<ENV
# Written by scripts/demo.sh: the environment of the demo's ansible runs. Source it:  . $DIR/env.sh
export DEMO_DIR=$(printf %q "$DIR")
export DEMO_INVENTORY=$(printf %q "$INV")   # the substrate's inventory: ansible-playbook -i "\$DEMO_INVENTORY" ...
export ANSIBLE_COLLECTIONS_PATH=$(printf %q "$ANSIBLE_COLLECTIONS_PATH")   # the collection the demo installed
export PATH=$(printf %q "$(dirname "$PLAYBOOK")"):\$PATH   # ansible-playbook, ansible-doc of the demo's venv
export ANSIBLE_FORCE_COLOR=0
ENV
}

up(){
  build
  inventory
  # with the DNS gateway (docs/adr/0017-dns-quota.md): tdemo's key is held to its DNS quota
  LAB_DNS_QUOTA=${LAB_DNS_QUOTA:-1} "$LAB" up "$DIR"
  reset_stats
  local t; t=$(date +%s%N)
  converge "$DIR/converge.log"
  echo "full converge (onboard + fabric + tdemo): $(ms "$t") ms; pvesim: $(stats)"
  report
  show
}

report_path(){ sed -n 's/.*"msg": "site report: \([^ ]*\) .*/\1/p' "$DIR/verify.log" | tail -1; }

# tother beside tdemo, then verify both: verify.yml writes the site report.
report(){
  "$PLAYBOOK" -i "$INV" "$SHARED/converge-tother.yml" > "$DIR/converge-tother.log" 2>&1 \
    || { tail -40 "$DIR/converge-tother.log"; echo "demo: converge of tother failed, log $DIR/converge-tother.log" >&2; exit 1; }
  "$PLAYBOOK" -i "$INV" "$SHARED/verify-both.yml" > "$DIR/verify.log" 2>&1 \
    || { tail -40 "$DIR/verify.log"; echo "demo: verify failed (the report says which check), log $DIR/verify.log" >&2; exit 1; }
}

show(){
  local port ures; port=$(sed -n '/^substrate_resolver:/,/port:/s/^  port: //p' "$DIR/substrate.yml")
  cat <<TXT

Built (all on 127.0.0.1):
  tenant tdemo, index 1: subnet 10.20.129.0/24, EVPN zone tn01 (VRF VNI 10001), VNet tn01v0 (VNI 20016),
  VM tdemo-1 (vmid 10101, 10.20.129.10) in pool tenant-tdemo, DNS zones tdemo.mobile.deevnet.net and
  129.20.10.in-addr.arpa with key tenant-tdemo; attachment file $DIR/attachments/tdemo.yml.
  tenant tother, index 2, beside it: subnet 10.20.130.0/24, zone tn02, VM tother-1 (10.20.130.10).

Look at it:
  dig @127.0.0.1 -p $port tdemo-1.tdemo.mobile.deevnet.net A +short
  dig @127.0.0.1 -p $port -x 10.20.129.10 +short
  curl -s --cacert $DIR/pvesim-ca.pem $(url)/_sim/stats
  curl -s --cacert $DIR/pvesim-ca.pem -H "Authorization: PVEAPIToken=\$(sed -n 's/^ *api_user: //p' $DIR/attachments/tdemo.yml)!iac=\$(sed -n 's/^ *api_token_secret: //p' $DIR/attachments/tdemo.yml)" \\
       $(url)/api2/json/nodes/dv02hyp002p02/qemu/10101/config
  cat $DIR/tenants.yml            # the index registry (ADR-0009)
  # what PVE 9 writes on each node at SDN apply (rendered by pvesim; files: etc/frr/frr.conf, etc/frr/daemons.pve)
  curl -s --cacert $DIR/pvesim-ca.pem $(url)/_sim/nodes/dv02hyp002p02/files/etc/network/interfaces.d/sdn

Site report (tdemo + tother, read back from pvesim and the resolver, with every check's outcome):
  $(report_path)
  (Markdown + Mermaid: GitHub/GitLab draw it; tests/report/render.sh draws it to PNG with Chromium)
Next, a tenant of your own on this substrate: docs/first-tenant.md, which starts with
  . $DIR/env.sh
Stop it: $( [ "$DIR" = /tmp/dvt-demo ] || printf 'DEMO_DIR=%q ' "$DIR")$ROOT/scripts/demo.sh down
TXT
}

bench(){
  build
  inventory
  "$LAB" up "$DIR"
  trap '"$LAB" down "$DIR"' EXIT
  reset_stats
  local t; t=$(date +%s%N)
  converge "$DIR/converge.log"
  echo "full converge:  $(ms "$t") ms  pvesim $(stats)"
  reset_stats
  t=$(date +%s%N)
  converge "$DIR/noop.log"
  echo "no-op converge: $(ms "$t") ms  pvesim $(stats)"
}

case "${1:-up}" in
  up) up ;;
  down) "$LAB" down "$DIR"; echo "demo stopped" ;;
  bench) bench ;;
  *) echo "usage: $0 [up|down|bench]" >&2; exit 2 ;;
esac
