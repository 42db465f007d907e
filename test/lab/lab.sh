#!/usr/bin/env bash
# test/lab/lab.sh: the substrate in a box. One QEMU TCG guest (the Debian cloud kernel of
# test/guest/kernel.sh) whose root is the Debian tree of scripts/debian-tree.sh, unpacked into RAM
# from a cached initramfs. Inside, network namespaces stand for the two PVE nodes, a VLAN-aware
# switch, the perimeter, a management host, the resolver host and an outside host (guest/topo.sh);
# each node boots like a fresh PVE node (guest/node.sh: the installer's interfaces file, ifup -a,
# sshd on its management address, FRR from Debian's frrinit.sh), then the nodes form the cluster
# (guest/corosync.sh: corosync with knet on the management network, as pvecm leaves it); converge's
# deevnet.tenant.qdevice puts the QDevice's corosync-qnetd on the management host (dv02hyp001p01).
# The controller (ansible, pvesim) stays on this machine: QEMU's user networking with restrict=on has
# one loopback port forward to the guest's sshd (the jump host); nothing in the guest reaches out.
#
#   test/lab/lab.sh up       boot and wire the lab; prints LAB_DIR=... (needed by the other verbs)
#   test/lab/lab.sh check    the box's checks (see check_box)
#   test/lab/lab.sh down     power the guest off and remove LAB_DIR
#   test/lab/lab.sh test     up, check, down (down also on failure)
#   test/lab/lab.sh boot     up without playbooks (guest, nodes as installed, pvesim, DNS lab)
#   test/lab/lab.sh converge the playbooks of up: fabric, perimeter, resolver, then LAB_TENANTS (needs LAB_DIR)
#   test/lab/lab.sh playbook PLAYBOOK [ARGS...]   ansible-playbook with the lab's inventory (log: LAB_DIR/ansible.log, every run)
#   test/lab/lab.sh ssh [HOST] [CMD...]   HOST: lab (the guest), a node name or perimeter
#   test/lab/lab.sh only CHECK...   some checks: box fabric frrconf destroyed tenants l2vni l3vni egress dns isolation probes
#                                  envelope (issue 35 in the kernel: a tenant's full thin pool and its OOM-killed
#                                  VM process inside its slice, the other tenant losing no write and no ping)
#   test/lab/lab.sh destroy FILE [ARG...]   the destroy playbook for the tenant declared in FILE, VMs unplugged
#   test/lab/lab.sh reuse FILE     onboard + tenant for FILE, a tenant at a destroyed tenant's index
#   test/lab/lab.sh wipe           the site lost: pvesim and DNS empty, every node rebooted as installed
#                                  (registry, attachments, perimeter kept; drills.sh site)
#   test/lab/lab.sh state          a few lines per node for a failed run (addresses, EVPN, BFD, FRR daemons)
#   test/lab/lab.sh corosync-line NODE   votequorum's figures as NODE's corosync has them
#   env: LAB_TENANTS (declarations converged by up), LAB_DESTROY (test: destroyed after the checks, then
#   checked again), LAB_PROBES=0 (check: no check_probes), LAB_REUSE (test: LAB_DESTROY's index released by the destroy, then this declaration
#   converged at it, checked again), LAB_DIR,
#   LAB_QDEVICE=1 (converge: also deevnet.tenant.qdevice), LAB_NO_QDEVICE=1 (no QDevice at all: pvesim
#   without one, and neither converge nor phase2.sh runs deevnet.tenant.qdevice),
#   LAB_MEM=2560 (MiB), LAB_SMP=2, LAB_TIMEOUT=300 (s, boot wait), DEEVNET_TREE,
#   LAB_ENVELOPE=0 (check: no check_envelope), LAB_ENVELOPE_POOL_MIB=96 (each real thin pool),
#   LAB_WIRE_CHECK=0 (check: no check_wire), LAB_WIRE=0 (the guard's wire not loaded on the nodes: the
#   skeleton drops every tenant port; a control),
#   LAB_LOGS_KEEP=DIR (down: the lab's logs copied there first, ansible-timed.log among them),
#   LAB_ENVELOPE_CONTROL=shared-pool|unplaced (check_envelope's controls, by hand: each must FAIL)
# Needs: qemu-system-x86 busybox-static openssh-client, the Debian tree (mmdebstrap), apt sources.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/test/lab
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/deevnet-tenant
INVENTORY=${LAB_INVENTORY:-$ROOT/examples/substrate/inventory}
VENV=${VENV:-$ROOT/.venv}
PVESIM=${PVESIM:-$ROOT/bin/pvesim}
# tenant declarations converged by `up` (empty: fabric only)
TENANTS=${LAB_TENANTS-}
# seconds an SDN apply may take, every node's reload included (pvesim's reload_timeout, the tenant
# role's tenant_sdn_apply_timeout)
LAB_APPLY_TIMEOUT=${LAB_APPLY_TIMEOUT:-1200}
ms(){ echo $(( ($(date +%s%N) - $1) / 1000000 )); }
log(){ echo "lab: $*" >&2; }

# The root image: the tree without docs/locales plus the kernel's network/virtio modules, as one
# gzip-less cpio (TCG unpacks an uncompressed archive faster than it gunzips one), cached per tree
# and kernel.
root_image() {
  local tree kt=$1 kver=$2 key img s
  # a failed tree build must stop here: an image packed from an empty tree would be cached as good
  tree=$("$ROOT/scripts/debian-tree.sh" path) && [ -f "$tree/.deevnet-tree" ] \
    || { echo "lab: no Debian tree (scripts/debian-tree.sh path failed)" >&2; return 1; }
  key=$( { cat "$tree/.deevnet-tree"; echo "$kver"; sed -n '/^root_image()/,/^}/p' "$0"; } | sha256sum | cut -c1-16)
  img=$CACHE/lab-root-$key.cpio
  if [ ! -f "$img" ]; then
    s=$(mktemp -d "$CACHE/lab-root.XXXXXX")
    # under usr/lib: the tree's /lib is a symlink, and a directory entry "lib" in the second archive
    # would replace it (the kernel's unpacker removes an entry of another type), losing the libraries
    local m=$s/m/usr/lib/modules/$kver
    mkdir -p "$m/kernel/drivers"
    cp -a "$kt/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$m/"
    cp -a "$kt/lib/modules/$kver/kernel"/{net,lib,crypto,arch} "$m/kernel/"
    # md: device-mapper and its thin target (check_envelope's LVM thin pools; loop is in block)
    cp -a "$kt/lib/modules/$kver/kernel/drivers"/{net,virtio,block,md} "$m/kernel/drivers/"
    # two archives back to back: the kernel unpacks concatenated cpio archives in order
    { (cd "$tree" && find . -xdev \( -path ./usr/share/doc -o -path ./usr/share/man -o -path ./usr/share/locale \
          -o -path ./usr/share/info -o -path ./var/cache/apt -o -path ./var/lib/apt/lists -o -path ./lib/modules \) -prune -o -print \
        | busybox cpio -o -H newc 2>/dev/null)
      (cd "$s/m" && find . | busybox cpio -o -H newc 2>/dev/null); } > "$s/img"
    mv "$s/img" "$img"; rm -rf "$s"
  fi
  echo "$img"
}

