# mk/guard.mk: the envelope guard's kernel limits in a real kernel (issue 53; ADR-0014 decision 3,
# "QEMU's own memory" and "Disk I/O"), inside test/guest/run.sh's QEMU TCG guest:
#   internal/cgroupslice TestIOMaxGuest: brd RAM disks, dm-linear pool data devices named as LVM
#     names them, real dm-thin pools, io.max from the guard's own code; a tenant writing or reading
#     as fast as it can is held at its rate while the other tenant's writes to the same RAM disk
#     complete.
#   internal/guard TestQEMUMemoryGuest: a real qemu-system-x86_64 with the template's devices and
#     its RAM preallocated runs in a tenant's group under memory.max = RAM + QEMUOverheadMiB, and
#     is OOM-killed there under its RAM alone.
#
#   make test-guard-guest    the guest run (about a minute and a half under TCG)

GUARD_GUEST_TIMEOUT ?= 600
# QEMU's firmware for the inner QEMU (Debian's qemu-system-x86 paths, searched as compiled in)
GUARD_GUEST_FILES ?= /usr/share/seabios/bios-256k.bin /usr/share/seabios/vgabios-stdvga.bin \
  /usr/lib/ipxe/qemu/efi-virtio.rom /usr/share/qemu/kvmvapic.bin /usr/share/qemu/keymaps/en-us \
  /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so

.PHONY: test-guard-guest
test-guard-guest:
	GUEST_PKGS='./internal/cgroupslice ./internal/guard' GUEST_RUN='^(TestIOMaxGuest|TestQEMUMemoryGuest)$$' \
	  GUEST_MODS='brd dm_thin_pool' GUEST_TOOLS='/sbin/dmsetup /usr/bin/qemu-system-x86_64' GUEST_FILES='$(GUARD_GUEST_FILES)' \
	  GUEST_MEM=2048 GUEST_TIMEOUT=$(GUARD_GUEST_TIMEOUT) timeout $(GUARD_GUEST_TIMEOUT) $(ROOT)/test/guest/run.sh -test.v -test.count=1

TEST_TARGETS += test-guard-guest
