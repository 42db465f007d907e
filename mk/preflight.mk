# mk/preflight.mk: the read-only preflight of a real cluster (docs/preflight.md, issue 54).
#
#   make test-preflight   playbooks/preflight.yml against pvesim (tests/preflight/run.sh): the lab's
#                         cluster as it is (every check ok), then each assumption broken in turn, by
#                         pvesim's config, an admin call or the inventory: that check differs, the rest
#                         ok, the play fails after the table, and pvesim counts 0 writes every time
#
# internal/preflight's Go tests (the same breaks, module level) run with `go test ./...`.

.PHONY: test-preflight

test-preflight: install-collection tools
	$(ROOT)/tests/preflight/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR)

TEST_TARGETS += test-preflight
