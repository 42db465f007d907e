# mk/render.mk: what pvesim renders for the nodes at SDN apply, checked with the real tools
# (owner: render).
#
#   make test-render   tests/render/check.sh: the demo state (fabric + tdemo index 1 + tother
#                      index 2) rendered through the modules, then ifupdown2 (ifup --syntax-check,
#                      attribute names) and FRR 10.3 (vtysh --dryrun, frr-reload.py --test) from the
#                      Debian tree (scripts/debian-tree.sh) on each node's files, with three broken
#                      copies that must fail. Needs root (skips outside CI without it).
#
# The byte-for-byte gold tests (internal/sdnrender) and the pvesim apply/dry-run tests run with
# `go test ./...`; the renderer's fuzz target runs in test-pvesim.

.PHONY: test-render

test-render: venv
	cd $(ROOT) && PY=$(VENV)/bin/python GO=$(GO) tests/render/check.sh

TEST_TARGETS += test-render
