# mk/wire.mk: the wire (docs/adr/0016-tenant-wire.md; owner: the envelope guard). internal/wire's
# unit tests run in `go test ./...`; this adds its kernel tests, which need the bridge family's
# meta (ibrname) and limit expressions of Debian 13's kernel, inside a QEMU TCG guest
# (test/guest/run.sh): forged sources, MAC flood, hotplug and bandwidth, each with its control.
#
#   make test-wire    guest run of internal/wire's tests

WIRE_GUEST_TIMEOUT ?= 600

.PHONY: test-wire
test-wire:
	GUEST_PKGS=./internal/wire GUEST_MODS='nft_meta_bridge nft_limit' GUEST_TIMEOUT=$(WIRE_GUEST_TIMEOUT) \
	  timeout $(WIRE_GUEST_TIMEOUT) $(ROOT)/test/guest/run.sh -test.v -test.count=1

TEST_TARGETS += test-wire
