# mk/lab.mk: the substrate in a box (owner: lab). One QEMU TCG guest booting the Debian tree of
# scripts/debian-tree.sh; two PVE nodes, switch, perimeter and hosts as namespaces inside; pvesim
# and ansible-playbook on this machine reach the nodes over ssh through a loopback-only port forward
# (test/lab/lab.sh). The nodes' network is brought up by real ifupdown2 from what the roles and
# pvesim render, FRR runs the rendered frr.conf.
#
#   make test-lab     lab.sh test: boot, wire, fabric playbook (examples/substrate as it is), checks
#                     (trunk, underlay, OpenFabric routes, BGP EVPN, BFD), down. About 6-10 min on 2
#                     TCG cores. Not in TEST_TARGETS itself: test-lab-tenants runs it all and more.
#   make test-lab-tenants   the same with LAB_TENANTS="tdemo.yml tother.yml" LAB_DESTROY=tdemo.yml: perimeter
#                     playbook, resolver host (Unbound with onboarding's stub files), onboard + tenant
#                     playbooks for tdemo (2 VNets, 3 VMs) and tother (2 VMs), VM namespaces from pvesim;
#                     checks: tenants, L2VNI, L3VNI, egress with the NAT address, dig A/PTR through
#                     10.20.99.1, isolation; destroy tdemo, check it is gone, every check again. In
#                     TEST_TARGETS (test/lab/README.md, Measured).
#   make lab-up / lab-down   keep the lab (lab-up prints LAB_DIR=...; lab-down needs it)

LAB_TIMEOUT ?= 2400

TEST_TARGETS += test-lab-tenants

.PHONY: test-lab test-lab-tenants lab-up lab-down
test-lab: build venv tools
	timeout $(LAB_TIMEOUT) $(ROOT)/test/lab/lab.sh test

test-lab-tenants: build venv tools
	LAB_TENANTS="$(ROOT)/test/lab/tenants/tdemo.yml $(ROOT)/test/lab/tenants/tother.yml" LAB_DESTROY=$(ROOT)/test/lab/tenants/tdemo.yml \
	  timeout $(LAB_TIMEOUT) $(ROOT)/test/lab/lab.sh test

lab-up: build venv tools
	$(ROOT)/test/lab/lab.sh up

lab-down:
	$(ROOT)/test/lab/lab.sh down
