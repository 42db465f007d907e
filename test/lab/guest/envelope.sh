#!/usr/bin/env bash
# envelope.sh (inside the lab guest; lab.sh check_envelope copies it in with the binaries it needs
# and passes every name, size and limit, read back from pvesim and the attachment files):
#
#   envelope.sh disk DIR VG PV_MIB POOL_MIB MODE HOG_POOL HOG_LV HOG_SIZE OTHER_POOL OTHER_LV OTHER_SIZE
#     in the guest's root: VG on a loop device over a file in RAM (DIR, tmpfs), a real LVM thin pool
#     per tenant of POOL_MIB (--errorwhenfull y) with each tenant's thin LV of its declared virtual
#     size; the hog tenant's LV is written until its pool is full while the other writes a pattern
#     into its own and reads it back. MODE shared-pool (the control): both LVs in HOG_POOL.
#     Prints "key value" lines; removes the VG, the loop device and the file on exit.
#   envelope.sh mem DIR VMID TENANT TARGET_MIB PLACE
#     on the hog's node (its network namespace, through its sshd): a process standing for VM
#     VMID's QEMU (its pid in DIR/run/VMID.pid), placed by the shipped guard (`envelope_guard
#     place VMID`, PLACE=1; 0 is the control: not placed), then allocating TARGET_MIB; prints
#     "key value" lines (its exit, the slice's memory.max/peak/oom_kill, a bystander's state).
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
now() { date +%s%N; }
ms() { echo $(( ($(now) - $1) / 1000000 )); }

