#!/usr/bin/env bash
# test/guest/run.sh: run Go packages' tests inside a throw-away QEMU guest whose kernel has
# what the CI host's lacks (VRF). Debian cloud kernel (apt-get download + dpkg-deb -x, cached),
# busybox initramfs with iproute2's ip, iputils ping and nft, static `go test -c` binaries;
# QEMU TCG with -nic none (no guest networking). Every test creates its own network namespaces
# inside the guest; DEEVNET_GUEST=1 tells them a missing kernel feature is a failure there, and
# lets the tests run that change the machine's own state (cgroupslice's TestRealKernel moves a
# process between the guest's cgroups, on the cgroup2 its init mounts), which skip anywhere else.
#   usage: test/guest/run.sh [go test flags for the guest, default: -test.v]
#   env:   GUEST_PKGS  packages               (default: ./internal/route ./internal/netlab ./internal/cgroupslice)
#          GUEST_RUN   test regexp            (default: all tests)
#          GUEST_BENCH benchmark regexp       (default: none)
#          GUEST_MODS  more modules, dependencies included (default: none; brd dm_thin_pool for the guard's io.max)
#          GUEST_TOOLS more binaries at their own paths, with their libraries (default: none; /sbin/dmsetup)
#          GUEST_FILES more files, each at its own path (default: none; QEMU's firmware)
#          ACCEL=tcg|kvm, FLAVOUR=cloud-amd64, GUEST_TIMEOUT=600 (seconds), GUEST_MEM=1024 (MiB)
# Needs: qemu-system-x86 busybox-static iproute2 xz-utils (dmsetup for GUEST_TOOLS=/sbin/dmsetup), apt sources (test/guest/kernel.sh), Go.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/deevnet-tenant
ACCEL=${ACCEL:-tcg}
W=$(mktemp -d /tmp/dvt-guest.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$CACHE"
ms(){ echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# 1. kernel: the .deb unpacked, no postinst, nothing under /boot (test/guest/kernel.sh, cached)
t=$(date +%s%N)
{ read -r KT; read -r KVER; } < <("$ROOT/test/guest/kernel.sh")
[ -n "${KVER:-}" ] || exit 2
echo "guest: kernel $KVER ready in $(ms $t) ms"

# 2. static test binaries
t=$(date +%s%N)
GUEST_PKGS=${GUEST_PKGS:-./internal/route ./internal/netlab ./internal/cgroupslice}
TESTS=""
for p in $GUEST_PKGS; do
  n=$(basename "$p").test
  (cd "$ROOT" && CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -o "$W/$n" "$p")
  TESTS="$TESTS $n"
done
echo "guest: go test -c ($TESTS ) in $(ms $t) ms"

# 3. initramfs: busybox, iproute2's ip (busybox's applet cannot do VRFs), modules + dependencies
t=$(date +%s%N)
R=$W/rootfs; mkdir -p "$R"/{bin,sbin,proc,sys,dev,tmp,run,lib/modules}
cp /bin/busybox "$R/bin/"; for n in $TESTS; do cp "$W/$n" "$R/bin/"; done
# real tools in /sbin, ahead of busybox's applets on PATH (busybox ping has no -n, its ip no VRFs)
# GUEST_TOOLS at their own paths: QEMU finds its modules and firmware relative to its binary
for b in /usr/sbin/ip /usr/bin/ping /usr/sbin/nft ${GUEST_TOOLS:-}; do
  case " ${GUEST_TOOLS:-} " in *" $b "*) mkdir -p "$R$(dirname "$b")"; cp "$b" "$R$b";; *) cp "$b" "$R/sbin/";; esac
  for l in $(ldd "$b" | grep -o '/[^ ]*\.so[^ ]*'); do mkdir -p "$R$(dirname "$l")"; cp -L "$l" "$R$l"; done
done
for f in ${GUEST_FILES:-}; do mkdir -p "$R$(dirname "$f")"; cp -L "$f" "$R$f"; done
MODDIR=$KT/lib/modules/$KVER
ORDER=""
add_mod(){ # depth-first so dependencies load first; depends= read straight from the .ko
  local m=$1 f deps d ko=$R/lib/modules/$1.ko
  case " $ORDER " in *" $m "*) return;; esac
  # a module's file may spell its name with '-' (dm-thin-pool.ko.xz), its depends= with '_'
  f=$(find "$MODDIR" -name "$m.ko" -o -name "$m.ko.xz" -o -name "${m//_/-}.ko" -o -name "${m//_/-}.ko.xz" | head -1)
  [ -n "$f" ] || { echo "guest: module $m not found in $MODDIR"; exit 2; }
  # trixie's kernel ships its modules xz-compressed; busybox insmod takes a plain .ko
  case $f in
    *.ko) cp "$f" "$ko";;
    *.ko.xz) xz -dc "$f" > "$ko";;
  esac
  deps=$(tr '\0' '\n' < "$ko" | grep -a '^depends=' | head -1 | cut -d= -f2 | tr ',' ' ')
  for d in $deps; do add_mod "${d//-/_}"; done
  ORDER="$ORDER $m"
}
# veth + vrf for the routes; bridge + netfilter NAT/conntrack for netlab's perimeter
# GUEST_MODS: more modules a package's tests need (make test-wire: the bridge family's meta and limit)
for m in veth vrf bridge nf_tables nft_chain_nat nft_masq nft_ct ${GUEST_MODS:-}; do add_mod $m; done
GUEST_RUN=${GUEST_RUN:-.}
GUEST_BENCH=${GUEST_BENCH:-^\$}
ARGS=${*:--test.v}
cat > "$R/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
# cgroup2 where a PVE 9 node (systemd) has it, for cgroupslice's TestRealKernel
mount -t cgroup2 cgroup2 /sys/fs/cgroup || echo "mount cgroup2 failed"
for m in $ORDER; do insmod /lib/modules/\$m.ko || echo "insmod \$m failed"; done
export PATH=/sbin:/bin HOME=/tmp TMPDIR=/tmp DEEVNET_GUEST=1
cd /tmp
rc=0
for n in $TESTS; do echo "=== guest: \$n"; /bin/\$n $ARGS -test.run '$GUEST_RUN' -test.bench '$GUEST_BENCH' -test.timeout 10m || rc=1; done
echo "VM-EXIT=\$rc"
poweroff -f
INIT
chmod +x "$R/init"
(cd "$R" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 > "$W/initrd.gz")
echo "guest: initramfs $(du -h "$W/initrd.gz" | cut -f1) in $(ms $t) ms (modules:$ORDER)"

# 4. boot; -nic none: no network device at all; poweroff -f + -no-reboot end QEMU
t=$(date +%s%N)
timeout "${GUEST_TIMEOUT:-600}" qemu-system-x86_64 -accel "$ACCEL" -m "${GUEST_MEM:-1024}" -smp 1 -nographic -nic none -no-reboot \
  -kernel "$KT/boot/vmlinuz-$KVER" -initrd "$W/initrd.gz" -append 'console=ttyS0 quiet loglevel=1 panic=-1' </dev/null \
  | tr -d '\r' > "$W/console.log" || true
echo "guest: boot to poweroff ($ACCEL) in $(ms $t) ms"
grep -vE '^\[ *[0-9]+\.[0-9]+\]' "$W/console.log" | grep -v '^$' || true
grep -q '^VM-EXIT=0' "$W/console.log"
