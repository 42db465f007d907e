#!/usr/bin/env bash
# test/guest/kernel.sh: the Debian cloud kernel the QEMU guests boot, downloaded once and cached
# (apt-get download + dpkg-deb -x: no postinst, nothing under /boot). Shared by test/guest/run.sh
# and test/lab/lab.sh. Prints two lines: the unpacked package's directory and the kernel version.
#   env: FLAVOUR=cloud-amd64, XDG_CACHE_HOME
# Needs: apt sources (apt-get download), dpkg-deb.
set -euo pipefail
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/deevnet-tenant
FLAVOUR=${FLAVOUR:-cloud-amd64}
mkdir -p "$CACHE"
PKG=$(apt-cache depends "linux-image-$FLAVOUR" | awk '/Depends: linux-image-/{print $2; exit}')
[ -n "$PKG" ] || { echo "guest: no linux-image-$FLAVOUR in the apt sources (run apt-get update)" >&2; exit 2; }
KVER=${PKG#linux-image-}
KT=$CACHE/kernel-$KVER
if [ ! -f "$KT/boot/vmlinuz-$KVER" ]; then
  # a private download directory: two runs at once must not unpack each other's half-written .deb
  D=$(mktemp -d "$CACHE/dl.XXXXXX"); chmod 755 "$D"  # apt downloads as _apt
  (cd "$D" && apt-get download -q "$PKG" >/dev/null)
  rm -rf "$D/tree" && mkdir -p "$D/tree" && dpkg-deb -x "$D/${PKG}"_*.deb "$D/tree"
  if [ ! -f "$KT/boot/vmlinuz-$KVER" ]; then rm -rf "$KT" && mv "$D/tree" "$KT"; fi
  rm -rf "$D"
fi
echo "$KT"
echo "$KVER"
