# mk/substrate.mk: the substrate repository's view (owner: inv). examples/substrate used as a new
# substrate repository against the lab, the contradictions it must refuse, check mode across
# onboard/fabric/tenant, and README's variable table against the substrate role's argument specs.
#
#   make test-substrate      tests/substrate/run.sh (root: namespaces; pvesim + DNS lab on 127.0.0.1)
#   make test-substrate-quorum  tests/substrate/quorum.sh: the fabric playbook's quorum rule (no PVE, ~1 min)
#   make test-substrate-doc  README "Use it from your substrate repository" == roles/substrate/meta/argument_specs.yml

.PHONY: test-substrate test-substrate-doc test-substrate-quorum

test-substrate: install-collection tools test-substrate-doc test-substrate-quorum
	cd $(ROOT) && PATH="$(VENV)/bin:$$PATH" PVESIM="$(ROOT)/bin/pvesim" \
	  timeout 1200 tests/substrate/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR)

test-substrate-quorum: install-collection
	cd $(ROOT) && tests/substrate/quorum.sh --venv $(VENV) --collections $(COLLECTIONS_DIR)

test-substrate-doc:
	cd $(ROOT) && $(VENV)/bin/python tests/substrate/readme.py --check

TEST_TARGETS += test-substrate
