#!/usr/bin/env bash
# test/guest/kernel.sh: the Debian 13 "trixie" cloud kernel (6.12, PVE 9's base is trixie) the QEMU
# guests boot, downloaded once and cached (apt-get download + dpkg-deb -x: no postinst, nothing under
# /boot), from trixie's package lists kept apart from the machine's (scripts/debian-tree.sh apt).
# Shared by test/guest/run.sh and test/lab/lab.sh. Prints two lines: the unpacked package's
# directory and the kernel version.
#   env: FLAVOUR=cloud-amd64, XDG_CACHE_HOME
# Needs: apt sources (the mirror they name), dpkg-deb.
set -euo pipefail
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/deevnet-tenant
FLAVOUR=${FLAVOUR:-cloud-amd64}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
APT="$ROOT/scripts/debian-tree.sh apt"
mkdir -p "$CACHE"
PKG=$($APT apt-cache depends "linux-image-$FLAVOUR" | awk '/Depends: linux-image-/{print $2; exit}')
[ -n "$PKG" ] || { echo "guest: no linux-image-$FLAVOUR in the apt sources (scripts/debian-tree.sh apt apt-cache policy linux-image-$FLAVOUR)" >&2; exit 2; }
KVER=${PKG#linux-image-}
KT=$CACHE/kernel-$KVER
if [ ! -f "$KT/boot/vmlinuz-$KVER" ]; then
  # a private download directory: two runs at once must not unpack each other's half-written .deb
  D=$(mktemp -d "$CACHE/dl.XXXXXX")
  (cd "$D" && $APT apt-get download -q "$PKG" >/dev/null)
  rm -rf "$D/tree" && mkdir -p "$D/tree" && dpkg-deb -x "$D/${PKG}"_*.deb "$D/tree"
  # trixie's package is merged-/usr (usr/lib/modules); run.sh and lab.sh read KT/lib/modules
  [ -e "$D/tree/lib" ] || ln -s usr/lib "$D/tree/lib"
  if [ ! -f "$KT/boot/vmlinuz-$KVER" ]; then rm -rf "$KT" && mv "$D/tree" "$KT"; fi
  rm -rf "$D"
fi
echo "$KT"
echo "$KVER"
