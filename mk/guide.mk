# mk/guide.mk: the first-tenant guide as a test (owner: docs). tests/guide/run.sh runs a fresh demo
# (its own DEMO_DIR and ports), then every command of docs/first-tenant.md's ```sh guide blocks as
# printed; it fails naming the doc's line of a command that does not work as printed.
#
#   make test-guide      the guide's commands against a fresh demo

.PHONY: test-guide

test-guide: venv install-collection tools
	cd $(ROOT) && ANSIBLE_COLLECTIONS_PATH="$(COLLECTIONS_DIR)" PVESIM="$(ROOT)/bin/pvesim" timeout 1200 tests/guide/run.sh

TEST_TARGETS += test-guide