# nodes: "NODE,MANAGEMENT,PORT,LOOPBACK,UNDERLAY" per hypervisor of the inventory (host_vars substrate_node)
nodes() {
  "$VENV/bin/ansible-inventory" -i "$INVENTORY" --list 2>/dev/null | "$VENV/bin/python" -c '
import json, sys
inv = json.load(sys.stdin)
for h in inv["hypervisors"]["hosts"]:
    n = inv["_meta"]["hostvars"][h]["substrate_node"]
    print(",".join([h, n["management"], n["bridge_ports"][0], n["loopback"], n["underlay"].split("/")[0]]))'
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

sshl() { ssh -F "$LAB_DIR/ssh_config" "$@"; }

up() { boot; converge; echo "LAB_DIR=$LAB_DIR"; }

# boot: the guest, its wiring, the nodes as freshly installed, pvesim and the DNS lab; no playbook.
# LAB_DIR, when set, names the lab's directory (it must not exist yet: molecule, the demo and phase 2
# give a fixed one), else a new /tmp/dvt-lab.XXXXXX.
boot() {
  local t kt kver img port
  if [ -n "${LAB_DIR:-}" ]; then
    [ ! -e "$LAB_DIR" ] || { log "LAB_DIR $LAB_DIR exists: a lab is up there (lab.sh down) or remove it"; exit 2; }
    mkdir -p "$LAB_DIR"
  else LAB_DIR=$(mktemp -d /tmp/dvt-lab.XXXXXX); fi
  export LAB_DIR
  NODES=$(nodes | tr '\n' ' '); [ -n "$NODES" ] || { log "no hypervisors in $INVENTORY"; exit 2; }
  echo "$NODES" > "$LAB_DIR/nodes"
  t=$(date +%s%N)
  { read -r kt; read -r kver; } < <("$ROOT/test/guest/kernel.sh")
  [ -n "${kver:-}" ] || exit 2
  img=$(root_image "$kt" "$kver") || exit 2
  log "kernel + root image ready in $(ms $t) ms ($(du -h "$img" | cut -f1))"
  # per run: the controller's key, the lab scripts, /labinit
  ssh-keygen -q -t ed25519 -N '' -C dvt-lab -f "$LAB_DIR/id"
  mkdir -p "$LAB_DIR/run/root/.ssh" "$LAB_DIR/run/lab"
  cp "$LAB_DIR/id.pub" "$LAB_DIR/run/root/.ssh/authorized_keys"; chmod 700 "$LAB_DIR/run/root/.ssh"
  cp "$HERE/guest/labinit" "$LAB_DIR/run/labinit"
  cp "$HERE/guest/"{topo.sh,node.sh,nodeexec,vm.sh,resolver.sh,corosync.sh,lab_zipcache.py} "$LAB_DIR/run/lab/"
  (cd "$LAB_DIR/run" && find . | busybox cpio -o -H newc 2>/dev/null) > "$LAB_DIR/run.cpio"
  cat "$img" "$LAB_DIR/run.cpio" > "$LAB_DIR/initrd"
  port=$(free_port)
  cat > "$LAB_DIR/ssh_config" <<CFG
Host *
  User root
  IdentityFile $LAB_DIR/id
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  ConnectTimeout 20
  ServerAliveInterval 10
  ControlMaster auto
  ControlPath $LAB_DIR/cm-%C
  ControlPersist 300
Host lab
  HostName 127.0.0.1
  Port $port
CFG
  # the nodes by name and by management address (ansible uses the inventory's ansible_host)
  local spec n a
  for spec in $NODES; do
    n=${spec%%,*}; a=${spec#*,}; a=${a%%/*}
    printf 'Host %s %s\n  HostName %s\n  ProxyJump lab\n' "$n" "$a" "$a" >> "$LAB_DIR/ssh_config"
  done
  # the perimeter, on its management address (guest/topo.sh)
  printf 'Host perimeter 10.20.10.254\n  HostName 10.20.10.254\n  ProxyJump lab\n' >> "$LAB_DIR/ssh_config"
  # the management host, where the QDevice's corosync-qnetd runs (guest/topo.sh mgmt_host)
  printf 'Host dv02hyp001p01 10.20.10.1\n  HostName 10.20.10.1\n  ProxyJump lab\n' >> "$LAB_DIR/ssh_config"
  t=$(date +%s%N)
  # The guest's kernel sometimes crashes while it boots under TCG with two vCPUs: seen in a
  # fresh-clone CI run, "Oops: int3" in sched_clock_cpu at 10 s (QEMU 7.2's TCG and the kernel's
  # live patching of its own code, static keys, through int3), then panic, and QEMU exits
  # (-no-reboot). A crash at boot is booted again, at most twice, and said; any other failure is not.
  local attempt deadline
  for attempt in 1 2 3; do
    # restrict=on: the guest reaches nothing beyond QEMU; the only forward is loopback -> guest sshd.
    # loglevel=5: the kernel's warnings reach console.log, so a soft lockup comes with its stack trace.
    # 2560 MiB: the root, the thin pools' file and the logs are RAM, and each node's corosync locks
    # its memory (mlockall, as on PVE): with corosync, 2048 left 1169 MiB available where
    # check_envelope needs 1280 (README, Envelope)
    rm -f "$LAB_DIR/qemu.pid"
    qemu-system-x86_64 -accel tcg -m "${LAB_MEM:-2560}" -smp "${LAB_SMP:-2}" -display none -no-reboot \
      -kernel "$kt/boot/vmlinuz-$kver" -initrd "$LAB_DIR/initrd" \
      -append 'console=ttyS0 quiet loglevel=5 panic=-1 rdinit=/labinit' \
      -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-10.0.2.15:22" -device virtio-net-pci,netdev=n0 \
      -serial "file:$LAB_DIR/console.log" -daemonize -pidfile "$LAB_DIR/qemu.pid"
    deadline=$(( $(date +%s) + ${LAB_TIMEOUT:-300} ))
    until sshl lab true 2>/dev/null; do
      { [ "$(date +%s)" -lt "$deadline" ] && kill -0 "$(cat "$LAB_DIR/qemu.pid" 2>/dev/null)" 2>/dev/null; } || break
      sleep 2
    done
    sshl lab true 2>/dev/null && break
    if [ "$attempt" -lt 3 ] && ! kill -0 "$(cat "$LAB_DIR/qemu.pid" 2>/dev/null)" 2>/dev/null \
       && grep -aqE 'Oops|Kernel panic|BUG: ' "$LAB_DIR/console.log"; then
      mv "$LAB_DIR/console.log" "$LAB_DIR/console-crashed-$attempt.log"
      log "guest kernel crashed at boot ($(grep -aE -m1 'Oops|Kernel panic|BUG: ' "$LAB_DIR/console-crashed-$attempt.log" | tr -d '\r' | cut -c1-120)); booting again (console: console-crashed-$attempt.log)"
      continue
    fi
    log "guest not reachable; console:"; tail -20 "$LAB_DIR/console.log" >&2; exit 1
  done
  rm -f "$LAB_DIR/initrd" "$LAB_DIR/run.cpio"
  log "guest booted, sshd answering in $(ms $t) ms ($(grep -a LAB-READY "$LAB_DIR/console.log" || true))"
  # labinit's own failures (a module the kernel does not load, the guest-port rule not added)
  if grep -a 'labinit: FAILED' "$LAB_DIR/console.log" >&2; then log "guest boot incomplete (console.log above)"; exit 1; fi
  t=$(date +%s%N)
  # shellcheck disable=SC2086
  sshl lab /lab/topo.sh up $(for spec in $NODES; do echo "${spec%,*,*}"; done)
  nodes_side_by_side install
  log "switch, perimeter, hosts and nodes up in $(ms $t) ms"
  # the cluster, as pvecm create / pvecm add leave it: corosync (knet on the management network) on
  # every node, no QDevice yet (the converge's deevnet.tenant.qdevice sets it up)
  t=$(date +%s%N)
  # shellcheck disable=SC2046
  sshl lab /lab/corosync.sh create dv02 $(for spec in $NODES; do echo "${spec%,*,*}"; done)
  log "corosync started on every node in $(ms $t) ms"
  pvesim_up
}

# converge: the fabric playbook, then the tenants of LAB_TENANTS (onboard, tenant, VM namespaces)
converge() {
  local t; t=$(date +%s%N)
  playbook deevnet.tenant.fabric
  log "fabric playbook (node network, transit routes, SDN fabric + EVPN controller, apply, node reloads) in $(ms $t) ms"
  # the QDevice (deevnet.tenant.qdevice) only where a member is taken away: LAB_QDEVICE=1 (phase2.sh,
  # whose lab the drills use, runs it itself); about 7 minutes under TCG
  if [ -n "${LAB_QDEVICE:-}" ] && [ -z "${LAB_NO_QDEVICE:-}" ]; then
    t=$(date +%s%N)
    playbook deevnet.tenant.qdevice
    log "qdevice playbook (corosync-qnetd on dv02hyp001p01, certificates, quorum.device, corosync-qdevice) in $(ms $t) ms; $(corosync_line "$(echo "$NODES" | cut -d, -f1)")"
  fi
  t=$(date +%s%N)
  playbook deevnet.tenant.perimeter
  log "perimeter playbook (nftables NAT + policy, routes back to the overlay, forwarding) in $(ms $t) ms"
  resolver_up
  if [ -n "$TENANTS" ]; then t=$(date +%s%N); tenants; log "tenants onboarded and converged, VMs plugged in $(ms $t) ms"; fi
}

# corosync_line NODE: votequorum's figures as the node's real corosync has them (corosync-quorumtool)
corosync_line() {
  sshl "$1" corosync-quorumtool -s 2>&1 | awk -v n="$1" '
    /^Quorate:/ {q=$2} /^Expected votes:/ {e=$3} /^Total votes:/ {t=$3} /^Quorum:/ {m=$2} /^Flags:/ {sub(/^Flags: */, ""); f=$0}
    END {printf "corosync on %s: quorate %s, %s votes of %s expected (quorum %s), flags %s\n", n, (q == "Yes" ? "yes" : "NO"), t, e, m, f}'
}

# pvesim on 127.0.0.1 knowing the inventory's nodes; after each SDN apply it writes every node's
# files under LAB_DIR/render and runs reload.sh, which installs them on the lab node
pvesim_up() {
  if [ ! -x "$PVESIM" ] || [ -n "$(find "$ROOT/internal" "$ROOT/cmd/pvesim" -newer "$PVESIM" -name '*.go' 2>/dev/null | head -1)" ]; then
    (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$PVESIM" ./cmd/pvesim)
  fi
  local spec
  # a node's reload (ifreload + FRR) takes minutes under TCG; the template is on shared storage,
  # as a cluster that clones onto every node has it (tenant.vms.placement: spread)
  { echo "render_dir: $LAB_DIR/render"; echo "reload_command: $HERE/reload.sh"; echo "reload_timeout: ${LAB_APPLY_TIMEOUT}s"; echo "nodes:"
    for spec in $NODES; do echo "  - {name: ${spec%%,*}, maxcpu: 16, maxmem: 68719476736}"; done
    cat <<'YML'
storages:
  - {id: local, type: dir, content: [iso, vztmpl, backup, snippets]}
  - {id: local-lvm, type: lvmthin, content: [images, rootdir], clone: true}
  - {id: shared, type: rbd, content: [images], shared: true, clone: true}
templates:
  - vmid: 9000
    node: dv02hyp002p02
    name: debian-12-genericcloud
    template: true
    config: {cores: "2", memory: "2048", sockets: "1", ostype: l26, scsihw: virtio-scsi-single,
             scsi0: "shared:base-9000-disk-0,size=3G", ide2: "shared:vm-9000-cloudinit,media=cdrom",
             boot: order=scsi0, agent: "1", template: "1"}  # no NIC: a clone gets net0 on its VNet (ADR-0013)
YML
    # each node's thin pool per tenant the lab onboards, as the hypervisor play makes them before
    # onboarding registers the storage tenant-<name> on them (ADR-0014 decision 2): 256 GiB, the
    # default envelope's disk; pvesim answers GET /nodes/{node}/disks/lvmthin from these
    echo "disks:"
    for t in tdemo tother tnext; do echo "  - {vg: pve, thinpool: tenant-$t, size: 274877906944}"; done
    # corosync's quorum (ADR-0015): the QDevice the inventory's substrate_qdevice names, outside the
    # fabric; its vote keeps the node left quorate while the other is down. LAB_NO_QDEVICE=1: none
    # (the drills' control: a two-node cluster then loses quorum with one node away)
    [ -n "${LAB_NO_QDEVICE:-}" ] || { echo "quorum:"; echo "  qdevice: {host: dv02hyp001p01}"; }
  } > "$LAB_DIR/pvesim.yml"
  setsid "$PVESIM" --config "$LAB_DIR/pvesim.yml" --listen 127.0.0.1:0 --ca-out "$LAB_DIR/pvesim-ca.pem" \
    --token-out "$LAB_DIR/pvesim-token.json" > "$LAB_DIR/pvesim.log" 2>&1 < /dev/null & echo $! > "$LAB_DIR/pvesim.pid"
  for _ in $(seq 1 200); do [ -s "$LAB_DIR/pvesim-token.json" ] && break; sleep 0.05; done
  [ -s "$LAB_DIR/pvesim-token.json" ] || { cat "$LAB_DIR/pvesim.log" >&2; log "pvesim did not start"; exit 1; }
  # the second inventory source: only how things are reached (examples/substrate/README.md, "A lab")
  # DNS: PowerDNS + Unbound on this machine's loopback (scripts/dns-lab.sh), no zones: onboarding makes them
  DNS_LAB_DIR=$LAB_DIR/dns DNS_LAB_TENANTS='' "$ROOT/scripts/dns-lab.sh" up > "$LAB_DIR/dns-lab.out" \
    || { cat "$LAB_DIR/dns-lab.out" >&2; exit 1; }
  mkdir -p "$LAB_DIR/unbound.d"
  "$VENV/bin/python" - "$LAB_DIR" "$NODES" "$LAB_APPLY_TIMEOUT" "$HERE" <<'PY'
import json, sys, yaml
lab, nodes, apply_timeout, here = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4]
tok = json.load(open(lab + "/pvesim-token.json"))
env = dict(l.strip().replace("export ", "").split("=", 1) for l in open(lab + "/dns/env") if "=" in l)
env = {k: v.strip("'\"") for k, v in env.items()}
inv = {"all": {"hosts": {"localhost": {"substrate_pve": {
          "api_host": "127.0.0.1", "api_port": tok["api_port"], "api_user": "root@pam", "api_token_id": "sim",
          "api_token_secret": tok["api_token_secret"], "validate_certs": True, "ca_path": lab + "/pvesim-ca.pem"},
        "substrate_pdns": {"api_url": "http://127.0.0.1:" + env["DNS_LAB_API_PORT"], "api_key": env["DNS_LAB_API_KEY"],
                           "server": "127.0.0.1", "port": int(env["DNS_LAB_PDNS_PORT"])},
        "substrate_resolver": {"server": "127.0.0.1", "port": int(env["DNS_LAB_UNBOUND_PORT"])},
        "substrate_unbound_conf_dir": lab + "/unbound.d",
        # the resolver host gets the stub files onboarding wrote there (lab.sh resolver-reload)
        "substrate_unbound_reload_command": ["env", "LAB_DIR=" + lab, here + "/lab.sh", "resolver-reload"],
        "tenant_registry_file": lab + "/tenants.yml",
        "tenant_attachment_dir": lab + "/attachments",
        # the lab's cluster has the template on shared storage (pvesim.yml), as a site that
        # spreads VMs over its nodes must: the tenants' tokens may allocate there too
        "substrate_storages": ["local-lvm", "shared"],
        # a node's SDN reload takes minutes under TCG (pve_sdn_apply's apply_timeout)
        "tenant_sdn_apply_timeout": int(apply_timeout), "tenant_fabric_apply_timeout": int(apply_timeout),
        # tdemo's envelope small enough for its slice's memory.max to bite inside the guest
        # (check_envelope): 768 MiB, its three VMs of 256 MiB (test/lab/tenants/tdemo.yml)
        # and its bandwidth low enough that the lab's own path carries several times it (check_wire)
        "substrate_tenant_envelopes": {"tdemo": {"memory": 768, "bandwidth": 10}}}},
       "children": {"hypervisors": {"hosts": {n.split(",")[0]: {
          "ansible_ssh_common_args": "-F %s/ssh_config" % lab,
          # ansible's ControlPath is <dir>/hash(host, port, user): the same for every lab's node;
          # per lab for whoever runs ansible with this inventory (lab.sh, molecule, by hand)
          "ansible_control_path_dir": lab + "/cp",
          "ansible_python_interpreter": "/usr/bin/python3",
          # the guard's install (roles/substrate tasks/guard.yml, a hypervisor play, so a node's
          # variable) is off here: pvesim, on the controller, runs a hookscript from its render
          # directory, not from the guest's disk the play would write; check_envelope runs the
          # shipped guard in the guest itself
          "substrate_envelope_guard": False,
          # a PVE node has no sudo, and root is already root: no become (the plays' become: true is for
          # a site that connects as another user), which lets ansible pipeline each task into one ssh
          # command (playbook() sets ANSIBLE_PIPELINING; su cannot pipeline): a third less time
          "ansible_become": False,
          # the QDevice (deevnet.tenant.qdevice): no pmxcfs here, so each node has its own
          # corosync.conf (guest/corosync.sh create wrote them), and no systemd: the daemons are
          # started by guest/corosync.sh where their status tools cannot reach them
          "substrate_corosync_conf": "/etc/corosync/corosync.conf",
          "substrate_corosync_conf_shared": False,
          "substrate_qdevice_init": "command",
          "substrate_qnetd_command": ["/lab/corosync.sh", "qnetd"],
          "substrate_qdevice_command": ["/lab/corosync.sh", "qdevice"]} for n in nodes}},
       # the management host (guest/topo.sh mgmt_host), outside the fabric: the QDevice's qnetd
       "qdevice": {"hosts": {"dv02hyp001p01": {
          "ansible_host": "10.20.10.1", "ansible_user": "root",
          "ansible_ssh_common_args": "-F %s/ssh_config" % lab,
          "ansible_control_path_dir": lab + "/cp",
          "ansible_python_interpreter": "/usr/bin/python3",
          "ansible_become": False}}},
       # the perimeter namespace, reached like the nodes (guest/topo.sh starts its sshd)
       "perimeter": {"hosts": {"perimeter": {
          "ansible_host": "10.20.10.254", "ansible_user": "root",
          "ansible_ssh_common_args": "-F %s/ssh_config" % lab,
          "ansible_control_path_dir": lab + "/cp",
          "ansible_python_interpreter": "/usr/bin/python3",
          "ansible_become": False}}}}}}
with open(lab + "/inventory.yml", "w") as f:
    yaml.safe_dump(inv, f)
PY
}

# playbook PLAYBOOK [ARGS...]: ansible-playbook with the inventory as it is plus the lab's overrides,
# the collection being this tree
playbook() {
  mkdir -p "$LAB_DIR/collections/ansible_collections/deevnet"
  ln -sfn "$ROOT" "$LAB_DIR/collections/ansible_collections/deevnet/tenant"
  # ansible's own ssh ControlPath (~/.ansible/cp/<hash of host, port, user>) is the same for every
  # lab (root@10.20.10.2:22): with two labs up, one lab's plays ran through the other's connection
  # (seen: a node "ok" here with its files missing); one directory per lab
  mkdir -p "$LAB_DIR/cp"
  # ANSIBLE_LOG_PATH: every task's start with a timestamp (where a lab's time goes)
  ANSIBLE_LOG_PATH=$LAB_DIR/ansible-timed.log \
  ANSIBLE_SSH_CONTROL_PATH_DIR=$LAB_DIR/cp ANSIBLE_PIPELINING=true \
  ANSIBLE_COLLECTIONS_PATH=$LAB_DIR/collections ANSIBLE_HOST_KEY_CHECKING=false \
    "$VENV/bin/ansible-playbook" -i "$INVENTORY" -i "$LAB_DIR/inventory.yml" "$@" > "$LAB_DIR/ansible-last.log" 2>&1 \
    || { cat "$LAB_DIR/ansible-last.log" >> "$LAB_DIR/ansible.log"; tail -40 "$LAB_DIR/ansible-last.log" >&2; return 1; }
  cat "$LAB_DIR/ansible-last.log" >> "$LAB_DIR/ansible.log"
}

# tenants: onboard and converge each declaration with the playbooks that ship, then plug every VM
# pvesim holds into the lab as a namespace (vms)
tenants() {
  local f name index
  for f in $TENANTS; do
    read -r name index < <("$VENV/bin/python" -c 'import sys, yaml; t = yaml.safe_load(open(sys.argv[1]))["tenant"]; print(t["name"], t["index"])' "$f")
    playbook deevnet.tenant.onboard -e "tenant_name=$name" -e "tenant_index=$index"
    playbook deevnet.tenant.tenant -e "tenant_file=$f"
  done
  vms
}

# vms: every tenant VM pvesim holds, as a namespace on the node pvesim placed it on, with net0's
# bridge and MAC and ipconfig0's address and gateway, all read back from pvesim's API
vms() {
  PYTHONPATH=$HERE "$VENV/bin/python" - "$LAB_DIR" > "$LAB_DIR/vms.new" <<'PY'
import os, sys
from pvesimapi import Pvesim
get = Pvesim(sys.argv[1]).get
known = open(sys.argv[1] + "/vms").readlines() if os.path.exists(sys.argv[1] + "/vms") else []
offline = {n["node"] for n in get("/nodes") if n.get("status") != "online"}
for r in get("/cluster/resources?type=vm"):
    if r.get("template"):
        continue
    if r["node"] in offline:
        # PVE cannot read its config (595): its line stays as it was (drills.sh, a node failed)
        print("".join(l for l in known if l.split()[:1] == [str(r["vmid"])]), end="")
        continue
    c = get("/nodes/%s/qemu/%d/config" % (r["node"], r["vmid"]))
    net = dict(kv.split("=", 1) for kv in c["net0"].split(","))
    mac = next(v for k, v in net.items() if k in ("virtio", "e1000", "rtl8139", "vmxnet3"))
    ip = dict(kv.split("=", 1) for kv in c["ipconfig0"].split(","))
    print(r["vmid"], c["name"], r["node"], net["bridge"], mac, ip["ip"], ip["gw"], c["searchdomain"])
PY
  mv "$LAB_DIR/vms.new" "$LAB_DIR/vms"
  local vmid name node br mac cidr gw
  # a VM pvesim no longer holds (its tenant destroyed) is unplugged
  for name in $(sshl lab "ip netns list" | sed -n 's/^vm-\([^ ]*\).*/\1/p'); do
    grep -q "^[0-9]* $name " "$LAB_DIR/vms" || sshl lab /lab/vm.sh del 0 "$name" </dev/null
  done
  while read -r vmid name node br mac cidr gw _; do
    sshl lab /lab/vm.sh add "$vmid" "$name" "$node" "$br" "$mac" "$cidr" "$gw" </dev/null
  done < "$LAB_DIR/vms"
  wire_nodes
}

# wire_nodes: the envelope guard's wire (docs/adr/0016-tenant-wire.md) loaded on every online node, as
# its watch service loads it on a PVE node when a VM's port appears (the lab runs no systemd, and the
# plays install no guard here: pvesim runs hookscripts on the controller). The nodes' post-up loaded the
# shipped skeleton, which drops every tenant port until this admits it. The shipped guard runs in the
# node's namespace with pvesim's own binary as its pvesh (as check_envelope runs it), over an ssh
# session that forwards pvesim's port into the namespace; what it admits and refuses is kept in
# LAB_DIR/wire-<node>.log. LAB_WIRE=0: nothing admitted (a control: every tenant port stays dropped).
wire_nodes() {
  [ "${LAB_WIRE:-1}" = 0 ] && return 0
  local d=$LAB_DIR/wire g=/run/lab/wire guard_bin=$ROOT/bin/modules/envelope_guard_linux_amd64 n port out
  [ -x "$guard_bin" ] || { log "wire: $guard_bin missing (make build)"; return 1; }
  rm -rf "$d"; mkdir -p "$d/bin"
  # the guard's envelope file, as the hypervisor play writes it (every attached tenant's pool and
  # envelope), pvesim's pvesh environment, and the nodes pvesim says are online
  PYTHONPATH=$HERE "$VENV/bin/python" - "$LAB_DIR" "$d" > "$d/online" <<'PY' || { log "wire: no envelope file ($(tail -1 "$d/online"))"; return 1; }
import glob, json, shlex, sys, yaml
from pvesimapi import Pvesim
lab, d = sys.argv[1], sys.argv[2]
tenants = {}
for f in sorted(glob.glob(lab + "/attachments/*.yml")):
    a = yaml.safe_load(open(f))["tenant_attachment"]
    tenants[a["name"]] = {"pool": "tenant-" + a["name"], "envelope": dict(a["envelope"], **a.get("usage_limits", {}))}
json.dump({"tenants": tenants}, open(d + "/envelopes.json", "w"))
tok = json.load(open(lab + "/pvesim-token.json"))
env = dict(tok["pvesh_env"]); env["PVESIM_CA"] = "/run/lab/wire/ca.pem"
with open(d + "/pvesh.env", "w") as f:
    f.write("".join("export %s=%s\n" % (k, shlex.quote(str(v))) for k, v in env.items()))
print(tok["api_port"])
for n in Pvesim(lab).get("/nodes"):
    if n.get("status") == "online":
        print(n["node"])
PY
  cp "$guard_bin" "$d/envelope_guard"; cp "$PVESIM" "$d/bin/pvesh"; cp "$LAB_DIR/pvesim-ca.pem" "$d/ca.pem"
  tar -C "$d" -cf - envelope_guard bin ca.pem pvesh.env envelopes.json | sshl lab "rm -rf $g; mkdir -p $g && tar -C $g -xf -" \
    || { log "wire: the guard not copied into the guest"; return 1; }
  port=$(head -1 "$d/online")
  for n in $(tail -n +2 "$d/online"); do
    out=$(ssh -F "$LAB_DIR/ssh_config" -o ControlMaster=no -o ControlPath=none -o ExitOnForwardFailure=yes \
        -R "127.0.0.1:$port:127.0.0.1:$port" "$n" \
        ". $g/pvesh.env; PATH=$g/bin:/usr/sbin:/usr/bin:/sbin:/bin $g/envelope_guard -envelopes $g/envelopes.json -node $n -nft nft -wire-file $g/$n.nft wire" 2>&1 </dev/null) \
      || { echo "$out" >> "$LAB_DIR/wire-$n.log"; log "wire on $n failed: $(echo "$out" | tail -3)"; return 1; }
    [ -z "$out" ] || echo "$out" >> "$LAB_DIR/wire-$n.log"
  done
}

# resolver_up: the resolver host's Unbound (guest/resolver.sh) reaching the controller's PowerDNS
# through a stream-local forward of its own ssh connection (killed by down)
resolver_up() {
  local port
  port=$(. "$LAB_DIR/dns/env"; echo "$DNS_LAB_PDNS_PORT")
  sshl lab "mkdir -p /run/lab; rm -f /run/lab/pdns.sock"
  setsid ssh -F "$LAB_DIR/ssh_config" -o ControlMaster=no -o ControlPath=none -o ExitOnForwardFailure=yes -N \
    -R "/run/lab/pdns.sock:127.0.0.1:$port" lab > "$LAB_DIR/tunnel.log" 2>&1 < /dev/null & echo $! > "$LAB_DIR/tunnel.pid"
  for _ in $(seq 1 50); do sshl lab test -S /run/lab/pdns.sock && break; sleep 0.2; done
  sshl lab test -S /run/lab/pdns.sock || { cat "$LAB_DIR/tunnel.log" >&2; log "no forward to PowerDNS"; exit 1; }
  sshl lab /lab/resolver.sh up "$port"
  resolver_reload
}

# resolver_reload: substrate_unbound_reload_command of the lab inventory: the stub files onboarding
# wrote (substrate_unbound_conf_dir) to the resolver host, Unbound restarted on them
resolver_reload() {
  tar -C "$LAB_DIR/unbound.d" -cf - . | sshl lab /lab/resolver.sh reload
}

# nodes_side_by_side install|reinstall: every node of NODES installed (guest/node.sh) and booted, all
# at once, as a rack's nodes boot: each has its own namespace, /etc, /run/network and /run/frr
# (guest/nodeexec), and one after another they took most of a boot's 23 s under TCG. reinstall:
# the node's processes, namespace and files removed first (its namespace anew: guest/topo.sh node).
# Fails when any node failed.
nodes_side_by_side() {
  local spec s3 n rc=0 pids=()
  for spec in $NODES; do
    n=${spec%%,*}; s3=${spec%,*,*}
    if [ "$1" = reinstall ]; then
      # shellcheck disable=SC2016
      sshl lab "for p in \$(ip netns pids $n); do kill -9 \$p; done; ip netns del $n
        rm -rf /etc/netns/$n; /lab/topo.sh node $s3 && /lab/node.sh ${s3//,/ } >/dev/null" </dev/null &
    else
      sshl lab /lab/node.sh ${s3//,/ } </dev/null &
    fi
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  [ "$rc" = 0 ] || log "a node's install or boot failed (above)"
  return $rc
}

# wipe: the site lost, its code kept (issue 25, drill (c)): pvesim restarted empty (its template
# only: no SDN, pool, user or VM), the DNS lab and the resolver host's Unbound started again with no
# zone, every node installed again and booted (its files removed, then guest/node.sh: the installer's
# interfaces file, FRR with no config) and its VMs unplugged. Kept: the registry and the attachment files (the substrate's own
# state, in LAB_DIR) and the perimeter. The inventory (LAB_DIR/inventory.yml) is written again
# with the new pvesim and PowerDNS ports and secrets.
wipe() {
  local spec s3 n p
  p=$(cat "$LAB_DIR/pvesim.pid"); kill "$p" 2>/dev/null || true
  for _ in $(seq 1 100); do alive "$p" || break; sleep 0.05; done
  [ -f "$LAB_DIR/tunnel.pid" ] && { kill "$(cat "$LAB_DIR/tunnel.pid")" 2>/dev/null || true; }
  DNS_LAB_DIR=$LAB_DIR/dns "$ROOT/scripts/dns-lab.sh" down >/dev/null 2>&1 || true
  rm -rf "$LAB_DIR/dns" "$LAB_DIR/render" "$LAB_DIR/pvesim-token.json" "$LAB_DIR/unbound.d" "$LAB_DIR/cp"
  for spec in $NODES; do ssh -F "$LAB_DIR/ssh_config" -O exit "${spec%%,*}" 2>/dev/null || true; done
  # shellcheck disable=SC2016
  sshl lab "for v in \$(ip netns list | sed -n 's/^vm-\([^ ]*\).*/\1/p'); do ip netns del vm-\$v; done" </dev/null
  nodes_side_by_side reinstall
  : > "$LAB_DIR/vms"
  # booted, as an operator finds a node before running a playbook: FRR's daemons all started (under
  # TCG they load for minutes, and a node's sshd then takes longer than ansible's 10 s to greet:
  # seen, "Connection timed out during banner exchange" on the first task of the site playbook)
  for spec in $NODES; do node_ready "${spec%%,*}" || exit 1; done
  pvesim_up
  resolver_up
}

# node_ready NODE: until every daemon /etc/frr/daemons enables (zebra, staticd, mgmtd always) answers
# `show daemons` on NODE, at most 600 s
node_ready() {
  # shellcheck disable=SC2016
  sshl "$1" 'want="zebra staticd $([ -x /usr/lib/frr/mgmtd ] && echo mgmtd) $(sed -n "s/^\([a-z0-9]*d\)=yes$/\1/p" /etc/frr/daemons | tr "\n" " ")"
    i=0; while [ $i -lt 600 ]; do
      have=" $(timeout 30 vtysh -c "show daemons" 2>/dev/null | tr -s " \n" "  ") "
      missing=""; for d in $want; do case $have in *" $d "*) ;; *) missing="$missing $d";; esac; done
      [ -z "$missing" ] && exit 0; sleep 1; i=$((i+1))
    done
    echo "lab: '"$1"': FRR daemons not running 600 s after boot:$missing" >&2; exit 1' </dev/null
}

# destroy_tenant FILE [ARG...]: the shipped destroy playbook (ARGs added, e.g. -e
# tenant_release_index=true to free the index for another tenant), then the VMs it removed unplugged
destroy_tenant() {
  local t f=$1; t=$(date +%s%N); shift
  playbook deevnet.tenant.destroy -e "tenant_file=$f" "$@"
  "$VENV/bin/python" -c 'import sys, yaml; t = yaml.safe_load(open(sys.argv[1]))["tenant"]; print(t["name"], t["index"], t.get("vnets", 1))' "$f" >> "$LAB_DIR/destroyed"
  vms
  log "destroy $(basename "$f") in $(ms $t) ms"
}

# reuse_tenant FILE: a tenant declared at a destroyed tenant's index, onboarded and converged
# (tenants), its VMs plugged; the index is then no longer checked as destroyed
reuse_tenant() {
  local t index; t=$(date +%s%N)
  index=$("$VENV/bin/python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["tenant"]["index"])' "$1")
  TENANTS=$1 tenants
  if [ -f "$LAB_DIR/destroyed" ]; then
    awk -v i="$index" '$2 != i' "$LAB_DIR/destroyed" > "$LAB_DIR/destroyed.new"
    mv "$LAB_DIR/destroyed.new" "$LAB_DIR/destroyed"
  fi
  log "reuse index $index: $(basename "$1") in $(ms $t) ms"
}

need_lab() {
  [ -n "${LAB_DIR:-}" ] && [ -f "$LAB_DIR/ssh_config" ] || { echo "lab: LAB_DIR not set (lab.sh up prints it)" >&2; exit 2; }
  NODES=$(cat "$LAB_DIR/nodes")
}

# check_box: each node reached over ssh on its management address (through the jump host), its
# trunk up as rendered (vmbr0 VLAN-aware, VLANs 50/51 with the inventory's addresses), the nodes
# reaching each other over the underlay and the perimeter over transit.
check_box() {
  local fail=0 n
  for spec in $NODES; do
    n=${spec%%,*}
    if sshl "$n" 'ip -d link show vmbr0 | grep -q "vlan_filtering 1" && ip -br addr show vmbr0.50 | grep -q UP && ip -br addr show vmbr0.51 | grep -q UP'; then
      echo "ok   $n: vmbr0 VLAN-aware, vmbr0.50 and vmbr0.51 up"
    else echo "FAIL $n: vmbr0/vmbr0.50/vmbr0.51 not as rendered"; fail=1; fi
  done
  # first node -> the others over the underlay and the perimeter over transit
  local first peer; first=${NODES%% *}; first=${first%%,*}
  for spec in ${NODES#* }; do
    peer=${spec##*,}
    if sshl "$first" "ping -c1 -W3 $peer >/dev/null"; then echo "ok   $first -> ${spec%%,*} over the underlay ($peer)"
    else echo "FAIL $first -> ${spec%%,*} over the underlay ($peer)"; fail=1; fi
  done
  if sshl "$first" "ping -c1 -W3 10.20.50.1 >/dev/null"; then echo "ok   $first -> perimeter over transit (10.20.50.1)"
  else echo "FAIL $first -> perimeter over transit"; fail=1; fi
  return $fail
}

# check_fabric: what the rendered frr.conf must give, on every node: an OpenFabric route to every
# other node's VTEP loopback, the BGP EVPN session to each of them Established with BFD up.
# Waits up to LAB_CONVERGE seconds (default 120) for convergence.
check_fabric() {
  local fail=0 spec n other lo deadline seen
  deadline=$(( $(date +%s) + ${LAB_CONVERGE:-120} ))
  for spec in $NODES; do
    n=${spec%%,*}
    for other in $NODES; do
      [ "$other" = "$spec" ] && continue
      lo=$(echo "$other" | cut -d, -f4); other=${other%%,*}
      until sshl "$n" "vtysh -c 'show openfabric route' | grep -q ' $lo/32 .* $lo ' &&
          vtysh -c 'show bgp l2vpn evpn summary' | grep -E '\($lo\)|^$lo ' | awk '{print \$10}' | grep -qE '^[0-9]+$' &&
          vtysh -c 'show bfd peers brief' | grep -E ' $lo +up'" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || break
        sleep 3
      done
      # the three views read in one ssh (0.15 s each and 0.4 s a vtysh under TCG), judged here
      seen=$(sshl "$n" "vtysh -c 'show openfabric route' | grep -q ' $lo/32 .* $lo ' && echo route
          vtysh -c 'show bgp l2vpn evpn summary' | grep -E '\($lo\)|^$lo ' | awk '{print \$10}' | grep -qE '^[0-9]+$' && echo bgp
          vtysh -c 'show bfd peers brief' | grep -qE ' $lo +up' && echo bfd" </dev/null)
      if grep -qx route <<< "$seen"; then echo "ok   $n: OpenFabric route to $other's loopback $lo"
      else echo "FAIL $n: no OpenFabric route to $other's loopback $lo"; fail=1; fi
      if grep -qx bgp <<< "$seen"; then
        echo "ok   $n: BGP EVPN session to $other ($lo) Established"
      else echo "FAIL $n: BGP EVPN session to $other ($lo) not Established"; fail=1; fi
      if grep -qx bfd <<< "$seen"; then echo "ok   $n: BFD to $lo up"
      else echo "FAIL $n: BFD to $lo not up"; fail=1; fi
    done
  done
  return $fail
}

# check_frrconf: on every node, FRR runs the frr.conf pvesim rendered: `show running-config` equals
# the node's /etc/frr/frr.conf (what reload.sh installed and reloaded) section by section apart from
# FRR's own normalizations (frrdiff.py; README "FRR 10 and the rendered frr.conf"), among them an
# emptied `vrf X` whose device is gone (what frr-reload.py leaves of a removed zone). Controls, every
# run: the rendered file without one line must differ, or the comparison proves nothing; an empty
# `vrf` block added to the running config passes without its device, and must differ while the node
# has that VRF device, and when it still binds a VNI.
check_frrconf() {
  local fail=0 spec n d=$LAB_DIR/frrconf out same ctl=vrf_labctl
  mkdir -p "$d"
  for spec in $NODES; do
    n=${spec%%,*}
    sshl "$n" cat /etc/frr/frr.conf > "$d/$n.rendered" </dev/null
    sshl "$n" "vtysh -c 'show running-config'" > "$d/$n.running" </dev/null
    sshl "$n" "ip -br link show type vrf" </dev/null | cut -d' ' -f1 > "$d/$n.vrfs"
    same=0
    if out=$(python3 "$HERE/frrdiff.py" "$d/$n.rendered" "$d/$n.running" "$d/$n.vrfs"); then echo "ok   $n: ${out#frrdiff: }"; same=1
    else echo "FAIL $n: FRR's running config is not the rendered frr.conf:"; echo "$out" | sed 's/^/       /'; fail=1; fi
    # the emptied-vrf rule's controls: an empty block without its device (passes when the running
    # config itself passed), the same block for a device the node has, a block with a VNI
    { cat "$d/$n.running"; printf 'vrf %s\nexit-vrf\n' "$ctl"; } > "$d/$n.ctl-empty"
    { cat "$d/$n.vrfs"; echo "$ctl"; } > "$d/$n.ctl-vrfs"
    { cat "$d/$n.running"; printf 'vrf %s\n vni 4242\nexit-vrf\n' "$ctl"; } > "$d/$n.ctl-vni"
    if [ $same = 1 ] && ! python3 "$HERE/frrdiff.py" "$d/$n.rendered" "$d/$n.ctl-empty" "$d/$n.vrfs" >/dev/null; then
      echo "FAIL $n: control: an empty 'vrf $ctl' without its device did not compare equal"; fail=1
    elif python3 "$HERE/frrdiff.py" "$d/$n.rendered" "$d/$n.ctl-empty" "$d/$n.ctl-vrfs" >/dev/null; then
      echo "FAIL $n: control: an empty 'vrf $ctl' compared equal while the node has that VRF device"; fail=1
    elif python3 "$HERE/frrdiff.py" "$d/$n.rendered" "$d/$n.ctl-vni" "$d/$n.vrfs" >/dev/null; then
      echo "FAIL $n: control: a 'vrf $ctl' still binding 'vni 4242' compared equal"; fail=1
    else echo "ok   $n: control: an empty 'vrf $ctl' passes without its device, differs with it present or binding a VNI"; fi
    # the control: the rendered file without its first line inside a section
    sed '0,/^ [a-z]/{/^ [a-z]/d}' "$d/$n.rendered" > "$d/$n.control"
    if cmp -s "$d/$n.rendered" "$d/$n.control"; then echo "FAIL $n: control: the rendered frr.conf has no section line to remove"; fail=1
    elif python3 "$HERE/frrdiff.py" "$d/$n.control" "$d/$n.running" >/dev/null; then echo "FAIL $n: control: the rendered file without '$(diff "$d/$n.rendered" "$d/$n.control" | sed -n 's/^< //p')' compared equal"; fail=1
    else echo "ok   $n: control: without '$(diff "$d/$n.rendered" "$d/$n.control" | sed -n 's/^< //p')' the rendered file differs from the running config"; fi
  done
  return $fail
}

# check_tenants: for every tenant VM pvesim holds (LAB_DIR/vms): from inside the VM, its gateway
# (ipconfig0's gw: the VNet's anycast gateway on its node) answers; on every node the tenant's VRF
# and VNet exist in the kernel and FRR knows both VNIs (show evpn vni: the L2VNI and the VRF's
# L3VNI); on every node the VNet's VXLAN floods to each other node's VTEP (EVPN type-3), and on every
# other node the VM's MAC is a remote EVPN MAC (type-2, learnt over BGP from its node).
check_tenants() {
  local fail=0 vmid name node br mac cidr gw zone spec n lo d=$LAB_DIR/tenants-check gws waited missing before
  [ -s "$LAB_DIR/vms" ] || return 0
  rm -rf "$d"; mkdir -p "$d"
  # every VM's gateway from inside it, side by side in one ssh (one after another took 1.3 s each
  # under TCG); the pings also make each VM's node learn its MAC, which EVPN announces (type-2)
  # shellcheck disable=SC2016
  gws=$(sshl lab "$(while read -r _ name _ _ _ _ gw _; do
      printf '(ip netns exec vm-%s ping -c2 -W3 %s >/dev/null 2>&1 && echo up %s) & ' "$name" "$gw" "$name"
    done < "$LAB_DIR/vms") wait" </dev/null)
  # then every node read once, side by side (node_dump)
  for spec in $NODES; do node_dump "${spec%%,*}" "$d" & done; wait
  # a MAC not yet remote on a node: that node's EVPN MACs read again each second, for up to 20 s
  # without one more MAC learnt (each MAC had its own 20 s when each was read on its own)
  waited=0 before=-1
  while :; do
    missing=""
    while read -r _ _ node _ mac _; do
      for spec in $NODES; do
        n=${spec%%,*}; [ "$n" = "$node" ] && continue
        grep -i "$mac" "$d/$n.mac" | grep -q remote || missing="$missing $n"
      done
    done < "$LAB_DIR/vms"
    [ "$before" -ge 0 ] && [ "$(wc -w <<< "$missing")" -lt "$before" ] && waited=0
    before=$(wc -w <<< "$missing")
    [ -n "$missing" ] && [ "$waited" -lt 20 ] || break
    sleep 1; waited=$((waited + 1))
    for n in $(echo "$missing" | tr ' ' '\n' | sort -u); do sshl "$n" "vtysh -c 'show evpn mac vni all'" > "$d/$n.mac" </dev/null; done
  done
  while read -r vmid name node br mac cidr gw _; do
    zone=${br%v*}
    if grep -qx "up $name" <<< "$gws"; then echo "ok   $name ($cidr on $node): gateway $gw answers"
    else echo "FAIL $name ($cidr on $node): gateway $gw does not answer"; fail=1; fi
    for spec in $NODES; do
      n=${spec%%,*}
      if grep -qE "^[0-9]+: vrf_$zone(@[^:]*)?: .* vrf table " "$d/$n.links" && grep -qE "^[0-9]+: $br(@[^:]*)?: .* master vrf_$zone " "$d/$n.links" &&
          grep -qE " L2 +vxlan_$br " "$d/$n.vni" && grep -qE " L3 .* vrf_$zone" "$d/$n.vni"; then
        echo "ok   $n: vrf_$zone and $br in the kernel, L2VNI and L3VNI in FRR"
      else echo "FAIL $n: vrf_$zone / $br / their VNIs missing"; fail=1; fi
      for other in $NODES; do
        [ "$other" = "$spec" ] && continue
        lo=$(echo "$other" | cut -d, -f4)
        if grep -q "^00:00:00:00:00:00 dev vxlan_$br dst $lo " "$d/$n.fdb"; then echo "ok   $n: vxlan_$br floods to $lo (EVPN type-3)"
        else echo "FAIL $n: vxlan_$br has no flood entry to $lo"; fail=1; fi
      done
      [ "$n" = "$node" ] && continue
      if grep -i "$mac" "$d/$n.mac" | grep -q remote; then echo "ok   $n: $name's MAC $mac is a remote EVPN MAC (type-2)"
      else echo "FAIL $n: $name's MAC $mac not learnt over EVPN"; fail=1; fi
    done
  done < "$LAB_DIR/vms"
  return $fail
}

# node_dump NODE DIR: what check_tenants reads of NODE, in one ssh (each ssh costs 0.15 s and each
# vtysh 0.4 s under TCG): its links with their details one per line (DIR/NODE.links), FRR's VNIs
# (.vni), the bridges' fdb (.fdb) and FRR's EVPN MACs (.mac)
node_dump() {
  local f
  for f in links vni fdb mac; do : > "$2/$1.$f"; done
  sshl "$1" "ip -d -o link show; echo '#vni'; vtysh -c 'show evpn vni'; echo '#fdb'; bridge fdb show; echo '#mac'; vtysh -c 'show evpn mac vni all'" </dev/null \
    | awk -v p="$2/$1" 'BEGIN {f = p ".links"} /^#(vni|fdb|mac)$/ {f = p "." substr($0, 2); next} {print > f}'
}

# check_l2vni: every pair of tenant VMs on the same VNet but on different nodes reach each other
# (from inside the VM, ARP flushed first): the frames cross the fabric in the VNet's VXLAN (L2VNI),
# flooded to the VTEPs EVPN type-3 announced and unicast to the MAC EVPN type-2 learnt. One ssh:
# each VM's pings one after another (each flushes that VM's ARP first), the VMs side by side.
check_l2vni() {
  local fail=0 a na ba ipa b nb bb ipb script="" pairs="" out
  [ -s "$LAB_DIR/vms" ] || return 0
  while read -r _ a na ba _ ipa _; do
    local mine=""
    while read -r _ b nb bb _ ipb _; do
      [ "$a" != "$b" ] && [ "$ba" = "$bb" ] && [ "$na" != "$nb" ] || continue
      pairs="$pairs$a $na $ba $b ${ipb%/*} $nb"$'\n'
      mine="$mine ip netns exec vm-$a ip neigh flush dev eth0; if ip netns exec vm-$a ping -c3 -W3 ${ipb%/*} >/dev/null 2>&1; then echo 'ok $a $b'; else echo 'fail $a $b'; fi;"
    done < "$LAB_DIR/vms"
    [ -z "$mine" ] || script="$script ($mine) &"
  done < "$LAB_DIR/vms"
  [ -n "$pairs" ] || return 0
  out=$(sshl lab "$script wait" 2>/dev/null </dev/null)
  while read -r a na ba b ipb nb; do
    if grep -qx "ok $a $b" <<< "$out"; then echo "ok   $a ($na) -> $b $ipb ($nb) over $ba's VXLAN (L2VNI)"
    else echo "FAIL $a ($na) -> $b $ipb ($nb) over $ba's VXLAN (L2VNI)"; fail=1; fi
  done <<< "${pairs%$'\n'}"
  return $fail
}

# check_l3vni: every pair of VMs of one tenant on different VNets and different nodes reach each
# other (from inside the VM, ARP flushed first): routed by the VNet's anycast gateway into the
# tenant's VRF, across the fabric in the VRF's VXLAN (L3VNI, symmetric IRB: EVPN type-2 MAC+IP).
check_l3vni() {
  local fail=0 a na ba ipa b nb bb ipb lo spec pairs="" pending routes="" raw="" script="" out waited=0 n
  [ -s "$LAB_DIR/vms" ] || return 0
  while read -r _ a na ba _ ipa _; do
    while read -r _ b nb bb _ ipb _; do
      [ "${ba%v*}" = "${bb%v*}" ] && [ "$ba" != "$bb" ] && [ "$na" != "$nb" ] || continue
      # every node has every VNet: without the L3VNI the node would still route into its own copy of
      # the other VNet and bridge there (asymmetric); the VRF's route to the VM must be EVPN's host
      # route through the other VTEP on the L3VNI's bridge
      lo=$(for spec in $NODES; do [ "${spec%%,*}" = "$nb" ] && echo "$spec" | cut -d, -f4; done)
      pairs="$pairs$a $na $ba $b ${ipb%/*} $nb $bb $lo"$'\n'
    done < "$LAB_DIR/vms"
  done < "$LAB_DIR/vms"
  [ -n "$pairs" ] || return 0
  pairs=${pairs%$'\n'}
  # EVPN's host route comes from the other node's type-2 MAC/IP route, sent once that node has
  # learnt the VM's address (its ARP, e.g. from check_tenants' gateway ping): up to 30 s for it
  # (seen under load: the route still the connected one when asked at once). Each round asks every
  # node once for the routes of its pairs still waiting, the nodes side by side.
  while :; do
    pending=""
    while read -r a na ba b ipb nb bb lo; do
      grep -qxF "$a $b via $lo dev vrfbr_${ba%v*}" <<< "$routes" || pending="$pending$a $na ${ba%v*} $b $ipb"$'\n'
    done <<< "$pairs"
    [ -n "$pending" ] && [ "$waited" -lt 30 ] || break
    [ "$waited" = 0 ] || sleep 2
    # "A B <A's node's route to B>" for each pair waiting
    raw=$(for n in $(echo "$pending" | awk 'NF {print $2}' | sort -u); do
      echo "$pending" | awk -v n="$n" '$2 == n {printf "echo \"%s %s $(ip route get %s vrf vrf_%s 2>&1 | head -1)\"\n", $1, $4, $5, $3}' \
        | sshl "$n" sh 2>/dev/null &
    done; wait)
    # kept as "A B via LO dev vrfbr_ZONE" once it is EVPN's
    routes="$routes"$'\n'$(echo "$raw" | sed -n 's/^\([^ ]*\) \([^ ]*\) .* \(via [^ ]* dev vrfbr_[^ ]*\) .*$/\1 \2 \3/p')
    waited=$((waited + 2))
  done
  while read -r a na ba b ipb nb bb lo; do
    script="$script (ip netns exec vm-$a ip neigh flush dev eth0; if ip netns exec vm-$a ping -c3 -W3 $ipb >/dev/null 2>&1; then echo 'ok $a $b'; else echo 'fail $a $b'; fi) &"
  done <<< "$pairs"
  out=$(sshl lab "$script wait" 2>/dev/null </dev/null)
  local route ping
  while read -r a na ba b ipb nb bb lo; do
    if grep -qxF "$a $b via $lo dev vrfbr_${ba%v*}" <<< "$routes" && grep -qxF "ok $a $b" <<< "$out"; then
      echo "ok   $a ($ba on $na) -> $b $ipb ($bb on $nb) through vrf_${ba%v*} (L3VNI: via $lo dev vrfbr_${ba%v*})"
    else
      # the last route read for the pair (none when it was EVPN's in an earlier round), the ping's verdict
      route=$(awk -v a="$a" -v b="$b" '$1 == a && $2 == b {$1 = $2 = ""; sub(/^  /, ""); print}' <<< "$raw")
      ping=$(awk -v a="$a" -v b="$b" '$2 == a && $3 == b {print $1}' <<< "$out")
      echo "FAIL $a ($ba on $na) -> $b $ipb ($bb on $nb) through vrf_${ba%v*} (L3VNI); $na routes it: ${route:-through the L3VNI}, ping: ${ping:-did not run}"; fail=1
    fi
  done <<< "$pairs"
  return $fail
}

# seen_counts: from `nft list chain ip seen input` of the outside host (guest/topo.sh, table ip seen)
# on stdin, its counters of echo requests from the perimeter's NAT address and from any site address
seen_counts() {
  awk '
    /saddr 198.51.100.2 / {for (i = 1; i <= NF; i++) if ($i == "packets") n = $(i + 1)}
    /saddr 10.20.0.0\/16 / {for (i = 1; i <= NF; i++) if ($i == "packets") s = $(i + 1)}
    END {print n + 0, s + 0}'
}

# check_egress: from inside each VM, the outside host (198.51.100.1) answers, and what reached it
# came from the perimeter's NAT address (198.51.100.2), never from a tenant address: the VRF's
# default route to the perimeter, the perimeter's masquerade and its route back to the overlay.
# One VM after another (the outside host's counters are shared), each in one ssh: the counters, the
# ping, the counters again.
check_egress() {
  local fail=0 name n0 s0 n1 s1 out seen='ip netns exec outside nft list chain ip seen input'
  [ -s "$LAB_DIR/vms" ] || return 0
  while read -r _ name _ _ _ _ _ _; do
    out=$(sshl lab "$seen; echo '#ping'; if ip netns exec vm-$name ping -c2 -i0.2 -W3 198.51.100.1 >/dev/null 2>&1; then echo '#answered'; else echo '#silent'; fi; $seen" </dev/null)
    read -r n0 s0 < <(sed -n '1,/^#ping$/p' <<< "$out" | seen_counts)
    read -r n1 s1 < <(sed -n '/^#\(answered\|silent\)$/,$p' <<< "$out" | seen_counts)
    if grep -qx '#answered' <<< "$out"; then
      if [ "$n1" -gt "$n0" ] && [ "$s1" -eq "$s0" ]; then echo "ok   $name -> outside 198.51.100.1: answered, seen from the NAT address 198.51.100.2 ($((n1 - n0)) echo requests)"
      else echo "FAIL $name -> outside: answered, but seen from 198.51.100.2 $((n1 - n0))x, from a site address $((s1 - s0))x"; fail=1; fi
    else
      echo "FAIL $name -> outside 198.51.100.1: no answer (seen from 198.51.100.2 $((n1 - n0))x, from a site address $((s1 - s0))x)"; fail=1
    fi
  done < "$LAB_DIR/vms"
  return $fail
}

# check_dns: from inside each VM, the site resolver 10.20.99.1 (Unbound on the resolver host with
# the stub zones onboarding wrote) answers the VM's own name (its searchdomain, from pvesim) with
# its address, and its address with its name, from the tenant's zones in PowerDNS.
check_dns() {
  local fail=0 name cidr dom a p script="" out d=/run/lab/dnscheck
  [ -s "$LAB_DIR/vms" ] || return 0
  while read -r _ name _ _ _ cidr _ dom; do
    script="$script (ip netns exec vm-$name dig @10.20.99.1 +short +time=3 +tries=2 $name.$dom A > $d/$name.a 2>&1;
      ip netns exec vm-$name dig @10.20.99.1 +short +time=3 +tries=2 -x ${cidr%/*} > $d/$name.ptr 2>&1) &"
  done < "$LAB_DIR/vms"
  # every VM's two lookups side by side in one ssh (one ssh per lookup took 0.35 s each under TCG);
  # each answer as one line, its lines joined by spaces as before
  out=$(sshl lab "rm -rf $d; mkdir -p $d; $script wait; for f in $d/*; do printf '%s ' \"\${f##*/}\"; tr '\n' ' ' < \"\$f\"; echo; done; rm -rf $d" </dev/null)
  while read -r _ name _ _ _ cidr _ dom; do
    a=$(sed -n "s/^$name\.a //p" <<< "$out")
    if [ "$a" = "${cidr%/*} " ]; then echo "ok   $name: dig @10.20.99.1 $name.$dom A -> ${cidr%/*}"
    else echo "FAIL $name: dig @10.20.99.1 $name.$dom A -> '$a', want ${cidr%/*}"; fail=1; fi
    p=$(sed -n "s/^$name\.ptr //p" <<< "$out")
    if [ "$p" = "$name.$dom. " ]; then echo "ok   $name: dig @10.20.99.1 -x ${cidr%/*} -> $name.$dom."
    else echo "FAIL $name: dig @10.20.99.1 -x ${cidr%/*} -> '$p', want $name.$dom."; fail=1; fi
  done < "$LAB_DIR/vms"
  return $fail
}

# check_isolation: from inside each VM no answer from another tenant's VMs, the management host
# (10.20.10.1) or any node's management address (the perimeter's policy; check_egress shows the
# same VM does reach the outside, so silence here is the policy, not a broken path). Every ping of
# every VM runs side by side (each waits 2 s for nothing).
check_isolation() {
  local fail=0 a ba b bb ipb spec dst script="" out
  [ -s "$LAB_DIR/vms" ] || return 0
  declare -A dsts=()
  while read -r _ a _ ba _ _ _ _; do
    dst=""
    while read -r _ b _ bb _ ipb _; do [ "${ba%v*}" != "${bb%v*}" ] && dst="$dst ${ipb%/*}:$b"; done < "$LAB_DIR/vms"
    dst="$dst 10.20.10.1:management-host"
    for spec in $NODES; do dst="$dst $(echo "$spec" | cut -d, -f2 | cut -d/ -f1):${spec%%,*}-management"; done
    dsts[$a]=$dst
    script="$script for d in $dst; do (if ip netns exec vm-$a ping -c2 -W2 \${d%%:*} >/dev/null 2>&1; then echo \"reach $a \$d\"; else echo \"none $a \$d\"; fi) & done;"
  done < "$LAB_DIR/vms"
  # every VM's pings side by side, in one ssh (one VM after another took 3.4 s each under TCG)
  out=$(sshl lab "$script wait" </dev/null)
  while read -r _ a _ _ _ _ _ _; do
    for b in ${dsts[$a]}; do
      if grep -qxF "none $a $b" <<< "$out"; then echo "ok   $a: no path to ${b#*:} (${b%%:*})"
      elif grep -qxF "reach $a $b" <<< "$out"; then echo "FAIL $a reaches ${b#*:} (${b%%:*})"; fail=1
      else echo "FAIL $a: ping ${b#*:} (${b%%:*}) did not run"; fail=1; fi
    done
  done < "$LAB_DIR/vms"
  return $fail
}

# check_probes: the packet sweep from inside every tenant VM and the vmbr0 move with the first
# tenant's own token (test/lab/probe.sh: what it probes, where it counts, the verdicts). Runs after
# the other checks: the move plugs a VM again (lab.sh vms).
check_probes() {
  [ -s "$LAB_DIR/vms" ] || return 0
  LAB_DIR=$LAB_DIR VENV=$VENV LAB_INVENTORY=$INVENTORY PROBE_TENANT=$(head -1 "$LAB_DIR/vms" | cut -d' ' -f2 | sed 's/-[0-9]*$//') \
    "$HERE/probe.sh"
}

# check_destroyed: for every tenant destroyed (LAB_DIR/destroyed: name index vnets), on every node:
# no VRF, VNet or VXLAN device of its zone in the kernel, no route of its /24 (main table, proto
# 221 hooks), no hook file; in FRR none of its VNIs, no BGP instance for its VRF, nothing mentioning
# the VRF but one `vrf X` block, which must be empty and inactive: frr-reload.py (what PVE 9 runs)
# never deletes a vrf context, it only empties it (test/lab/README.md, "A removed zone's vrf block").
check_destroyed() {
  local fail=0 name index vnets zone spec n vnis k evpn run blk other vrfline
  [ -s "$LAB_DIR/destroyed" ] || return 0
  while read -r name index vnets; do
    zone=$(printf 'tn%02d' "$index"); vnis="$((10000 + index))"
    for k in $(seq 0 $((vnets - 1))); do vnis="$vnis $((20000 + 16 * index + k))"; done
    for spec in $NODES; do
      n=${spec%%,*}
      if sshl "$n" "! ip -br link | cut -d' ' -f1 | grep -E '^(vrf_$zone|vrfbr_$zone|vrfvx_$zone|${zone}v[0-9]+|vxlan_${zone}v[0-9]+)(@|\$)' &&
          ! ip route show table all | grep -E 'vrf_$zone|10\.20\.$((128 + index))\.' &&
          [ ! -e /etc/network/if-up.d/deevnet-tenant-$name ]" </dev/null >/dev/null 2>&1; then
        echo "ok   $n: $name's vrf_$zone, VNets and routes gone from the kernel"
      else echo "FAIL $n: $name's vrf_$zone, VNets or routes still in the kernel"; fail=1; fi
      if ! evpn=$(sshl "$n" "vtysh -c 'show evpn vni'" </dev/null) || ! run=$(sshl "$n" "vtysh -c 'show running-config'" </dev/null); then
        echo "FAIL $n: FRR's VNIs or running config not read"; fail=1; continue
      fi
      if echo "$evpn" | grep -wE "$(echo "$vnis" | tr ' ' '|')" >/dev/null; then
        echo "FAIL $n: FRR still has one of $name's VNIs ($vnis)"; fail=1; continue
      fi
      # the lines of the `vrf vrf_<zone>` block, and every other line naming the VRF
      blk=$(echo "$run" | awk -v h="vrf vrf_$zone" '$0 == h {b = 1; next} b && /^exit-vrf/ {b = 0} b && $0 !~ /^ *!$/ {print}')
      other=$(echo "$run" | grep -E "vrf_$zone" | grep -vxF "vrf vrf_$zone" || true)
      vrfline=$(sshl "$n" "vtysh -c 'show vrf'" </dev/null | grep -E "^vrf vrf_$zone " || true)
      if [ -n "$other" ] || [ -n "$blk" ]; then
        echo "FAIL $n: FRR still configures vrf_$zone:$(echo "$other" "$blk" | tr -s '\n ' ' ')"; fail=1
      elif [ -n "$vrfline" ] && [[ $vrfline != *inactive* ]]; then
        echo "FAIL $n: FRR's vrf_$zone is active ($vrfline) without its kernel device"; fail=1
      elif echo "$run" | grep -qxF "vrf vrf_$zone"; then
        echo "ok   $n: FRR has none of $name's VNIs ($vnis), no BGP instance or VNI for vrf_$zone; left: an empty, inactive 'vrf vrf_$zone' (frr-reload.py never deletes one)"
      else echo "ok   $n: FRR has none of $name's VNIs ($vnis) and no vrf_$zone"; fi
    done
  done < "$LAB_DIR/destroyed"
  return $fail
}

# check_envelope: issue 35's kernel-level proof (docs/adr/0014-tenant-envelope.md, decisions 2 and
# 3), after the shipped playbooks converged two tenants: the hog (the tenant of LAB_DIR/vms' first
# VM, tdemo) and the other (the next tenant there, tother). Every name, size and limit is read back:
# the storages (vgname, thinpool) and VM configs (the disk volume and its size) from pvesim, the
# envelope from the attachment files onboarding wrote. In the guest (guest/envelope.sh):
#   disk    the node's VG on a loop device over a file in the guest's RAM, a real LVM thin pool per
#           tenant (LAB_ENVELOPE_POOL_MIB, 96: far smaller than the 256 GiB pvesim is told, the
#           guest has LAB_MEM of RAM), each tenant's volume a thin LV of its declared virtual size;
#           the hog writes until its pool is full (its write must fail), the other writes a pattern
#           meanwhile and afterwards and reads it back (no error, sha256 equal).
#   memory  on the hog VM's node, a process standing for its QEMU (pid in a run dir) placed by the
#           shipped guard (envelope_guard place VMID, through pvesim's pvesh forwarded to the node),
#           then allocating 256 MiB more than the larger of the envelope's memory and the slice's
#           memory.max: it must be OOM-killed in tenant-<hog>.slice (memory.events oom_kill), no
#           global OOM, a bystander on the node alive; the slice's memory.max must be the hog's share
#           on its node (the envelope less what pvesim says the hog's VMs running on other nodes are
#           configured with, at least what runs on its node), not the whole envelope, plus QEMU's own
#           memory for each of the hog's VMs running there (internal/guard QEMUOverheadMiB).
#   ping    from the other tenant's first VM to its second (or its gateway), the whole check, 0% loss.
# LAB_ENVELOPE_CONTROL (the controls, run by hand; each must FAIL): shared-pool (both LVs in the
# hog's pool: the other's writes fail), unplaced (the hog not placed: nothing kills it in the slice).
check_envelope() {
  local fail=0 d=$LAB_DIR/envelope g=/run/lab/envelope ctl=${LAB_ENVELOPE_CONTROL:-} t
  t=$(date +%s%N)
  case $ctl in ''|shared-pool|unplaced) ;; *) echo "FAIL envelope: LAB_ENVELOPE_CONTROL=$ctl: shared-pool or unplaced"; return 1;; esac
  local guard_bin=$ROOT/bin/modules/envelope_guard_linux_amd64
  [ -x "$guard_bin" ] || { echo "FAIL envelope: $guard_bin missing (make build)"; return 1; }
  rm -rf "$d"; mkdir -p "$d/bin"
  # the plan, as shell assignments: the two tenants, their storages and volumes, the hog VM and
  # its node, the ping's ends; and the guard's envelope file (ADR-0014: pool and envelope per tenant)
  PYTHONPATH=$HERE "$VENV/bin/python" - "$LAB_DIR" "$d" > "$d/plan" <<'PY' || { echo "FAIL envelope: no plan ($(tail -1 "$d/plan"))"; return 1; }
import glob, json, re, shlex, sys, yaml
from pvesimapi import Pvesim
lab, d = sys.argv[1], sys.argv[2]
p = Pvesim(lab)
att = {}
for f in sorted(glob.glob(lab + "/attachments/*.yml")):
    a = yaml.safe_load(open(f))["tenant_attachment"]
    att[a["name"]] = a
res = {r["vmid"]: r for r in p.get("/cluster/resources?type=vm")}
vms = {}  # tenant -> [(vmid, name, node, cidr, gw, storage, volume, size, pool)] in LAB_DIR/vms order
for line in open(lab + "/vms"):
    vmid, name, node, _, _, cidr, gw = line.split()[:7]
    c = p.get("/nodes/%s/qemu/%s/config" % (node, vmid))
    # the VM's first disk on a tenant's storage (the attachment's storage: tenant_vm's full clone)
    for k in sorted(c):
        if re.fullmatch(r"(scsi|virtio|sata|ide)\d+", k) and "media=cdrom" not in c[k]:
            vol = c[k].split(",")[0]
            st, volname = vol.split(":", 1)
            owner = [n for n, a in att.items() if a.get("storage") == st]
            if owner:
                size = dict(kv.split("=", 1) for kv in c[k].split(",")[1:] if "=" in kv)["size"]
                vms.setdefault(owner[0], []).append((vmid, name, node, cidr, gw, st, volname, size, res[int(vmid)]["pool"]))
                break
names = list(vms)
if len(names) < 2:
    print("two tenants with VMs on their own storage needed, found: %s" % (" ".join(names) or "none")); sys.exit(1)
hog, other = names[0], names[1]
out = {"hog": hog, "other": other}
for role, n in (("hog", hog), ("other", other)):
    s = p.get("/storage/" + vms[n][0][5])
    out[role + "_vg"], out[role + "_pool"] = s["vgname"], s["thinpool"]
    out[role + "_lv"], out[role + "_size"] = vms[n][0][6], vms[n][0][7]
    out[role + "_memory"] = att[n]["envelope"]["memory"]
    out[role + "_cores"] = att[n]["envelope"]["cores"]
out["hog_vmid"], out["hog_vm"], out["hog_node"] = vms[hog][0][0], vms[hog][0][1], vms[hog][0][2]
# the hog's share on its node, the memory.max the guard must set (internal/guard NodeShare): the
# envelope less the memory of the hog's VMs that pvesim says run on other nodes, never less than what
# runs on its node (the placed VM counted there); memory as PVE 9 writes it, default 512 MiB
def mib(c):
    return int(re.match(r"(?:current=)?(\d+)", str(c.get("memory", 512))).group(1))
# memory.max is that share plus QEMU's own memory for each VM counted here (internal/guard
# QEMUOverheadMiB: 128 MiB + its memory / 128 rounded up, + 1024 MiB with kvm: 0); keep in step
here = elsewhere = qemu = 0
for r in res.values():
    if r.get("pool") != vms[hog][0][8] or (r.get("status") != "running" and str(r["vmid"]) != out["hog_vmid"]):
        continue
    c = p.get("/nodes/%s/qemu/%s/config?current=1" % (r["node"], r["vmid"]))
    m = mib(c)
    if r["node"] == out["hog_node"] or str(r["vmid"]) == out["hog_vmid"]:
        here += m
        qemu += 128 + -(-m // 128) + (1024 if str(c.get("kvm", 1)) == "0" else 0)
    else:
        elsewhere += m
out["hog_share"] = max(att[hog]["envelope"]["memory"] - elsewhere, here, 1)
out["hog_elsewhere"], out["hog_here"], out["hog_qemu"] = elsewhere, here, qemu
o = vms[other]
out["ping_from"] = o[0][1]
out["ping_to"] = o[1][3].split("/")[0] if len(o) > 1 else o[0][4]
json.dump({"tenants": {n: {"pool": v[0][8], "envelope": att[n]["envelope"]} for n, v in vms.items()}},
          open(d + "/envelopes.json", "w"))
tok = json.load(open(lab + "/pvesim-token.json"))
env = dict(tok["pvesh_env"]); env["PVESIM_CA"] = "/run/lab/envelope/ca.pem"
out["pvesim_port"] = tok["api_port"]
with open(d + "/pvesh.env", "w") as f:
    f.write("".join("export %s=%s\n" % (k, shlex.quote(str(v))) for k, v in env.items()))
for k, v in out.items():
    print("%s=%s" % (k, shlex.quote(str(v))))
PY
  local hog other hog_vg hog_pool hog_lv hog_size hog_memory hog_cores hog_vmid hog_vm hog_node hog_share hog_elsewhere hog_here hog_qemu other_vg other_pool other_lv other_size other_memory other_cores ping_from ping_to pvesim_port
  # shellcheck disable=SC1091
  . "$d/plan"
  [ "$hog_vg" = "$other_vg" ] || { echo "FAIL envelope: $hog's storage is on VG $hog_vg, $other's on $other_vg: one node VG expected"; return 1; }
  # the guest gets the guard, pvesim's binary as pvesh (internal/pvesim/pvesh), its CA and env
  cp "$guard_bin" "$d/envelope_guard"; cp "$PVESIM" "$d/bin/pvesh"; cp "$LAB_DIR/pvesim-ca.pem" "$d/ca.pem"
  cp "$HERE/guest/envelope.sh" "$d/"
  tar -C "$d" -cf - envelope_guard bin ca.pem pvesh.env envelopes.json envelope.sh | sshl lab "rm -rf $g; mkdir -p $g && tar -C $g -xf -" \
    || { echo "FAIL envelope: the guard, pvesh and envelope.sh not copied into the guest"; return 1; }
  # the other tenant's VM answering pings through the whole check (ping's own summary at SIGINT)
  local ping
  ping=$(sshl lab "ip netns exec vm-$ping_from ping -i 0.2 -W 1 $ping_to > $g/ping.out 2>&1 < /dev/null & echo \$!" </dev/null)
  # disk: the thin pools' sizes fit the guest (LAB_MEM); the VG's file holds both pools + metadata
  local pool_mib=${LAB_ENVELOPE_POOL_MIB:-96} out
  out=$(sshl lab "$g/envelope.sh disk $g $hog_vg $(( 2 * pool_mib + 32 )) $pool_mib ${ctl:-per-tenant} $hog_pool $hog_lv $hog_size $other_pool $other_lv $other_size" 2>&1 </dev/null) \
    || { echo "FAIL envelope disk: envelope.sh disk failed:"; echo "$out" | sed 's/^/       /'; fail=1; }
  echo "$out" > "$d/disk.out"
  ev() { sed -n "s/^$1 //p" "$2" | head -1; }
  local into=$other_pool; [ "$ctl" = shared-pool ] && into=$hog_pool
  if [ "$(ev hog_exit "$d/disk.out")" != 0 ] && [ "$(ev hog_pool_data_percent "$d/disk.out")" = 100.00 ] && [ "$(ev hog_error "$d/disk.out")" != none ]; then
    echo "ok   envelope disk: $hog's $hog_lv ($hog_size virtual) in $hog_vg/$hog_pool (${pool_mib} MiB, error when full) took $(ev hog_bytes "$d/disk.out") bytes in $(ev hog_seconds "$d/disk.out"), then: $(ev hog_error "$d/disk.out"); pool data $(ev hog_pool_data_percent "$d/disk.out")%; kernel: $(ev kernel "$d/disk.out")"
  else echo "FAIL envelope disk: $hog's writes into a full $hog_vg/$hog_pool did not fail (exit $(ev hog_exit "$d/disk.out"), data $(ev hog_pool_data_percent "$d/disk.out")%, $(ev hog_error "$d/disk.out"))"; fail=1; fi
  # "meanwhile" counts: at least one MiB of the other's pattern begun while the hog's dd ran
  if [ "$(ev other_exit "$d/disk.out")" = 0 ] && [ "$(ev other_error "$d/disk.out")" = none ] && [ -n "$(ev other_sum_read "$d/disk.out")" ] \
     && [ "$(ev other_mib_during_hog "$d/disk.out")" -ge 1 ] 2>/dev/null \
     && [ "$(ev other_sum_read "$d/disk.out")" = "$(ev other_sum_written "$d/disk.out")" ] && [ "$(ev other_bytes_read "$d/disk.out")" = "$(ev other_bytes_written "$d/disk.out")" ]; then
    echo "ok   envelope disk: $other wrote $(ev other_bytes_written "$d/disk.out") bytes into $other_lv ($other_size virtual) in $hog_vg/$into, $(ev other_mib_during_hog "$d/disk.out") MiB of it begun while $hog filled its pool, the second half after it was full; all $(ev other_bytes_read "$d/disk.out") read back (second half and read-back in $(ev other_seconds "$d/disk.out")), sha256 equal, no I/O error"
  else echo "FAIL envelope disk: $other lost writes into $other_lv in $hog_vg/$into: $(ev other_error "$d/disk.out") (a pattern of $(ev other_bytes_written "$d/disk.out") bytes, $(ev other_mib_during_hog "$d/disk.out") MiB begun while $hog wrote, read back $(ev other_bytes_read "$d/disk.out") bytes, sha256 $(ev other_sum_written "$d/disk.out") -> $(ev other_sum_read "$d/disk.out"))"; fail=1; fi
  # memory: the hog's target is 256 MiB past its envelope and past the slice's memory.max (the
  # share plus QEMU's own memory of the VMs here, which may exceed the envelope), and the guest
  # must have room for it, else a hog outside the slice (the control, or a guard that did not
  # place it) hits the whole guest
  local avail hog_max=$(( hog_share + hog_qemu )) target
  target=$(( (hog_max > hog_memory ? hog_max : hog_memory) + 256 ))
  avail=$(sshl lab "awk '\$1 == \"MemAvailable:\" {print int(\$2 / 1024)}' /proc/meminfo" </dev/null)
  if [ "$(( target + 256 ))" -gt "$avail" ]; then
    echo "FAIL envelope memory: $target MiB ($hog's envelope of $hog_memory MiB or its memory.max of $hog_max MiB, + 256) does not fit the guest's $avail MiB available: the cap cannot be shown here (substrate_tenant_envelopes in lab.sh pvesim_up, LAB_MEM)"; fail=1
  else
    # the guard calls pvesim through pvesh on the node: pvesim's port forwarded into the node's
    # namespace by an ssh session of its own to the node's sshd, for as long as the hog runs
    out=$(ssh -F "$LAB_DIR/ssh_config" -o ControlMaster=no -o ControlPath=none -o ExitOnForwardFailure=yes \
        -R "127.0.0.1:$pvesim_port:127.0.0.1:$pvesim_port" "$hog_node" \
        "$g/envelope.sh mem $g $hog_vmid $hog $target $([ "$ctl" = unplaced ] && echo 0 || echo 1)" 2>&1 </dev/null) \
      || { echo "FAIL envelope memory: envelope.sh mem failed:"; echo "$out" | sed 's/^/       /'; fail=1; }
    echo "$out" > "$d/mem.out"
    local slice=/deevnet.slice/tenant-$hog.slice
    if [ "$(ev hog_cgroup "$d/mem.out")" = "$slice" ] && [ "$(ev memory_max "$d/mem.out")" = "$(( hog_max << 20 ))" ] \
       && [ "$(ev oom_kill "$d/mem.out")" -ge 1 ] 2>/dev/null && [ "$(ev hog_exit "$d/mem.out")" = 137 ] \
       && [ "$(ev kernel_global_oom "$d/mem.out")" = 0 ] && [ "$(ev bystander "$d/mem.out")" = alive ]; then
      echo "ok   envelope memory: $hog_vm's stand-in (VM $hog_vmid on $hog_node) placed by the guard ($(ev guard "$d/mem.out")), allocating $target MiB: killed (exit 137) in $(ev hog_seconds "$d/mem.out"); $slice memory.max $(ev memory_max "$d/mem.out") ($hog_max MiB: its share on $hog_node, $hog_share MiB: envelope $hog_memory MiB less $hog_elsewhere MiB running on other nodes, never below the $hog_here MiB running here; plus $hog_qemu MiB for QEMU itself), memory.peak $(ev memory_peak "$d/mem.out"), oom_kill $(ev oom_kill "$d/mem.out"); global OOM kills 0, a bystander on $hog_node alive; the guest had $avail MiB available before"
    else echo "FAIL envelope memory: $hog_vm's stand-in allocating $target MiB not OOM-killed in $slice: in $(ev hog_cgroup "$d/mem.out"), exit $(ev hog_exit "$d/mem.out") ($(ev hog_said "$d/mem.out")), memory.max $(ev memory_max "$d/mem.out") (want $(( hog_max << 20 )): its share $hog_share MiB, envelope $hog_memory MiB less $hog_elsewhere MiB running on other nodes, at least $hog_here MiB here, plus $hog_qemu MiB for QEMU itself), oom_kill $(ev oom_kill "$d/mem.out"), global OOM kills $(ev kernel_global_oom "$d/mem.out"), bystander $(ev bystander "$d/mem.out")"; fail=1; fi
    # CPU: cpu.max is the envelope's cores in CPUs; the guest has LAB_SMP vCPUs
    echo "info envelope cpu: $slice cpu.max $(ev cpu_max "$d/mem.out") ($hog_cores vCPUs), nr_throttled $(ev nr_throttled "$d/mem.out"): a quota of $hog_cores CPUs never binds in a guest of $(sshl lab nproc </dev/null) vCPUs, not shown here"
  fi
  local sum
  sum=$(sshl lab "kill -INT $ping; while kill -0 $ping 2>/dev/null; do sleep 0.1; done; grep -E 'packets transmitted' $g/ping.out" </dev/null)
  if [[ $sum =~ ^([0-9]+)\ packets\ transmitted,\ ([0-9]+)\ received,\ 0%\ packet\ loss ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
    echo "ok   envelope ping: $ping_from -> $ping_to through the whole check: $sum"
  else echo "FAIL envelope ping: $ping_from -> $ping_to: ${sum:-no summary}"; fail=1; fi
  sshl lab "rm -rf $g" </dev/null || true
  log "envelope check in $(ms "$t") ms"
  return $fail
}

# check_wire (docs/adr/0016-tenant-wire.md): what a tenant VM may claim on the wire, from inside the
# first VM of LAB_DIR/vms (root in it: the attacker), against another tenant's first VM (the victim),
# on the table wire_nodes loaded. Each probe runs again with the attacker's node's table removed (the
# control, which must show what the guard stops), and the table is loaded back from the file the guard
# kept. The figures, before and after, are printed with each verdict.
check_wire() {
  [ "${LAB_WIRE:-1}" = 0 ] && { echo "info wire: LAB_WIRE=0: no table loaded, nothing checked"; return 0; }
  [ -s "$LAB_DIR/vms" ] || return 0
  local fail=0 g=/run/lab/wire avmid aname anode abr acidr agw vname vcidr other t
  read -r avmid aname anode abr _ acidr agw _ < <(head -1 "$LAB_DIR/vms")
  read -r _ vname _ _ _ vcidr _ _ < <(awk -v t="${aname%-*}" '{n = $2; sub(/-[0-9]+$/, "", n)} n != t {print; exit}' "$LAB_DIR/vms")
  [ -n "${vname:-}" ] || { echo "info wire: one tenant only: no other tenant's address to forge"; return 0; }
  other=$(for spec in $NODES; do [ "${spec%%,*}" != "$anode" ] && echo "${spec%%,*}"; done | head -1)
  t=$(date +%s%N)
  sshl lab "cat > $g/wire.py" < "$HERE/guest/wire.py" || { echo "FAIL wire: wire.py not copied"; return 1; }
  local forged_cmd="ip netns exec vm-$vname nft -f - <<'NFT'
table inet wirecheck {
  counter replies {}
  chain input {
    type filter hook input priority -400; policy accept;
    ip saddr 10.20.99.1 udp sport 53 udp dport 40053 counter name replies
    ip saddr 198.51.100.1 tcp dport 40080-40082 counter name replies
  }
}
NFT
ip netns exec vm-$aname ip addr add ${vcidr%/*}/32 dev eth0
ip netns exec vm-$aname python3 $g/wire.py forge ${vcidr%/*} 10.20.99.1 198.51.100.1 >/dev/null 2>&1
ip netns exec vm-$aname ip addr del ${vcidr%/*}/32 dev eth0
sleep 1
echo replies \$(ip netns exec vm-$vname nft list counter inet wirecheck replies | awk '/packets/ {print \$2}')
echo dropped \$(ip netns exec $anode nft list counter bridge deevnet_wire forged 2>/dev/null | awk '/packets/ {print \$2}')
ip netns exec vm-$vname nft delete table inet wirecheck"
  local unguard="ip netns exec $anode nft delete table bridge deevnet_wire"
  local reguard="ip netns exec $anode nft -f $g/$anode.nft"
  local out ctl ev
  ev() { sed -n "s/^$1 //p" <<< "$2" | head -1; }
  # 1. forged source: the victim's address on the attacker's NIC, DNS to the resolver, TCP to the outside host
  out=$(sshl lab "$forged_cmd" 2>&1 </dev/null)
  ctl=$(sshl lab "$unguard; $forged_cmd; $reguard" 2>&1 </dev/null)
  if [ "$(ev replies "$out")" = 0 ] && [ "$(ev replies "$ctl")" -gt 0 ] 2>/dev/null; then
    echo "ok   wire forged source: $aname sent 3 DNS queries to 10.20.99.1 and 3 TCP connects to 198.51.100.1 from $vname's ${vcidr%/*}: 0 replies reached $vname (its node dropped them: forged counter $(ev dropped "$out")); control, $anode's table removed: $(ev replies "$ctl") replies delivered to $vname"
  else echo "FAIL wire forged source: replies at $vname: $(ev replies "$out") guarded (want 0), $(ev replies "$ctl") without the table (want > 0): $out / $ctl"; fail=1; fi
  # 2. the MAC flood: the attacker's VNet bridge and VXLAN FDB on both nodes, and bgpd's EVPN prefixes
  local tables="echo fdb \$(bridge fdb show br $abr | wc -l); echo vxlan \$(bridge fdb show dev vxlan_$abr | wc -l); echo pfx \$(vtysh -c 'show bgp l2vpn evpn summary json' | python3 -c 'import json,sys
def walk(o):
    if isinstance(o, dict):
        return sum(v if k == \"pfxRcd\" and isinstance(v, int) else walk(v) for k, v in o.items())
    return 0
print(walk(json.load(sys.stdin)))')"
  local flood="ip netns exec vm-$aname python3 $g/wire.py flood" a0 a1 o0 o1 a2 a3 o2 o3
  a0=$(sshl "$anode" "$tables" </dev/null); o0=$(sshl "$other" "$tables" </dev/null)
  sshl lab "$flood 10000 ${acidr%/*} $agw" >/dev/null </dev/null
  sleep 5
  a1=$(sshl "$anode" "$tables" </dev/null); o1=$(sshl "$other" "$tables" </dev/null)
  # the control: 300 frames without the table, then the attacker's port's learnt entries flushed
  a2=$(sshl "$anode" "$tables" </dev/null); o2=$(sshl "$other" "$tables" </dev/null)
  sshl lab "$unguard; $flood 300 ${acidr%/*} $agw >/dev/null; sleep 5; $reguard" </dev/null
  a3=$(sshl "$anode" "$tables" </dev/null); o3=$(sshl "$other" "$tables" </dev/null)
  sshl "$anode" "bridge fdb flush dev $abr brport tap${avmid}i0 dynamic 2>/dev/null || { ip link set tap${avmid}i0 down; ip link set tap${avmid}i0 up; }" </dev/null || true
  if [ "$(ev fdb "$a1")" -le "$(ev fdb "$a0")" ] && [ "$(ev vxlan "$o1")" -le "$(ev vxlan "$o0")" ] && [ "$(ev pfx "$o1")" -le "$(ev pfx "$o0")" ] \
     && [ $(( $(ev fdb "$a3") - $(ev fdb "$a2") )) -ge 250 ]; then
    echo "ok   wire MAC flood: $aname sent 10000 frames from new source MACs: $anode's $abr FDB $(ev fdb "$a0") -> $(ev fdb "$a1") entries, $other's vxlan_$abr FDB $(ev vxlan "$o0") -> $(ev vxlan "$o1"), $other's bgpd EVPN prefixes received $(ev pfx "$o0") -> $(ev pfx "$o1") (bound: one MAC and one address per admitted NIC); control, 300 frames without the table: $abr FDB $(ev fdb "$a2") -> $(ev fdb "$a3"), $other's vxlan_$abr FDB $(ev vxlan "$o2") -> $(ev vxlan "$o3"), its bgpd's prefixes $(ev pfx "$o2") -> $(ev pfx "$o3")"
  else echo "FAIL wire MAC flood: guarded $anode $abr FDB $(ev fdb "$a0") -> $(ev fdb "$a1"), $other vxlan FDB $(ev vxlan "$o0") -> $(ev vxlan "$o1"), pfx $(ev pfx "$o0") -> $(ev pfx "$o1"); control $(ev fdb "$a2") -> $(ev fdb "$a3") (want +250 or more)"; fail=1; fi
  # 3. bandwidth: the attacker's bulk UDP to the outside host held at its tenant's rate, the victim's
  # ping to the outside host meanwhile without loss; the control without the table
  local bw blast
  bw=$("$VENV/bin/python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["tenant_attachment"].get("usage_limits", {}).get("bandwidth", 0))' "$LAB_DIR/attachments/${aname%-*}.yml")
  blast="(ip netns exec outside python3 $g/wire.py sink 5001 7 2 > $g/sink.out 2>&1 &) ; sleep 0.5;
    (ip netns exec vm-$vname ping -n -q -c 60 -i 0.1 -W 1 198.51.100.1 > $g/vping.out 2>&1 &) ;
    ip netns exec vm-$aname python3 $g/wire.py blast 198.51.100.1 5001 7; sleep 2;
    echo \$(cat $g/sink.out); echo vping \$(grep -o '[0-9]* received' $g/vping.out) \$(grep -o '[0-9.]*% packet loss' $g/vping.out)"
  out=$(sshl lab "$blast" 2>&1 </dev/null)
  ctl=$(sshl lab "$unguard; $blast; $reguard" 2>&1 </dev/null)
  local got free
  got=$(ev mbps "$out"); free=$(ev mbps "$ctl")
  if [ "$bw" -gt 0 ] && awk -v g="$got" -v b="$bw" -v f="$free" 'BEGIN { exit !(g <= b * 1.25 && g >= b * 0.5 && f >= b * 2) }' && grep -q ' 0% packet loss' <<< "$(ev vping "$out")"; then
    echo "ok   wire bandwidth: $aname's bulk UDP to 198.51.100.1 received at $got Mbit/s under ${aname%-*}'s $bw Mbit/s (after the first 2 s: the kernel's bucket holds one second of the rate); $vname's ping to 198.51.100.1 meanwhile: $(ev vping "$out"); control without the table: $free Mbit/s"
  else echo "FAIL wire bandwidth: $got Mbit/s under $bw (want within -50%..+25%), $free Mbit/s without the table (want 2x or more), $vname's ping: $(ev vping "$out")"; fail=1; fi
  # 4. a NIC hotplugged into the attacker's VM: a port the guard has not admitted sends nothing
  local hot="tap${avmid}i7" d0 d1 r hotip
  # an address of the attacker's own subnet, no VM's: only the port is new
  hotip=$("$VENV/bin/python" -c 'import ipaddress, sys; n = ipaddress.ip_interface(sys.argv[1]).network; print("%s/%d" % (list(n.hosts())[-2], n.prefixlen))' "$acidr")
  d0=$(sshl lab "ip netns exec $anode nft list counter bridge deevnet_wire forged | awk '/packets/ {print \$2}'" </dev/null)
  r=$(sshl lab "ip netns add vm-wirehot; ip link add $hot netns $anode type veth peer name eth0 netns vm-wirehot
    ip -n $anode link set $hot master $abr up; ip -n vm-wirehot link set eth0 address 02:00:00:00:77:01 up
    ip -n vm-wirehot addr add $hotip dev eth0
    ip netns exec vm-wirehot ping -n -q -c 3 -i 0.2 -W 1 $agw | grep -o '[0-9]* received'; ip netns del vm-wirehot" 2>&1 </dev/null)
  d1=$(sshl lab "ip netns exec $anode nft list counter bridge deevnet_wire forged | awk '/packets/ {print \$2}'" </dev/null)
  if [ "$r" = "0 received" ] && [ $((d1 - d0)) -ge 3 ]; then
    echo "ok   wire hotplug: a new port $hot on $abr ($aname's node $anode) before the guard admitted it: its pings to $agw $r, $((d1 - d0)) frames dropped at the port"
  else echo "FAIL wire hotplug: $hot before admission: '$r', dropped $((d1 - d0))"; fail=1; fi
  log "wire check in $(ms "$t") ms"
  return $fail
}

# timed CHECK: run check_CHECK, its time on stderr (where the checks' time goes, issue 36)
timed() { local t r=0; t=$(date +%s%N); "check_$1" || r=$?; log "check_$1 in $(ms "$t") ms"; return $r; }

check() {
  need_lab
  local t rc=0; t=$(date +%s%N)
  timed box || rc=1
  timed fabric || rc=1
  timed frrconf || rc=1
  timed destroyed || rc=1
  timed tenants || rc=1
  timed l2vni || rc=1
  timed l3vni || rc=1
  timed egress || rc=1
  timed dns || rc=1
  timed isolation || rc=1
  # LAB_PROBES=0: not the sweep (minutes under TCG; the molecule scenario runs it in its first verify only)
  [ "${LAB_PROBES:-1}" = 0 ] || timed probes || rc=1
  # LAB_ENVELOPE=0: not the envelope's kernel-level proof (it needs tdemo's small envelope; the
  # molecule scenario runs it in its first verify only)
  [ "${LAB_ENVELOPE:-1}" = 0 ] || timed envelope || rc=1
  # LAB_WIRE_CHECK=0: not the wire's probes (the molecule scenario runs them in its first verify only)
  [ "${LAB_WIRE_CHECK:-1}" = 0 ] || timed wire || rc=1
  log "checks in $(ms $t) ms"
  return $rc
}

# state: what a failed run needs to be read from a CI page's last lines, a few per node: the VTEP
# loopback's addresses, the EVPN sessions and BFD peers, the FRR daemons that answer, the last lines
# of the node's reload.sh log; and the last lines of the guest's console with a warning or an error.
state() {
  local spec n
  for spec in $NODES; do
    n=${spec%%,*}
    sshl "$n" "ip -br addr show dev dummy_ufab 2>&1 | sed 's/^/addr /'
      vtysh -c 'show bgp l2vpn evpn summary' 2>&1 | grep -E '^[0-9]+\.|\(' | sed 's/^/bgp /'
      vtysh -c 'show bfd peers brief' 2>&1 | grep -E ' (up|down|init) ' | sed 's/^/bfd /'
      vtysh -c 'show daemons' 2>&1 | sed 's/^/daemons /'" 2>&1 | sed "s/^/lab: state $n: /" | cut -c1-300
    [ -f "$LAB_DIR/reload-$n.log" ] && tail -n 3 "$LAB_DIR/reload-$n.log" | sed "s/^/lab: state $n reload.sh: /" | cut -c1-300
  done
  grep -a -i -E 'warn|error|fail|lockup' "$LAB_DIR/console.log" 2>/dev/null | tail -n 3 | sed 's/^/lab: state console: /' | cut -c1-300
  true
}

alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$st" ] && [ "${st:0:1}" != Z ]; }

down() {
  # also a lab whose boot failed half way (no ssh_config yet)
  [ -n "${LAB_DIR:-}" ] && [ -d "$LAB_DIR" ] || { echo "lab: LAB_DIR not set or gone" >&2; exit 2; }
  if [ -f "$LAB_DIR/pvesim.pid" ]; then
    local p; p=$(cat "$LAB_DIR/pvesim.pid")
    kill "$p" 2>/dev/null || true
    for _ in $(seq 1 100); do alive "$p" || break; sleep 0.05; done
  fi
  [ -f "$LAB_DIR/tunnel.pid" ] && kill "$(cat "$LAB_DIR/tunnel.pid")" 2>/dev/null || true
  [ -d "$LAB_DIR/dns" ] && DNS_LAB_DIR=$LAB_DIR/dns "$ROOT/scripts/dns-lab.sh" down >/dev/null 2>&1 || true
  if [ -f "$LAB_DIR/qemu.pid" ]; then
    local pid; pid=$(cat "$LAB_DIR/qemu.pid")
    sshl lab 'echo o > /proc/sysrq-trigger' 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill "$pid" 2>/dev/null || true
  fi
  # LAB_LOGS_KEEP=DIR: the lab's logs (ansible's, with each task's start time; the drills') kept there
  if [ -n "${LAB_LOGS_KEEP:-}" ]; then mkdir -p "$LAB_LOGS_KEEP" && cp "$LAB_DIR"/*.log "$LAB_LOGS_KEEP"/ 2>/dev/null || true; fi
  rm -rf "$LAB_DIR"
}

case ${1:-} in
  up) up;;
  # the steps of up, for molecule (extensions/molecule/lab), the demo and phase 2 (LAB_DIR set)
  boot) boot; echo "LAB_DIR=$LAB_DIR";;
  converge) need_lab; converge;;
  check) check;;
  state) need_lab; state;;
  wipe) need_lab; wipe;;
  down) down;;
  # LAB_DESTROY=FILE: after the checks, destroy that tenant (the shipped playbook) and check again:
  # it is gone from every node, and every check of the tenants left still passes
  # down also when up fails half way (up sets LAB_DIR in this shell before it boots anything)
  # the envelope's proof (check_envelope) in the first check only: it needs both tenants of the start
  test) trap '[ -z "${LAB_DIR:-}" ] || down' EXIT; up >/dev/null; rc=0; check || rc=1; export LAB_ENVELOPE=0 LAB_WIRE_CHECK=0
    # the index is released only when another tenant is to take it (the registry keeps it by default)
    if [ -n "${LAB_DESTROY:-}" ]; then destroy_tenant "$LAB_DESTROY" ${LAB_REUSE:+-e tenant_release_index=true}; check || rc=1; fi
    if [ -n "${LAB_REUSE:-}" ]; then reuse_tenant "$LAB_REUSE"; check || rc=1; fi
    exit $rc;;
  destroy) shift; need_lab; destroy_tenant "$@";;
  reuse) shift; need_lab; reuse_tenant "$1";;
  resolver-reload) need_lab; resolver_reload;;
  resolver-up) need_lab; resolver_up;;
  only) shift; need_lab; rc=0; for c in "$@"; do "check_$c" || rc=1; done; exit $rc;;
  playbook) shift; need_lab; playbook "$@";;
  tenants) need_lab; tenants;;
  vms) need_lab; vms;;
  corosync-line) need_lab; corosync_line "$2";;
  ssh) shift; need_lab; h=${1:-lab}; shift || true; sshl "$h" "$@";;
  *) sed -n '2,34p' "$0"; exit 2;;
esac
