# mk/vm.mk: tenant_vm (owner: vm).
#
#   make test-vm    the playbook in tests/vm/ through ansible-playbook, against the pvesim CLI:
#                   check mode + diff, create tdemo-1, a second run with zero writes, rebuild, destroy
#   make bench-vm   wall time to converge 10 VMs with 20 ms API latency, one by one vs the pool
#
# The Go tests of internal/vm (handler level, in-process pvesim) run with `go test ./...`.

.PHONY: test-vm bench-vm

test-vm: install-collection tools
	$(ROOT)/tests/vm/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR) --pvesim $(ROOT)/bin/pvesim

bench-vm:
	cd $(ROOT) && $(GO) test -run '^TestRequestsPerVM$$' -v -count=1 ./internal/vm | grep -E 'requests|^(ok|FAIL|---)'
	cd $(ROOT) && $(GO) test -run '^$$' -bench 'Converge10VMs' -benchtime 1x -count=1 ./internal/vm

TEST_TARGETS  += test-vm
BENCH_TARGETS += bench-vm
