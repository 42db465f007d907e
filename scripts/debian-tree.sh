#!/usr/bin/env bash
# debian-tree.sh: real Debian tools without installing them on the machine. Builds (once, cached) a
# Debian 12 root filesystem with mmdebstrap holding ifupdown2, FRR (+ frr-pythontools), nftables,
# iproute2, Unbound and dig, and runs a command from it inside a private network + mount namespace.
# Used by the rendering checks (ifquery --syntax-check, vtysh --dryrun, frr-reload.py --test), the
# node-network role's tests and the substrate lab (which boots the same tree in a QEMU guest).
#
#   scripts/debian-tree.sh path              build if needed, print the tree's directory
#   scripts/debian-tree.sh run [-b SRC:DST]... -- CMD...
#                                            run CMD chrooted in the tree, in a fresh network
#                                            namespace (deleted afterwards) and a private mount
#                                            namespace; each -b bind-mounts SRC (file or directory)
#                                            read-only at DST inside the tree
#   env: DEEVNET_TREE   the tree's directory (default: $XDG_CACHE_HOME/deevnet-tenant/debian-tree)
#
# The tree is rebuilt when the package list below changes (a stamp holds its hash). No daemon ever
# starts inside it: mmdebstrap runs no init, and the tree's policy-rc.d refuses like the host's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/deevnet-tenant
TREE=${DEEVNET_TREE:-$CACHE/debian-tree}
PACKAGES=ifupdown2,bridge-utils,frr,frr-pythontools,nftables,iproute2,unbound,iputils-ping,bind9-dnsutils,kmod,mount,procps,iptables,tcpdump,netcat-openbsd,python3,openssh-server,openssh-client
STAMP="$TREE/.deevnet-tree"
want=$(printf '%s\n' "bookworm $PACKAGES" | sha256sum | cut -c1-16)

build() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then return 0; fi
  command -v mmdebstrap >/dev/null || { echo "debian-tree: mmdebstrap missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
  local sources=/etc/apt/sources.list.d/debian.sources
  [ -f "$sources" ] || sources=/etc/apt/sources.list
  rm -rf "$TREE.tmp"; mkdir -p "$(dirname "$TREE")"
  echo "debian-tree: building $TREE (about 45 s, 300 MB)" >&2
  mmdebstrap --quiet --variant=apt --include="$PACKAGES" \
    --customize-hook='printf "#!/bin/sh\nexit 101\n" > "$1/usr/sbin/policy-rc.d"; chmod 755 "$1/usr/sbin/policy-rc.d"' \
    bookworm "$TREE.tmp" "$sources" >&2
  rm -rf "$TREE"; mv "$TREE.tmp" "$TREE"
  echo "$want" > "$STAMP"
}

run() {
  local binds=() ns
  while [ $# -gt 0 ]; do
    case $1 in
      -b) binds+=("$2"); shift 2;;
      --) shift; break;;
      *) break;;
    esac
  done
  [ $# -gt 0 ] || { echo "usage: $0 run [-b SRC:DST]... -- CMD..." >&2; exit 2; }
  build
  ns=dvt-tree-$$-$RANDOM
  ip netns add "$ns"
  # shellcheck disable=SC2064
  trap "ip netns del $ns 2>/dev/null || true" EXIT
  local script='set -e; T=$1; shift; n=$1; shift
    mount -t proc proc "$T/proc"; mount -t sysfs sys "$T/sys"
    mount -t tmpfs tmpfs "$T/run"; mkdir -p "$T/run/network" "$T/run/frr"
    mount --bind /dev "$T/dev"; mount -t tmpfs tmpfs "$T/tmp"
    i=0; while [ $i -lt "$n" ]; do
      spec=$1; shift; src=${spec%%:*}; dst=$T${spec#*:}
      if [ -d "$src" ]; then mkdir -p "$dst"; else mkdir -p "$(dirname "$dst")"; [ -e "$dst" ] || : > "$dst"; fi
      mount --bind "$src" "$dst"; mount -o remount,bind,ro "$dst"; i=$((i+1))
    done
    exec chroot "$T" /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"'
  ip netns exec "$ns" unshare -m --propagation private sh -c "$script" sh "$TREE" "${#binds[@]}" "${binds[@]}" "$@"
}

case ${1:-} in
  path) build; echo "$TREE";;
  run) shift; run "$@";;
  *) echo "usage: $0 path | run [-b SRC:DST]... -- CMD..." >&2; exit 2;;
esac
