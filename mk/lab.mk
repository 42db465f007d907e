# mk/lab.mk: the substrate in a box (owner: lab). One QEMU TCG guest booting the Debian tree of
# scripts/debian-tree.sh; two PVE nodes, switch, perimeter and hosts as namespaces inside; pvesim
# and ansible-playbook on this machine reach the nodes over ssh through a loopback-only port forward
# (test/lab/lab.sh). The nodes' network is brought up by real ifupdown2 from what the roles and
# pvesim render, FRR runs the rendered frr.conf.
#
#   make test-lab     lab.sh test: boot, wire, fabric playbook (examples/substrate as it is), checks
#                     (trunk, underlay, OpenFabric routes, BGP EVPN, BFD), down. About 6-10 min on 2
#                     TCG cores. Not in TEST_TARGETS itself: test-lab-tenants runs it all and more.
#   make test-lab-tenants   = make test-lab-molecule: stage D as the molecule scenario (one lab in CI)
#                     In TEST_TARGETS (test/lab/README.md, Measured). `LAB_TENANTS="test/lab/tenants/tdemo.yml
#                     test/lab/tenants/tother.yml" LAB_DESTROY=test/lab/tenants/tdemo.yml test/lab/lab.sh test`
#                     is the same flow without molecule (`make test-lab-stage-d`).
#   make lab-up / lab-down   keep the lab (lab-up prints LAB_DIR=...; lab-down needs it)
#   make test-lab-molecule   molecule scenario extensions/molecule/lab, stage D: create = lab.sh boot +
#                     resolver-up; converge = the shipped fabric and perimeter playbooks, onboard + tenant for
#                     tdemo (2 VNets, 3 VMs) and tother (2 VMs); idempotence (changed=0 on every host);
#                     verify = lab.sh vms + every check (box, fabric, tenants, L2VNI, L3VNI, egress with the
#                     NAT address, dig A/PTR through 10.20.99.1, isolation, the packet sweep and the vmbr0
#                     move of test/lab/probe.sh, the envelope in the kernel: check_envelope); side_effect = the destroy
#                     playbook for tdemo, index released; verify again (tdemo gone from both nodes, every
#                     tother check); side_effect_reuse = onboard + tenant for tnext at index 1; verify with
#                     tnext and tother (index reuse: test/lab/README.md); destroy
#   make test-lab-phase2     test/lab/phase2.sh: fabric with the first node only, perimeter, tdemo with its
#                     first VM; then the second node joins (fabric playbook, tdemo-1's egress flow
#                     measured meanwhile: the fabric change's loss) and tdemo is converged as
#                     declared (3 VMs, 2 VNets, one VM on the new node): tdemo's objects unchanged but
#                     the zone's nodes (+ the new node), trunks, fabric, EVPN, L2VNI, L3VNI, egress on
#                     both nodes. In CI as the first part of test-lab-drills (the earlier "vmbr0.50
#                     does not exist" was two labs sharing ansible's ssh ControlPath: test/lab/README.md).
#   make test-lab-drills     test/lab/drills.sh test: day 2 (issue 25) on phase 2's lab (its checks
#                     count; a second attempt on a fresh lab when they fail): tdemo's flows (L2VNI,
#                     L3VNI, egress; ping every 50 ms) while tother is onboarded, converged, converged
#                     with a change and destroyed and the fabric playbook runs as a no-op (lost packets
#                     and longest gap per event; 0 lost, no FRR restart); drill (a): on a converged
#                     fabric the last node fails (trunk down, FRR killed), BGP/BFD detection and EVPN
#                     withdrawal against BFD's detection time, the other node's VMs keep egress and DNS;
#                     drill (b) inside that failure: tother's change fails naming the node, then
#                     converges with the node in maintenance (substrate_maintenance); the node reboots
#                     from its disk, tother's next converge finishes, every check is green; drill (c):
#                     the registry lost and rebuilt, then the site wiped (lab.sh wipe) and rebuilt by
#                     the site playbook. Drill tables: LAB_DIR/drill.log. In TEST_TARGETS (about
#                     20 min on a quiet machine: test/lab/README.md, Drills).
#   make demo-lab / demo-lab-down   test/lab/demo.sh: the lab with tdemo, ending with a ping to tdemo-2 on the
#                     other node and a dig A and PTR of tdemo-1 through the resolver host 10.20.99.1, from
#                     inside tdemo-1; fails if either is missing (kept running; LAB_DIR=/tmp/dvt-lab-demo).
#                     3 min 43 s at load 3-5

LAB_TIMEOUT ?= 2400

TEST_TARGETS += test-lab-tenants
# phase 2 runs in CI as the first part of the drills, which keep its lab for theirs
TEST_TARGETS += test-lab-drills

# molecule runs the collection of this tree, as lab.sh playbook does (.lint-collections: a link to the root)
LAB_MOLECULE_DIR ?= /tmp/dvt-molecule-lab
LAB_MOLECULE_ENV = PATH="$(VENV)/bin:$$PATH" ANSIBLE_COLLECTIONS_PATH="$(ROOT)/.lint-collections" \
	LAB_DIR="$(LAB_MOLECULE_DIR)" PVESIM="$(ROOT)/bin/pvesim"

.PHONY: test-lab-drills test-lab test-lab-tenants test-lab-stage-d lab-up lab-down test-lab-molecule test-lab-phase2 demo-lab demo-lab-down
test-lab: build venv tools
	timeout $(LAB_TIMEOUT) $(ROOT)/test/lab/lab.sh test

# CI boots one lab for stage D: the molecule scenario (converge, idempotence, every check, destroy
# tdemo, checks again); test-lab-stage-d is the same flow through lab.sh test alone
test-lab-tenants: test-lab-molecule

test-lab-stage-d: build venv tools
	LAB_TENANTS="$(ROOT)/test/lab/tenants/tdemo.yml $(ROOT)/test/lab/tenants/tother.yml" LAB_DESTROY=$(ROOT)/test/lab/tenants/tdemo.yml \
	  LAB_REUSE=$(ROOT)/test/lab/tenants/tnext.yml timeout $(LAB_TIMEOUT) $(ROOT)/test/lab/lab.sh test

lab-up: build venv tools
	$(ROOT)/test/lab/lab.sh up

lab-down:
	$(ROOT)/test/lab/lab.sh down

test-lab-molecule: build venv tools
	rm -f $(LAB_MOLECULE_DIR).logs/state.txt
	cd $(ROOT) && $(LAB_MOLECULE_ENV) timeout $(LAB_TIMEOUT) $(VENV)/bin/molecule test -s lab \
	  || { cat $(LAB_MOLECULE_DIR).logs/state.txt 2>/dev/null; exit 1; }

test-lab-phase2: build venv tools
	timeout $(LAB_TIMEOUT) $(ROOT)/test/lab/phase2.sh

demo-lab: build venv tools
	$(ROOT)/test/lab/demo.sh up

demo-lab-down:
	$(ROOT)/test/lab/demo.sh down

# the drills: phase 2 (twice at worst), five events and three drills in one lab; bounded so that a
# hung drill still prints its table and the lab's state
LAB_DRILLS_TIMEOUT ?= 3600
test-lab-drills: build venv tools
	timeout $(LAB_DRILLS_TIMEOUT) $(ROOT)/test/lab/drills.sh test
