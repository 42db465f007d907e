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
#                         The exhaustion probes (issue 35, probe/exhaust.go), with the envelope guard
#                         the playbooks install: memory, vCPUs, a snippet, disk growth, the VM count
#                         and a VM made without the template, each refused at start or capped;
#                         ADVERSARY_NO_GUARD=1 is their control (they must fail).
#                         The DNS quota (issue 53, probe/quota.go, docs/adr/0017-dns-quota.md), with the
#                         DNS gateway in the lab: a 20,000-record flood refused past the quota, a
#                         delegation, DNAME, 2 KB TXT and TTL 1 refused, the resolver sending nothing
#                         to a tenant's address, bad quotas refused at onboarding.
#                         Packets from inside the VMs: the lab's sweep and vmbr0 move (test/lab/probe.sh,
#                         lab.sh check_probes), run by make test-lab-tenants' verify in the lab it boots
#                         anyway (no lab boot of its own; docs/security.md, "Packets").

.PHONY: test-adversary

test-adversary: install-collection tools
	$(ROOT)/tests/adversary/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR) --pvesim $(ROOT)/bin/pvesim

TEST_TARGETS += test-adversary
