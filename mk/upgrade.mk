# mk/upgrade.mk: upgrading a converged site (owner: release). docs/releases.md, "What a converged
# site looks like".
#
#   make test-upgrade   the previous release's commit (tests/upgrade/run.sh: its rule) in a git
#                       worktree, its tarball built and installed; tdemo and tother converged with it
#                       on pvesim and the DNS lab, then this tree's onboard, fabric, tenant and verify
#                       playbooks and tdemo's own repository on the same state: no PVE write, no DNS
#                       change, no VM restarted, the same site report, but for the writes
#                       tests/upgrade/expected-writes.yml lists with their changelog entry.

.PHONY: test-upgrade

test-upgrade: collection tools venv
	$(ROOT)/tests/upgrade/run.sh --venv $(VENV) --pvesim $(ROOT)/bin/pvesim --tarball $(COLLECTION_TARBALL)

TEST_TARGETS += test-upgrade
