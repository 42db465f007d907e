#!/usr/bin/env bash
# check.sh -- the SDN files the demo state renders, checked with the real tools of the Debian tree
# (scripts/debian-tree.sh): ifupdown2 3.0.0 and FRR 10.3 (Debian 13).
#
# 1. TestRenderDemoState converges the tenant_fabric role's default members, tdemo (index 1) and
#    tother (index 2) through the modules against pvesim with --render-dir semantics, into $W/render.
# 2. For each node: its main /etc/network/interfaces (sourcing interfaces.d/*), the node-network
#    role's file rendered from roles/proxmox_node_network/templates/interfaces.j2 (README values),
#    and the rendered interfaces.d/sdn and frr.conf are checked by realcheck.py inside the tree.
# 3. Negative controls, every run: three broken copies (an unknown ifupdown2 attribute, a bad MTU
#    value, an unknown FRR command) must each FAIL, so the check cannot pass vacuously.
# Needs root (a private network namespace); outside CI it skips without root, in CI it fails.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
GO=${GO:-go}
if [ "$(id -u)" != 0 ]; then
  if [ -n "${CI:-}" ]; then echo "render check: needs root in CI" >&2; exit 1; fi
  echo "render check: SKIP (needs root for the Debian tree's namespace)"; exit 0
fi
W=$(mktemp -d /tmp/dvt-render-XXXXXX)
trap 'rm -rf "$W"' EXIT
(cd "$ROOT" && DVT_RENDER_OUT=$W/render $GO test -count=1 -run '^TestRenderDemoState$' ./internal/sdn)

tree_check() { # node-dir
  "$ROOT/scripts/debian-tree.sh" run -b "$1/etc/network:/etc/network" -b "$1:/tmp/node" \
    -b "$ROOT/tests/render/realcheck.py:/tmp/realcheck.py" -- python3 /tmp/realcheck.py
}

# The Debian tree's /etc/network holds ifupdown2's own config: start each node dir from a copy.
NETCONF=$("$ROOT/scripts/debian-tree.sh" path)/etc/network
n=0
for r in "$W"/render/*/; do
  node=$(basename "$r"); d=$W/node-$node
  mkdir -p "$d/etc"; cp -a "$NETCONF" "$d/etc/network"; rm -f "$d/etc/network/interfaces.d/"*
  # Debian's (and PVE's) ifupdown2.conf sets addon_syntax_check=0, which checks almost nothing
  sed -i 's/^addon_syntax_check=.*/addon_syntax_check=1/' "$d/etc/network/ifupdown2/ifupdown2.conf"
  grep -qx 'addon_syntax_check=1' "$d/etc/network/ifupdown2/ifupdown2.conf"
  mkdir -p "$d/etc/network/interfaces.d" "$d/etc/frr"
  printf 'auto lo\niface lo inet loopback\n\nsource /etc/network/interfaces.d/*\n' > "$d/etc/network/interfaces"
  "$PY" - "$ROOT/roles/proxmox_node_network" "$node" > "$d/etc/network/interfaces.d/deevnet-tenant" <<'PYEOF'
import sys, yaml, jinja2
role, host = sys.argv[1], sys.argv[2]
v = yaml.safe_load(open(role + "/defaults/main.yml"))
# the site's and the node's inventory variables, as the role's README gives them
v.update(proxmox_node_network_bridge="vmbr0", proxmox_node_network_ports=["eno1"],
         tenant_transit={"vlan": 50, "address": "10.20.50.2/24"},
         tenant_underlay={"vlan": 51, "address": "10.20.51.2/24", "mtu": 1500},
         ansible_managed="Ansible managed", inventory_hostname=host)
env = jinja2.Environment(loader=jinja2.FileSystemLoader(role + "/templates"), undefined=jinja2.StrictUndefined,
                         keep_trailing_newline=True)
sys.stdout.write(env.get_template("interfaces.j2").render(**v))
PYEOF
  cp "$r/etc/network/interfaces.d/sdn" "$d/etc/network/interfaces.d/sdn"
  cp "$r/etc/frr/frr.conf" "$d/etc/frr/frr.conf"
  echo "== $node"
  tree_check "$d"

  # negative controls: each broken copy must fail
  for broken in 'sdn:s/\tvxlan-id /\tvxlan-idd /' 'sdn:s/\tmtu 1450$/\tmtu 14x0/' 'frr:s/^ neighbor VTEP bfd$/ neighbor VTEP bfdd/'; do
    b=$W/broken-$node; rm -rf "$b"; cp -a "$d" "$b"
    f=$b/etc/network/interfaces.d/sdn; [ "${broken%%:*}" = frr ] && f=$b/etc/frr/frr.conf
    sed -i "${broken#*:}" "$f"
    cmp -s "$f" "$d/${f#"$b"/}" && { echo "render check: control '$broken' changed nothing" >&2; exit 1; }
    if out=$(tree_check "$b"); then
      echo "$out"; echo "render check: broken copy ($broken) PASSED: the check is vacuous" >&2; exit 1
    fi
    echo "control ($broken): $(echo "$out" | grep -m1 '^FAIL' | cut -c1-150)"
  done
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "render check: no node rendered" >&2; exit 1; }
echo "render check: $n node(s) pass ifupdown2 and FRR checks; 3 negative controls fail as they must"