disk() {
  # globals: the EXIT trap's cleanup reads them after disk returns
  dir=$1 vg=$2 img=$1/pv.img loop=
  local pv_mib=$3 pool_mib=$4 mode=$5 hpool=$6 hlv=$7 hsize=$8 opool=$9 olv=${10} osize=${11} t pct
  modprobe loop; modprobe dm_thin_pool
  # no udev in the guest: LVM makes its own /dev nodes and waits for no udev event; no dmeventd
  # (monitoring 0: nothing may autoextend a pool). These are lvmlocal.conf's, read after lvm.conf.
  cat > /etc/lvm/lvmlocal.conf <<'CONF'
activation {
  udev_sync = 0
  udev_rules = 0
  monitoring = 0
  thin_pool_autoextend_threshold = 100
}
devices {
  obtain_device_list_from_udev = 0
  use_devicesfile = 0
}
CONF
  cleanup() {
    vgchange -an "$vg" >/dev/null 2>&1 || true
    vgremove -ff "$vg" >/dev/null 2>&1 || true
    [ -z "$loop" ] || losetup -d "$loop" 2>/dev/null || true
    rm -f "$img" "$dir/pattern" "$dir/readback"
  }
  trap cleanup EXIT
  # a run killed half way left its VG and loop device: gone first (the same names)
  cleanup; losetup -j "$img" 2>/dev/null | cut -d: -f1 | xargs -r -n1 losetup -d
  truncate -s "${pv_mib}M" "$img"
  loop=$(losetup -f --show "$img")
  pvcreate -q "$loop" >/dev/null
  vgcreate -q "$vg" "$loop" >/dev/null
  # --errorwhenfull y (lvchange: lvcreate takes it for thin pools no more): a full pool fails the
  # write at once (dm-thin's error_if_no_space) instead of queueing it for dm_thin_pool's
  # no_space_timeout (60 s) first
  local p
  [ "$mode" = shared-pool ] && opool=$hpool
  for p in $(printf '%s\n' "$hpool" "$opool" | sort -u); do
    lvcreate -q --type thin-pool -L "${pool_mib}M" --poolmetadatasize 4M -n "$p" "$vg" >/dev/null
    lvchange -q --errorwhenfull y "$vg/$p" >/dev/null
  done
  # over-provisioned as LVM-thin allows (lvm2 only warns): each LV its declared virtual size
  lvcreate -q -V "$hsize" -T "$vg/$hpool" -n "$hlv" 2> "$dir/lvm.err" >/dev/null || { cat "$dir/lvm.err" >&2; exit 1; }
  lvcreate -q -V "$osize" -T "$vg/$opool" -n "$olv" 2>> "$dir/lvm.err" >/dev/null || { cat "$dir/lvm.err" >&2; exit 1; }
  echo "lvm_said $(grep -m1 -i 'exceeds' "$dir/lvm.err" | sed 's/^ *//' || echo nothing)"
  echo "pools $(lvs --noheadings --separator , -o lv_name,lv_size,lv_when_full,pool_lv --units b "$vg" | tr -d ' ' | tr '\n' ' ')"
  # the other tenant's pattern: half written while the hog fills its pool, half once it is full
  local half=$(( pool_mib / 4 ))
  head -c "$(( 2 * half ))M" /dev/urandom > "$dir/pattern"
  t=$(now)
  dd if=/dev/zero of="/dev/$vg/$hlv" bs=1M oflag=direct > "$dir/hog.out" 2>&1 & local hog=$!
  # the first half 1 MiB at a time, counting the pieces begun while the hog's dd still ran
  local orc=0 i=0 during=0
  : > "$dir/other1.err"
  while [ "$i" -lt "$half" ]; do
    ! kill -0 "$hog" 2>/dev/null || during=$((during + 1))
    dd if="$dir/pattern" of="/dev/$vg/$olv" bs=1M skip="$i" seek="$i" count=1 oflag=direct status=none 2>> "$dir/other1.err" || orc=1
    i=$((i + 1))
  done
  local hrc=0; wait "$hog" || hrc=$?
  echo "hog_seconds $(( $(ms "$t") ))ms"
  echo "hog_exit $hrc"
  echo "hog_bytes $(sed -n 's/^\([0-9]*\) bytes.*/\1/p' "$dir/hog.out" | tail -1)"
  echo "hog_error $(grep -m1 'error' "$dir/hog.out" || echo none)"
  pct=$(lvs --noheadings -o data_percent "$vg/$hpool" | tr -d ' ')
  echo "hog_pool_data_percent $pct"
  t=$(now)
  dd if="$dir/pattern" of="/dev/$vg/$olv" bs=1M skip="$half" seek="$half" count="$half" oflag=direct status=none 2> "$dir/other2.err" || orc=1
  dd if="/dev/$vg/$olv" of="$dir/readback" bs=1M count="$(( 2 * half ))" iflag=direct status=none 2> "$dir/other3.err" || orc=1
  echo "other_seconds $(( $(ms "$t") ))ms"
  echo "other_exit $orc"
  echo "other_mib_during_hog $during"
  echo "other_bytes_written $(( 2 * half * 1048576 ))"
  echo "other_bytes_read $(stat -c %s "$dir/readback")"
  echo "other_error $(cat "$dir/other1.err" "$dir/other2.err" "$dir/other3.err" | grep -m1 . || echo none)"
  echo "other_sum_written $(sha256sum < "$dir/pattern" | cut -c1-16)"
  echo "other_sum_read $(sha256sum < "$dir/readback" | cut -c1-16)"
  echo "other_pool_data_percent $(lvs --noheadings -o data_percent "$vg/$opool" | tr -d ' ')"
  # the kernel's own words for the full pool (dm-thin), if it logged them
  echo "kernel $(dmesg | grep -iE 'thin: .*switching pool to out-of-data-space' | tail -1 | sed 's/^\[[ 0-9.]*\] //' || true)"
}

