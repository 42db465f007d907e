# mk/lifecycle.mk: the tenant lifecycle (owner: lifecycle). Roles, playbooks and molecule
# scenarios under extensions/molecule, run with the project venv against the installed
# collection tarball, pvesim and the DNS lab on loopback.
#
#   make test-lifecycle      every molecule scenario (render, default, isolation, drill)
#   make bench-lifecycle     wall time and pvesim API requests of a full and of a no-op tdemo converge
#   make demo                scripts/demo.sh (see its header)

LIFECYCLE_SCENARIOS ?= render default isolation drill
LIFECYCLE_ENV = PATH="$(VENV)/bin:$$PATH" ANSIBLE_COLLECTIONS_PATH="$(COLLECTIONS_DIR)" \
	PVESIM="$(ROOT)/bin/pvesim"

.PHONY: test-lifecycle bench-lifecycle demo demo-down

test-lifecycle: install-collection tools
	@set -e; cd $(ROOT) && for s in $(LIFECYCLE_SCENARIOS); do \
	  echo "== molecule test -s $$s"; \
	  $(LIFECYCLE_ENV) timeout 900 $(VENV)/bin/molecule test -s $$s; \
	done

bench-lifecycle: install-collection tools
	cd $(ROOT) && $(LIFECYCLE_ENV) scripts/demo.sh bench

demo:
	cd $(ROOT) && scripts/demo.sh up

demo-down:
	cd $(ROOT) && scripts/demo.sh down

TEST_TARGETS  += test-lifecycle
BENCH_TARGETS += bench-lifecycle
