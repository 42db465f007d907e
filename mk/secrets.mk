# mk/secrets.mk: no secret in any output (owner: sec, issue #11).
#
#   make test-secrets   tests/secrets/run.sh: onboard, fabric, tenant, verify and destroy against pvesim
#                       and the DNS lab at -vvv --diff with ANSIBLE_LOG_PATH set, on success and on
#                       failure paths; fails when the output or the log holds any secret the lab
#                       knows (root token, each tenant token and TSIG key, the lab's TSIG keys);
#                       and destroying tdemo must leave tother's full snapshot (tests/isolation/snapshot.py:
#                       SDN, fabric, access objects, VMs, DNS, attachment, registry; by id) unchanged.
#                       Newest and oldest ansible-core: what a module's result echoes at -vvv differs
#                       (2.18 prints the uri module's headers, 2.21 does not).

.PHONY: test-secrets

test-secrets: install-collection tools venv venv-oldest
	@rc=0; \
	$(ROOT)/tests/secrets/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR) --pvesim $(ROOT)/bin/pvesim || rc=1; \
	$(ROOT)/tests/secrets/run.sh --venv $(VENV_OLDEST) --collections $(COLLECTIONS_DIR) --pvesim $(ROOT)/bin/pvesim || rc=1; \
	exit $$rc

TEST_TARGETS += test-secrets

# make test-contract   tests/contract/playbook.yml: each rejection rule of the tenant contract
#                      (roles/tenant argument_specs + tenant_plan's contract) refuses a declaration that
#                      breaks it, naming the field; valid declarations pass. tests/contract/substrate.yml:
#                      the same for the substrate role's site and hypervisor rules (site, hypervisors,
#                      conflicts), naming the key and the host, and for the tenant declaration against the
#                      registry and its attachment (tenant_file)
.PHONY: test-contract
test-contract: install-collection
	$(ROOT)/tests/contract/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR)

TEST_TARGETS += test-contract
