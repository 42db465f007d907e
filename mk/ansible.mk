# mk/ansible.mk: the Ansible side (owner: ansible). Python toolchains, the collection tarball,
# binaries for every platform, and the tests that run the collection through ansible-core.
#
#   make venv               .venv: newest ansible-core (requirements.txt) on the newest Python >= 3.12
#   make venv-oldest        .venv-oldest: the oldest ansible-core meta/runtime.yml admits (requirements-oldest.txt)
#   make build-all          plugins/modules/__bin/<binary>_<os>_<arch> for $(MODULE_PLATFORMS)
#   make collection / dist  dist/deevnet-tenant-<version>.tar.gz
#   make test-manifest      the tarball holds exactly tests/manifest/expected.txt, also with strays in the tree
#   make test-sanity        ansible-test sanity (validate-modules, pep8, pylint, ansible-doc, import, ...) on both
#   make test-release       pending changelog fragments come with a version bump in galaxy.yml; the deprecation rule
#                           against the last release; make release on a scratch copy (and its MAJOR drill)
#   make release VERSION=x.y.z  refuses a version the fragments do not allow, else bumps, changelog, tarball
#   make test-platforms     linux/arm64 binaries run under qemu-user; darwin binaries are Mach-O for their CPU
#   make install-collection the tarball installed into $(ROOT)/.ansible/collections (an empty path)
#   make test-ansible       lint, docs, unit tests, playbooks; newest and oldest ansible-core
#   make bench-ansible      100 tenant_plan tasks against 100 ping tasks, platform detection cost
#   make clean-ansible      removes the platform binaries, the tarball and the installed copy

ROOT    ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
GO      ?= go
VENV    ?= $(ROOT)/.venv
BIN_DIR ?= $(ROOT)/plugins/modules
VENV_OLDEST ?= $(ROOT)/.venv-oldest
# Every venv the project builds installs under these pins of indirect dependencies (constraints.txt).
PIP_CONSTRAINTS := $(ROOT)/constraints.txt

# ansible-core 2.21 needs Python >= 3.12; 2.18 supports 3.11 .. 3.13.
PYTHON_NEWEST ?= $(shell $(ROOT)/tests/ansible/python.sh 3.12 3.99)
PYTHON_OLDEST ?= $(shell $(ROOT)/tests/ansible/python.sh 3.11 3.13)

