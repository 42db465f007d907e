# mk/plan.mk: check mode is the plan (issue 56; owner: plan).
#
#   make test-plan   tests/plan/run.sh: each step runs a shipped playbook with --check --diff, then for real,
#                    against the lifecycle lab with the envelope guard on its nodes (pvesim, PowerDNS, Unbound,
#                    the nodes' directories); a test-only callback records each task's result and the writes
#                    made while it ran (pvesim's GET /_sim/writes, the DNS objects, the lab's files), and
#                    tests/plan/compare.py fails on any write check mode did not show as a changed task naming
#                    its object, and on any change it showed that the run did not make, printing both sides.
#                    Scenarios: a new tenant (onboard, fabric, tenant), a change to it, token rotation, the takeover of
#                    Terraform's tdemo (tests/takeover; template and VM made before the guard).
#
# pvesim's write log (internal/pvesim/writelog.go) is tested with `go test ./...`.

.PHONY: test-plan

test-plan: install-collection tools
	$(ROOT)/tests/plan/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR)

TEST_TARGETS += test-plan
