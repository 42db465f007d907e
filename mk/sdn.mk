# mk/sdn.mk: the SDN modules (owner: sdn): pve_sdn_fabric, tenant_vrf, pve_sdn_apply.
#
#   make test-sdn    tests/sdn/playbook.yml through ansible-playbook against the pvesim CLI: fabric and
#                    tdemo's VRF, check mode + diff, one apply, zero-write second runs, a Phase 2
#                    member, every refused case, destroy
#   make bench-sdn   API requests per converge and per no-op run for 1 and 10 tenants (pvesim counters),
#                    and wall time to stage 10 tenants + one apply with 2 ms API latency
#
# The Go tests of internal/pve and internal/sdn (handler level, in-process pvesim) run with `go test ./...`.

.PHONY: test-sdn bench-sdn

test-sdn: install-collection tools
	$(ROOT)/tests/sdn/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR) --pvesim $(ROOT)/bin/pvesim

bench-sdn:
	cd $(ROOT) && $(GO) test -run '^TestRequestCounts$$' -v -count=1 ./internal/sdn | grep -E 'tenants=|^(ok|FAIL|---)'
	cd $(ROOT) && $(GO) test -run '^$$' -bench 'Converge10Tenants' -benchtime 3x -count=1 ./internal/sdn

TEST_TARGETS  += test-sdn
BENCH_TARGETS += bench-sdn
