# mk/adversary.mk: a tenant is an adversary (issue 24, docs/security.md; owner: adv-suite).
#
#   make test-adversary   tests/adversary/run.sh: pvesim and the DNS lab on loopback, tdemo and tother
#                         onboarded and converged by the playbooks; then, with nothing but tdemo's
#                         attachment file, tests/adversary/probe tries every call its token and TSIG
#                         key must not make (NICs on the site bridge, VLANs, trunks and the other
#                         tenant's VNet; root-only and host options; storages; the other tenant's
#                         VMs, pool and vmids; pools, ACLs, tokens, users, roles; SDN objects, lock,
#                         apply, node network; DNS updates and transfers outside its zones), each
#                         outcome exactly (status and PVE's message, rcode); and its squat of tother's
#                         vmid is named by the holding pool in tenant_vm, verify and the site report.
#                         Packets from inside the VMs: test/lab's check_isolation; the full sweep is
#                         still to do (docs/security.md, Left to do).

.PHONY: test-adversary

test-adversary: install-collection tools
	$(ROOT)/tests/adversary/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR) --pvesim $(ROOT)/bin/pvesim

TEST_TARGETS += test-adversary
