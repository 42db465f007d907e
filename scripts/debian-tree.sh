#!/usr/bin/env bash
# debian-tree.sh: real Debian tools without installing them on the machine. Builds (once, cached) a
# Debian 13 "trixie" root filesystem (PVE 9's base: FRR 10, ifupdown2 3.0.0) with mmdebstrap holding
# ifupdown2, FRR (+ frr-pythontools), nftables, iproute2, Unbound, dig and lvm2 with
# thin-provisioning-tools (the lab's thin pools: activation runs thin_check), and runs a command from it
# inside a private network + mount namespace. The machine itself may be Debian 12: trixie comes from
# the same mirror its apt sources name (their suites renamed), through apt's own signature checks.
# Used by the rendering checks (ifquery --syntax-check, vtysh --dryrun, frr-reload.py --test), the
# node-network role's tests and the substrate lab (which boots the same tree in a QEMU guest).
#
#   scripts/debian-tree.sh path              build if needed, print the tree's directory
#   scripts/debian-tree.sh run [-b SRC:DST]... -- CMD...
#                                            run CMD chrooted in the tree, in a fresh network
#                                            namespace (deleted afterwards) and a private mount
#                                            namespace; each -b bind-mounts SRC (file or directory)
#                                            read-only at DST inside the tree
#   scripts/debian-tree.sh apt apt-get|apt-cache ARGS...
#                                            the machine's apt on trixie's package lists, kept apart
#                                            from the machine's own (test/guest/kernel.sh downloads
#                                            trixie's kernel with it); lists refreshed once a day
#   env: DEEVNET_TREE   the tree's directory (default: $XDG_CACHE_HOME/deevnet-tenant/debian-tree-trixie)
#
# The tree is rebuilt when the package list below changes (a stamp holds its hash). No daemon ever
# starts inside it: mmdebstrap runs no init, and the tree's policy-rc.d refuses like the host's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/deevnet-tenant
SUITE=trixie
# per suite: a tree of another suite under the same name would be rebuilt by whoever runs the other
TREE=${DEEVNET_TREE:-$CACHE/debian-tree-$SUITE}
PACKAGES=ifupdown2,bridge-utils,frr,frr-pythontools,nftables,iproute2,unbound,iputils-ping,bind9-dnsutils,kmod,mount,procps,iptables,tcpdump,netcat-openbsd,python3,openssh-server,openssh-client,lvm2,thin-provisioning-tools,corosync,corosync-qnetd,corosync-qdevice,libnss3-tools
STAMP="$TREE/.deevnet-tree"
want=$(printf '%s\n' "$SUITE $PACKAGES" | sha256sum | cut -c1-16)
APTDIR=$CACHE/apt-$SUITE

# sources: the machine's apt sources (deb822 or one-line) with Debian 12's suite names made trixie's
# (bookworm-updates -> trixie-updates, bookworm-security -> trixie-security); same mirror, same keyring
sources() {
  local src=/etc/apt/sources.list.d/debian.sources out=$APTDIR/sources
  [ -f "$src" ] || src=/etc/apt/sources.list
  mkdir -p "$APTDIR"
  case $src in *.sources) out=$out.sources;; *) out=$out.list;; esac
  sed -E "s/\b(bookworm|trixie)\b/$SUITE/g" "$src" > "$out.tmp"
  grep -qw "$SUITE" "$out.tmp" || { echo "debian-tree: no Debian suite found in $src to make $SUITE" >&2; exit 2; }
  mv "$out.tmp" "$out"
  echo "$out"
}

# apt_private CMD ARGS...: apt-get/apt-cache on trixie's lists in APTDIR, never the machine's
apt_private() {
  local cmd=$1 src; shift
  case $cmd in apt-get|apt-cache) ;; *) echo "debian-tree: apt takes apt-get or apt-cache, not $cmd" >&2; exit 2;; esac
  src=$(sources)
  mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
  local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$APTDIR/parts"
    -o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR/cache" -o "Dir::State::Status=/dev/null"
    -o "APT::Sandbox::User=root" -o "DPkg::Lock::Timeout=600")
  mkdir -p "$APTDIR/parts"; ln -sfn "$src" "$APTDIR/parts/$(basename "$src")"
  # lists older than a day: the mirror may have replaced the versions they name
  if [ -z "$(find "$APTDIR/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
    apt-get "${opts[@]}" update -qq >&2
  fi
  "$cmd" "${opts[@]}" "$@"
}

build() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then return 0; fi
  # one build at a time: two at once removed each other's $TREE.tmp, /proc mounted in it included
  mkdir -p "$CACHE"; exec 9>"$CACHE/.debian-tree-$SUITE.lock"; flock 9
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then exec 9>&-; return 0; fi
  command -v mmdebstrap >/dev/null || { echo "debian-tree: mmdebstrap missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
  local src
  src=$(sources)
  rm -rf "$TREE.tmp"; mkdir -p "$(dirname "$TREE")"
  echo "debian-tree: building $TREE (about 30 s, 330 MB)" >&2
  mmdebstrap --quiet --variant=apt --include="$PACKAGES" \
    --customize-hook='printf "#!/bin/sh\nexit 101\n" > "$1/usr/sbin/policy-rc.d"; chmod 755 "$1/usr/sbin/policy-rc.d"' \
    "$SUITE" "$TREE.tmp" "$src" >&2
  rm -rf "$TREE"; mv "$TREE.tmp" "$TREE"
  echo "$want" > "$STAMP"
  exec 9>&-
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
  apt) shift; apt_private "$@";;
  *) echo "usage: $0 path | run [-b SRC:DST]... -- CMD... | apt apt-get|apt-cache ARGS..." >&2; exit 2;;
esac
