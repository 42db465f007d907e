#!/usr/bin/env bash
# test/guest/qemu-overhead.sh: what a VM's QEMU process takes above its guest RAM (issue 53,
# internal/guard QEMUOverheadMiB, docs/adr/0014-tenant-envelope.md decision 3). For each size, a
# qemu-system-x86_64 with the template's machine and devices as qemu-server starts a clone of 9000
# (i440fx with PVE's two PCI bridges, virtio-scsi-single scsi0 with cache=none and io_uring, the
# cloud-init CD-ROM on ide2, the guest agent's virtio-serial port, balloon, USB tablet, std VGA,
# VNC on a unix socket, a virtio-net NIC with no backend: no network at all) boots the Debian
# kernel of test/guest/kernel.sh with an init that fills a tmpfs of all its free memory; the
# guest RAM is also preallocated (-mem-prealloc), so all of it is resident. Then, from
# /proc/<pid>/status and smaps: VmRSS, RssAnon, RssFile, VmPTE, and VmRSS - RAM with and without
# TCG's code buffer (the rwx mappings: KVM has none). One line per size. Nothing is put in a
# cgroup; QEMU is stopped by its pid.
#   usage: test/guest/qemu-overhead.sh [MIB[:VCPUS] ...]   (default: 512:2 2048:2 4096:2 2048:1 2048:4)
#   env:   ACCEL=tcg (kvm where the host has it: then the rwx figure is 0)
# Needs: qemu-system-x86 busybox-static, apt sources (test/guest/kernel.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /tmp/dvt-overhead.XXXXXX)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$W"' EXIT
{ read -r KT; read -r KVER; } < <("$ROOT/test/guest/kernel.sh")
mkdir -p "$W/r/bin"
cp /bin/busybox "$W/r/bin/"
cat > "$W/r/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /fill
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
fill=$(( $(awk '/^MemAvailable:/{print int($2/1024)}' /proc/meminfo) - 48 ))
mount -t tmpfs -o size=${fill}m fill /fill
dd if=/dev/zero of=/fill/z bs=1M count=$fill 2>/dev/null
echo "FILLED $fill"
echo READY
while true; do sleep 3600; done
INIT
chmod +x "$W/r/init"
(cd "$W/r" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 > "$W/initrd.gz")
truncate -s 3G "$W/disk.raw"; truncate -s 4M "$W/ci.raw"
for spec in ${*:-512:2 2048:2 4096:2 2048:1 2048:4}; do
  m=${spec%%:*} c=${spec#*:}; [ "$c" != "$spec" ] || c=2
  rm -f "$W/console.log" "$W/pid"
  qemu-system-x86_64 -accel "${ACCEL:-tcg}" -machine pc -smp "$c,sockets=1,cores=$c" -m "$m" -mem-prealloc \
    -nodefaults -no-user-config -display none -vnc "unix:$W/vnc" -vga std -serial "file:$W/console.log" \
    -chardev "socket,id=qmp,path=$W/qmp,server=on,wait=off" -mon chardev=qmp,mode=control \
    -device pci-bridge,id=pci.1,chassis_nr=1,bus=pci.0,addr=0x1e -device pci-bridge,id=pci.2,chassis_nr=2,bus=pci.0,addr=0x1f \
    -device piix3-usb-uhci,id=uhci,bus=pci.0,addr=0x1.0x2 -device usb-tablet,id=tablet,bus=uhci.0,port=1 \
    -device virtio-balloon-pci,id=balloon0,bus=pci.0,addr=0x3 \
    -chardev "socket,path=$W/qga,server=on,wait=off,id=qga0" -device virtio-serial,id=qga0,bus=pci.0,addr=0x8 \
    -device virtserialport,chardev=qga0,name=org.qemu.guest_agent.0 \
    -drive "file=$W/ci.raw,if=none,id=drive-ide2,media=cdrom,format=raw" -device ide-cd,bus=ide.1,unit=0,drive=drive-ide2,id=ide2 \
    -device virtio-scsi-pci,id=virtioscsi0,bus=pci.1,addr=0x1 \
    -drive "file=$W/disk.raw,if=none,id=drive-scsi0,format=raw,cache=none,aio=io_uring,discard=on,detect-zeroes=unmap" \
    -device scsi-hd,bus=virtioscsi0.0,channel=0,scsi-id=0,lun=0,drive=drive-scsi0,id=scsi0 \
    -device virtio-net-pci,id=net0,bus=pci.0,addr=0x12 \
    -kernel "$KT/boot/vmlinuz-$KVER" -initrd "$W/initrd.gz" -append 'console=ttyS0 quiet panic=-1' \
    -pidfile "$W/pid" -daemonize
  pid=$(cat "$W/pid")
  for _ in $(seq 1 600); do grep -q READY "$W/console.log" 2>/dev/null && break; sleep 1; done
  grep -q READY "$W/console.log" || { echo "qemu-overhead: $m MiB: the guest did not fill its memory in 600 s" >&2; exit 1; }
  sleep 5
  s=/proc/$pid/status
  f() { awk -v k="$1:" '$1 == k {print $2}' "$s"; }
  rss=$(f VmRSS) pte=$(f VmPTE)
  rwx=$(awk '/^[0-9a-f]+-[0-9a-f]+ /{p=$2} /^Rss:/{if (p ~ /w/ && p ~ /x/) t += $2} END {print t+0}' "/proc/$pid/smaps")
  echo "qemu-overhead: ${m} MiB ${c} vCPUs (guest filled $(sed -n 's/^FILLED //p' "$W/console.log" | tr -d '\r') MiB):" \
    "VmRSS $((rss / 1024)) MiB (RssAnon $(( $(f RssAnon) / 1024 )), RssFile $(( $(f RssFile) / 1024 ))), VmPTE $((pte / 1024)) MiB;" \
    "RSS - RAM $(( rss / 1024 - m )) MiB, of it TCG's code buffer $((rwx / 1024)) MiB: $(( (rss - rwx) / 1024 - m )) MiB without it"
  kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done; pid=
done