mem() {
  local dir=$1 vmid=$2 tenant=$3 target=$4 place=$5 slice cg=/sys/fs/cgroup oom0=0 t memcg0 global0
  memcg0=$(dmesg | grep -c 'Memory cgroup out of memory' || true)
  global0=$(dmesg | grep 'Out of memory' | grep -vc 'Memory cgroup' || true)
  # `ip netns exec` gave this node a /sys of its own, without the cgroup2 mount: the same
  # hierarchy mounted again here (cgroup2 has one per cgroup namespace)
  [ -f "$cg/cgroup.controllers" ] || mount -t cgroup2 none "$cg"
  slice=$cg/deevnet.slice/tenant-$tenant.slice
  # a slice left by an earlier run (empty: its processes were killed) goes, so peak and oom_kill
  # are this run's; the guard makes it again
  [ -d "$slice" ] && { rmdir "$slice" 2>/dev/null || oom0=$(awk '$1 == "oom_kill" {print $2}' "$slice/memory.events"); }
  mkdir -p "$dir/run"; rm -f "$dir/run/$vmid.pid" "$dir/go"
  # the VM's QEMU: writes its pid where qemu-server does, waits until placed, then allocates
  # TARGET_MIB in 16 MiB pieces, each written (touched), and holds them 2 s
  sh -c 'echo $$ > "$1"; while [ ! -e "$2" ]; do sleep 0.1; done; exec python3 -c "
import sys, time
held = [b\"\\1\" * (16 << 20) for _ in range(int(sys.argv[1]) // 16)]
print(\"allocated\", 16 * len(held), flush=True)
time.sleep(2)" "$3"' sh "$dir/run/$vmid.pid" "$dir/go" "$target" > "$dir/hog.out" 2>&1 & local hog=$!
  # a bystander on the same node, outside the tenant's slice: must outlive the hog
  sleep 300 & local by=$!
  for _ in $(seq 1 50); do [ -s "$dir/run/$vmid.pid" ] && break; sleep 0.1; done
  if [ "$place" = 1 ]; then
    # shellcheck disable=SC1091
    echo "guard $(. "$dir/pvesh.env"; PATH=$dir/bin:$PATH "$dir/envelope_guard" -envelopes "$dir/envelopes.json" -run-dir "$dir/run" place "$vmid" 2>&1)"
  fi
  echo "hog_cgroup $(cut -d: -f3 "/proc/$hog/cgroup")"
  echo "memory_max $(cat "$slice/memory.max" 2>/dev/null || echo none)"
  echo "cpu_max $(cat "$slice/cpu.max" 2>/dev/null | tr ' ' /)"
  t=$(now); touch "$dir/go"
  local rc=0; wait "$hog" || rc=$?
  echo "hog_seconds $(( $(ms "$t") ))ms"
  echo "hog_exit $rc"
  echo "hog_said $(tr '\n' ' ' < "$dir/hog.out")"
  echo "memory_peak $(cat "$slice/memory.peak" 2>/dev/null || echo none)"
  echo "oom_kill $(( $(awk '$1 == "oom_kill" {print $2}' "$slice/memory.events" 2>/dev/null || echo 0) - oom0 ))"
  echo "nr_throttled $(awk '$1 == "nr_throttled" {print $2}' "$slice/cpu.stat" 2>/dev/null || echo none)"
  if kill -0 "$by" 2>/dev/null; then echo "bystander alive"; kill "$by"; else echo "bystander gone"; fi
  # the kernel's OOM killer: in a memory cgroup (the slice) or for the whole guest
  echo "kernel_memcg_oom $(( $(dmesg | grep -c 'Memory cgroup out of memory' || true) - memcg0 ))"
  echo "kernel_global_oom $(( $(dmesg | grep 'Out of memory' | grep -vc 'Memory cgroup' || true) - global0 ))"
  echo "kernel_said $(dmesg | grep -o 'Memory cgroup out of memory: Killed process [0-9]* ([a-z0-9]*)' | tail -1 || true)"
}

case ${1:-} in
  disk) shift; disk "$@";;
  mem) shift; mem "$@";;
  *) sed -n '2,15p' "$0"; exit 2;;
esac
