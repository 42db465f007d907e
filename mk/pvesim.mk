# mk/pvesim.mk: the PVE API simulator (owner: pvesim).
#
#   make test-pvesim   PVE's own regression cases through pvesim's REST API (TestPVEConformance*,
#                      docs/pvesim.md's fidelity table checked against them), then
#                      the built bin/pvesim (ready line, CA/token files, state across a restart,
#                      clean SIGTERM exit), --help documents every flag, and a short run of each
#                      fuzz target (PVESIM_FUZZTIME, default 100000x), sdnrender's FuzzRender and
#                      FuzzFabricInterface included
#   make bench-pvesim  GET /cluster/sdn/zones and GET /nodes/N/sdn/zones requests/s on one core (-cpu 1)
#                      with 1 and 63 zones, and heap/RSS with 63 tenants x 3 VMs loaded (in-process, and the bin/pvesim binary)
#
# Everything else (schema walk, SDN/VM semantics, scoped tokens, go-proxmox client) runs
# with `go test ./...`.

# A count, not a duration: Go 1.26's fuzz coordinator can fail a duration run at its deadline with a bare
# "context deadline exceeded" and no failing input (golang/go#75804, fixed in Go 1.27; seen in CI here).
# 100000 executions take 2-17 s per target on this machine.
PVESIM_FUZZTIME ?= 100000x

.PHONY: test-pvesim bench-pvesim

test-pvesim: tools
	cd $(ROOT) && $(GO) test -count=1 -run '^TestPVEConformance' -v ./internal/pvesim
	cd $(ROOT) && PVESIM_BIN=$(ROOT)/bin/pvesim $(GO) test -count=1 -run '^TestCLI' ./cmd/pvesim
	@help=$$($(ROOT)/bin/pvesim --help 2>&1); for f in listen config ca-out token-out state seed latency task-duration insecure-http api-workers render-dir reload-command reload-timeout; do \
	  echo "$$help" | grep -q -- "-$$f" || { echo "pvesim --help does not document --$$f"; exit 1; }; done
	cd $(ROOT) && $(GO) test -run '^$$' -fuzz '^FuzzPropertyString$$' -fuzztime $(PVESIM_FUZZTIME) ./internal/pvesim
	cd $(ROOT) && $(GO) test -run '^$$' -fuzz '^FuzzRequestParams$$' -fuzztime $(PVESIM_FUZZTIME) ./internal/pvesim
	cd $(ROOT) && $(GO) test -run '^$$' -fuzz '^FuzzParsePropertyString$$' -fuzztime $(PVESIM_FUZZTIME) ./internal/pveschema
	cd $(ROOT) && $(GO) test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(PVESIM_FUZZTIME) ./internal/sdnrender
	cd $(ROOT) && $(GO) test -run '^$$' -fuzz '^FuzzFabricInterface$$' -fuzztime $(PVESIM_FUZZTIME) ./internal/sdnrender

bench-pvesim: tools
	cd $(ROOT) && $(GO) test -run '^$$' -bench '^Benchmark(ZonesList|NodeZoneStatus)$$' -cpu 1 -benchtime 3s -count=1 ./internal/pvesim
	cd $(ROOT) && PVESIM_BIN=$(ROOT)/bin/pvesim $(GO) test -run '^TestMemory' -v -count=1 ./internal/pvesim | grep -E 'RSS|^(ok|FAIL|---)'

TEST_TARGETS  += test-pvesim
BENCH_TARGETS += bench-pvesim
