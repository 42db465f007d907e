# mk/guard.mk: the envelope guard's disk I/O cap in a real kernel (issue 53; ADR-0014 decision 3,
# "Disk I/O"). internal/cgroupslice's TestIOMaxGuest inside test/guest/run.sh's QEMU TCG guest:
# brd RAM disks, dm-linear pool data devices named as LVM names them, real dm-thin pools, io.max
# from the guard's own code; a tenant writing or reading as fast as it can is held at its rate
# while the other tenant's writes to the same RAM disk complete.
#
#   make test-guard-io    the guest run (about a minute under TCG)

GUARD_IO_GUEST_TIMEOUT ?= 600

.PHONY: test-guard-io
test-guard-io:
	GUEST_PKGS=./internal/cgroupslice GUEST_RUN='^TestIOMaxGuest$$' GUEST_MODS='brd dm_thin_pool' GUEST_TOOLS=/sbin/dmsetup \
	  GUEST_TIMEOUT=$(GUARD_IO_GUEST_TIMEOUT) timeout $(GUARD_IO_GUEST_TIMEOUT) $(ROOT)/test/guest/run.sh -test.v -test.count=1

TEST_TARGETS += test-guard-io
