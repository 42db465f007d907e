#!/usr/bin/env bash
# lab.sh up|down|env DIR -- the lifecycle lab on 127.0.0.1: pvesim (the PVE API simulator) and
# the DNS lab (scripts/dns-lab.sh: PowerDNS + Unbound). Used by the molecule scenarios and by
# scripts/demo.sh. `up` writes DIR/substrate.yml: the substrate inventory variables
# (substrate_pve, substrate_pdns, substrate_resolver, tenant_attachment_dir, tenant_registry_file)
# the playbooks read. `down` stops what `up` started, by PID. Nothing listens off loopback.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
CMD=${1:-}; DIR=${2:-/tmp/dvt-lifecycle}
PVESIM=${PVESIM:-$ROOT/bin/pvesim}
PATH=$PATH:/usr/sbin:/sbin

alive(){ local st; st=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$st" ] && [ "${st:0:1}" != Z ]; }

down(){
  if [ -f "$DIR/pvesim.pid" ]; then
    local p; p=$(cat "$DIR/pvesim.pid"); rm -f "$DIR/pvesim.pid"
    if alive "$p"; then
      kill "$p" 2>/dev/null || true
      for _ in $(seq 1 100); do alive "$p" || break; sleep 0.05; done
      alive "$p" && kill -9 "$p" 2>/dev/null || true
    fi
  fi
  DNS_LAB_DIR=$DIR/dns "$ROOT/scripts/dns-lab.sh" down >/dev/null 2>&1 || true
}

up(){
  down
  mkdir -p "$DIR"
  rm -rf "$DIR/attachments" "$DIR/tenants.yml" "$DIR/substrate.yml"
  if [ ! -x "$PVESIM" ] || [ -n "$(find "$ROOT/internal/pvesim" "$ROOT/cmd/pvesim" -newer "$PVESIM" -name '*.go' 2>/dev/null | head -1)" ]; then
    (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$PVESIM" ./cmd/pvesim)
  fi
  rm -f "$DIR/pvesim-token.json"
  # The cluster's nodes are examples/substrate's hypervisors (LAB_PVESIM_CONFIG overrides).
  setsid "$PVESIM" --listen 127.0.0.1:0 --config "${LAB_PVESIM_CONFIG:-$ROOT/extensions/molecule/shared/pvesim.yml}" --ca-out "$DIR/pvesim-ca.pem" --token-out "$DIR/pvesim-token.json" \
    --render-dir "$DIR/nodes" \
    > "$DIR/pvesim.log" 2>&1 < /dev/null & echo $! > "$DIR/pvesim.pid"
  for _ in $(seq 1 200); do
    [ -s "$DIR/pvesim-token.json" ] && break
    alive "$(cat "$DIR/pvesim.pid")" || { cat "$DIR/pvesim.log" >&2; echo "lab: pvesim exited" >&2; exit 1; }
    sleep 0.05
  done
  # --token-out: JSON with api_port and api_token_secret of root@pam!sim.
  local port secret
  port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["api_port"])' "$DIR/pvesim-token.json")
  secret=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["api_token_secret"])' "$DIR/pvesim-token.json")
  # A node's pvesh, for what runs as root on a node (the envelope guard's sweep, roles/substrate
  # tasks/guard.yml): pvesim called as pvesh, with the environment --token-out gives it. Each node's
  # disk is $DIR/nodes/<node> (--render-dir): pvesim runs a hookscript local:snippets/<name> from there.
  # The root secret stays in a 0600 file the wrapper reads, out of every command line and of
  # ansible's -vvv (which prints a task's environment).
  mkdir -p "$DIR/bin"
  (umask 077; python3 -c 'import json,shlex,sys; print("\n".join("export %s=%s" % (k, shlex.quote(v)) for k, v in json.load(open(sys.argv[1]))["pvesh_env"].items()))' \
    "$DIR/pvesim-token.json" > "$DIR/pvesh.env")
  # A node in a network namespace of a test's own (tests/substrate) reaches the simulator as a node
  # reaches its cluster's API: the call is made from pvesim's namespace, where it listens.
  cat > "$DIR/bin/pvesh" <<SH
#!/usr/bin/env bash
. $(printf %q "$DIR/pvesh.env")
sim=/proc/$(cat "$DIR/pvesim.pid")/ns/net
if [ "\$(readlink /proc/self/ns/net)" != "\$(readlink "\$sim")" ]; then
  exec nsenter --net="\$sim" -- bash -c 'exec -a pvesh "\$0" "\$@"' $(printf %q "$PVESIM") "\$@"
fi
exec -a pvesh $(printf %q "$PVESIM") "\$@"
SH
  chmod 0700 "$DIR/bin/pvesh"
  # and its lvcreate (a tenant's thin pool in the node's volume group; the node is PVESIM_NODE,
  # roles/substrate tasks/thinpool.yml), from pvesim's namespace too
  sed 's/exec -a pvesh/exec -a lvcreate/g' "$DIR/bin/pvesh" > "$DIR/bin/lvcreate"
  chmod 0700 "$DIR/bin/lvcreate"
  curl -sf --cacert "$DIR/pvesim-ca.pem" "https://127.0.0.1:$port/_sim/stats" >/dev/null || { echo "lab: pvesim does not answer" >&2; down; exit 1; }
  # DNS: no tenant zones; the lifecycle's tenants get their zones and keys from onboarding.
  # LAB_DNS_QUOTA=1 (make test-adversary; docs/adr/0017-dns-quota.md): the DNS gateway in front of
  # PowerDNS, and Unbound reading the snippets onboarding writes (reloaded by SIGHUP)
  local quota=${LAB_DNS_QUOTA:-0} include=
  [ "$quota" = 1 ] && include=$DIR/unbound.d
  DNS_LAB_DIR=$DIR/dns DNS_LAB_TENANTS=${LAB_DNS_TENANTS-} DNS_LAB_GATEWAY=$quota DNS_LAB_UNBOUND_INCLUDE=$include \
    "$ROOT/scripts/dns-lab.sh" up > "$DIR/dns-lab.out" \
    || { cat "$DIR/dns-lab.out" >&2; down; exit 1; }
  # shellcheck disable=SC1091
  . "$DIR/dns/env"
  umask 077
  cat > "$DIR/substrate.yml" <<YML
---
# Written by extensions/molecule/shared/lab.sh: the lab's substrate inventory variables.
lab_dir: $DIR
pvesim_url: https://127.0.0.1:$port
substrate_pve:
  api_host: 127.0.0.1
  api_port: $port
  api_user: root@pam
  api_token_id: sim
  api_token_secret: "$secret"
  validate_certs: true
  ca_path: $DIR/pvesim-ca.pem
substrate_pdns:
  api_url: http://127.0.0.1:$DNS_LAB_API_PORT
  api_key: $DNS_LAB_API_KEY
  server: 127.0.0.1
  port: $DNS_LAB_PDNS_PORT
substrate_resolver:
  server: 127.0.0.1
  port: $DNS_LAB_UNBOUND_PORT
substrate_dns_gateway: $( [ -n "${DNS_LAB_GATE_PORT:-}" ] && echo "{server: 127.0.0.1, port: $DNS_LAB_GATE_PORT, key_name: dnsgate, tenant_dir: $DNS_LAB_GATE_DIR}" || echo "{}" )
substrate_unbound_conf_dir: $DIR/unbound.d
substrate_unbound_reload_command: $( [ -n "$include" ] && echo "[sh, -c, 'kill -HUP \$(cat $DIR/dns/unbound/pid)']" || echo "[]" )
tenant_attachment_dir: $DIR/attachments
tenant_registry_file: $DIR/tenants.yml
# a node's pvesh (root@pam on the simulator) and each node's snippets directory, for the envelope guard
node_environment: {PATH: "$DIR/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
node_snippets_dir: $DIR/nodes/{node}/var/lib/vz/snippets
# and where the guard's contain looks for QEMU pids and puts them into cgroups: the node's disk, never
# this machine's own /sys/fs/cgroup
node_cgroup_root: $DIR/nodes/{node}/sys/fs/cgroup
node_run_dir: $DIR/nodes/{node}/var/run/qemu-server
# and where its systemd units are written (no systemctl: the lab's nodes run no systemd of theirs)
node_unit_dir: $DIR/nodes/{node}/etc/systemd/system
# and the wire's table the guard writes (not loaded: the nodes are directories)
node_wire_file: $DIR/nodes/{node}/run/deevnet-envelope-guard/wire.nft
YML
  mkdir -p "$DIR/unbound.d"
  echo "lab up: pvesim https://127.0.0.1:$port (pid $(cat "$DIR/pvesim.pid")), PowerDNS 127.0.0.1:$DNS_LAB_PDNS_PORT (API $DNS_LAB_API_PORT), Unbound 127.0.0.1:$DNS_LAB_UNBOUND_PORT"
}

case "$CMD" in
  up) up ;;
  down) down ;;
  env) cat "$DIR/substrate.yml" ;;
  *) echo "usage: $0 up|down|env [DIR]" >&2; exit 2 ;;
esac