# Where the go_module action plugin looks (docs/adr/0011-binary-selection.md).
MODULE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
# Binaries that only ever run on a Linux hypervisor (netlink) are built for Linux only.
LINUX_ONLY_MODULES ?= transit_route
# The node binaries run on PVE nodes only, and PVE 9 is amd64 only.
platforms_of = $(if $(filter $(1),$(NODE_BINARIES)),linux/amd64,$(if $(filter $(1),$(LINUX_ONLY_MODULES)),$(filter linux/%,$(MODULE_PLATFORMS)),$(MODULE_PLATFORMS)))
PLATFORM_BIN_DIR := $(BIN_DIR)/__bin
# A module ships when it has a doc stub plugins/modules/<m>.py; its code is in the multi-call
# binary (internal/modules, whose test checks it against the stubs) or, for
# $(STANDALONE_MODULES), in a binary of its own.
ANSIBLE_MODULES ?= $(sort $(basename $(notdir $(wildcard $(BIN_DIR)/*.py))))

COLLECTION_VERSION := $(shell sed -n 's/^version: *//p' $(ROOT)/galaxy.yml)
DIST_DIR           ?= $(ROOT)/dist
COLLECTION_TARBALL := $(DIST_DIR)/deevnet-tenant-$(COLLECTION_VERSION).tar.gz
# Override both to keep a private copy when several people build in one tree.
COLLECTIONS_DIR    ?= $(ROOT)/.ansible/collections

.PHONY: venv venv-oldest build-all collection dist install-collection test-ansible test-manifest manifest-update test-sanity test-release release test-platforms bench-ansible clean-ansible

venv: $(VENV)/.stamp
venv-oldest: $(VENV_OLDEST)/.stamp

# Rebuilt from scratch when the requirements change; otherwise nothing to do (stamp file).
$(VENV)/.stamp: $(ROOT)/requirements.txt $(PIP_CONSTRAINTS)
	@test -n "$(PYTHON_NEWEST)" || { echo 'no Python >= 3.12 found (pyenv, /usr/bin, /usr/local/bin)'; exit 1; }
	rm -rf $(VENV)
	$(PYTHON_NEWEST) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -r $< -c $(PIP_CONSTRAINTS)
	touch $@

$(VENV_OLDEST)/.stamp: $(ROOT)/requirements-oldest.txt $(PIP_CONSTRAINTS)
	@test -n "$(PYTHON_OLDEST)" || { echo 'no Python 3.11 .. 3.13 found for ansible-core 2.18'; exit 1; }
	rm -rf $(VENV_OLDEST)
	$(PYTHON_OLDEST) -m venv $(VENV_OLDEST)
	$(VENV_OLDEST)/bin/python -m pip install -q --disable-pip-version-check -r $< -c $(PIP_CONSTRAINTS)
	touch $@

# $(call python_venv,DIR,REQUIREMENTS,PYTHON): the rule of a tool venv DIR (DIR/.stamp), rebuilt
# from scratch when REQUIREMENTS change (mk/ee.mk, mk/docs.mk).
define python_venv
$(1)/.stamp: $(2) $(PIP_CONSTRAINTS)
	@test -n "$(3)" || { echo 'no Python >= 3.12 found (pyenv, /usr/bin, /usr/local/bin)'; exit 1; }
	rm -rf $(1)
	$(3) -m venv $(1)
	$(1)/bin/python -m pip install -q --disable-pip-version-check -r $$< -c $(PIP_CONSTRAINTS)
	touch $$@
endef

# One static binary per shipped binary and platform, xz-compressed, under __bin: beside a .py doc
# stub a binary named as the module would hide the module from ansible-doc --list (ADR-0011). The
# plain binaries are built into $(RAW_BIN_DIR) (root Makefile).
PLATFORM_BINARIES := $(foreach b,$(SHIPPED_BINARIES),$(foreach p,$(call platforms_of,$(b)),$(PLATFORM_BIN_DIR)/$(b)_$(subst /,_,$(p)).xz))

build-all: $(PLATFORM_BINARIES)
	@test -n "$(ANSIBLE_MODULES)" || { echo 'no plugins/modules/*.py doc stubs: nothing to build'; exit 1; }
	@rm -f $(filter-out $(PLATFORM_BINARIES),$(wildcard $(PLATFORM_BIN_DIR)/*))

# One rule per binary and platform, so that `make -j` builds them in parallel; the Go build always
# runs (its cache makes an unchanged one cheap) and the .xz is made again only when the binary changed.
define platform_binary_rule
$(RAW_BIN_DIR)/$(1)_$(2)_$(3): FORCE
	$$(call go_binary,$(2),$(3),$(1))
endef
$(foreach b,$(SHIPPED_BINARIES),$(foreach p,$(call platforms_of,$(b)),\
  $(eval $(call platform_binary_rule,$(b),$(word 1,$(subst /, ,$(p))),$(word 2,$(subst /, ,$(p)))))))

# `build` is the lead's target (root Makefile): it checks every module compiles for linux/amd64.
collection: build build-all venv
	@mkdir -p $(DIST_DIR)
	@# built aside and renamed over: make test's jobs install the tarball while another job builds it
	rm -rf $(DIST_DIR)/.build.$$$$ && cd $(ROOT) && \
	  $(VENV)/bin/ansible-galaxy collection build --output-path $(DIST_DIR)/.build.$$$$ . && \
	  mv -f $(DIST_DIR)/.build.$$$$/$(notdir $(COLLECTION_TARBALL)) $(COLLECTION_TARBALL) && rmdir $(DIST_DIR)/.build.$$$$
	@ls -l $(COLLECTION_TARBALL)

dist: collection

# An empty, private collections path: the tests see the tarball and nothing else.
install-collection: collection
	rm -rf $(COLLECTIONS_DIR)
	$(VENV)/bin/ansible-galaxy collection install --force -p $(COLLECTIONS_DIR) $(COLLECTION_TARBALL)

# The tarball holds exactly tests/manifest/expected.txt; `make manifest-update` rewrites it after
# a file is deliberately added to or removed from what ships.
test-manifest: collection
	$(ROOT)/tests/manifest/check.sh --venv $(VENV) --tarball $(COLLECTION_TARBALL)
manifest-update: collection
	$(ROOT)/tests/manifest/check.sh --venv $(VENV) --tarball $(COLLECTION_TARBALL) --update

# linux/arm64 binaries under qemu-user (tenant_plan, pve_tenant_access on pvesim, nsupdate_tsig on
# the DNS lab's PowerDNS, transit_route's argument check); darwin binaries' Mach-O headers.
test-platforms: build-all tools venv
	$(ROOT)/tests/platforms/run.sh --bin-dir $(PLATFORM_BIN_DIR) --pvesim $(ROOT)/bin/pvesim --venv $(VENV)

# The version bump rule (README.md, Releasing): pending changelog fragments need a version above the last release;
# the deprecation rule (docs/releases.md): what the last release had leaves only behind its deprecation.
test-release: venv
	$(ROOT)/tests/release/check-version.sh --venv $(VENV)
	$(ROOT)/tests/release/deprecation.sh --venv $(VENV)
	$(ROOT)/tests/release/release-test.sh --venv $(VENV)

# A release (README.md, Releasing; docs/releases.md): scripts/release.sh, then commit it on main.
# A new MAJOR runs the rebuild drill first (RELEASE_DRILL, default the molecule scenario drill on pvesim).
RELEASE_DRILL ?= $(MAKE) -C $(ROOT) test-lifecycle LIFECYCLE_SCENARIOS=drill
release: venv
	RELEASE_DRILL='$(RELEASE_DRILL)' $(ROOT)/scripts/release.sh --venv $(VENV) --version '$(VERSION)'

# ansible-test sanity on newest and oldest ansible-core (tests/sanity/run.sh: offline but for PyPI).
test-sanity: venv venv-oldest
	@rc=0; \
	$(ROOT)/tests/sanity/run.sh --venv $(VENV) || rc=1; \
	$(ROOT)/tests/sanity/run.sh --venv $(VENV_OLDEST) || rc=1; \
	exit $$rc

# Both ansible-core versions run even when the first fails, so one run shows every failure.
test-ansible: install-collection venv venv-oldest
	@rc=0; \
	$(ROOT)/tests/ansible/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR) --linux-only '$(LINUX_ONLY_MODULES)' --lint || rc=1; \
	$(ROOT)/tests/ansible/run.sh --venv $(VENV_OLDEST) --collections $(COLLECTIONS_DIR) --linux-only '$(LINUX_ONLY_MODULES)' || rc=1; \
	exit $$rc

bench-ansible: install-collection venv
	$(ROOT)/tests/ansible/bench.sh --venv $(VENV) --collections $(COLLECTIONS_DIR) --tasks $(or $(BENCH_TASKS),100)

# The venvs stay: rebuilding them means downloading from PyPI again.
clean-ansible:
	rm -rf $(PLATFORM_BIN_DIR) $(COLLECTIONS_DIR) $(COLLECTION_TARBALL)

TEST_TARGETS  += test-ansible test-manifest test-sanity test-release test-platforms
BENCH_TARGETS += bench-ansible
