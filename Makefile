# deevnet.tenant: build the Go modules, test everything, package the collection.
# `make help` lists the targets. Area fragments in mk/*.mk add their own targets and append to
# TEST_TARGETS / BENCH_TARGETS (README.md, Development).

ROOT      := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
GO        ?= go
VENV      ?= $(ROOT)/.venv
BIN_DIR   := $(ROOT)/plugins/modules
# The plain module binaries (build); plugins/modules/__bin holds them xz-compressed (see build).
RAW_BIN_DIR := $(ROOT)/bin/modules
PYTHON3   ?= python3
# Every cmd/<name> is an Ansible module except the tools tests and the demo run (the simulator, the
# DNS lab behind scripts/dns-lab.sh, the DNS quota gateway the substrate runs beside PowerDNS,
# docs/adr/0017-dns-quota.md), and the multi-call binary cmd/tenant_modules, which holds the
# controller-side modules.
TOOLS     := pvesim dnslab dnsgate
MULTICALL := tenant_modules
# Not modules: binaries the substrate installs on its nodes (envelope_guard: PVE's hookscript that
# holds each tenant to its envelope, docs/adr/0014-tenant-envelope.md).
NODE_BINARIES := envelope_guard
MODULES   := $(filter-out $(TOOLS) $(MULTICALL) $(NODE_BINARIES),$(notdir $(patsubst %/main.go,%,$(wildcard $(ROOT)/cmd/*/main.go))))
# What the collection ships per platform (docs/adr/0011-binary-selection.md): the multi-call binary
# and the modules with a binary of their own (copied to the hypervisor on every task, kept small).
STANDALONE_MODULES := transit_route
SHIPPED_BINARIES   := $(MULTICALL) $(STANDALONE_MODULES) $(NODE_BINARIES)
# Static, stripped, reproducible: the binary is copied to the target host on every task.
# nethttpomithttp2: PVE's API speaks HTTP/1.1; net/http's HTTP/2 code is 0.15 MB (gzip) per binary.
# CGO stays on for `go test -race`; the binaries are built with CGO_ENABLED=0.
# -l (no inlining) for every package, the standard library and dependencies included: a module run
# waits on the network (PVE's API, DNS, netlink) and lives for milliseconds, so inlining buys no
# measurable time (tenant_plan: about 10 ms CPU per run, at most 1 ms more without inlining), and
# it costs 12% of each binary (tenant_modules linux/amd64: 3.22 -> 2.84 MB gzip); the tarball
# budget is 12 MB for four platforms, xz-compressed (tests/manifest/check.sh; docs/adr/0011-binary-selection.md).
GOFLAGS_BUILD := -trimpath -buildvcs=false -tags=nethttpomithttp2 -gcflags='all=-l' -ldflags='-s -w -buildid='
# The tools the tests run (pvesim, the DNS lab) are servers that stay up for a whole test: inlined.
GOFLAGS_TOOLS := -trimpath -buildvcs=false -tags=nethttpomithttp2 -ldflags='-s -w -buildid='

.DEFAULT_GOAL := all
TEST_TARGETS  :=
BENCH_TARGETS :=
# The test targets that boot a QEMU guest (the lab, the guest route tests): TEST_LANES=2 runs them in
# their own lane (a name here that is not in TEST_TARGETS runs nowhere).
GUEST_TARGETS := test-lab-tenants test-lab-phase2 test-lab-drills test-route test-wire test-guard-guest
# Stage D's lab (QEMU TCG, minutes of FRR and ifupdown2 timing on a loaded machine) gets a second
# attempt when it fails; the first failure's lines are printed and the table says so
# (scripts/run-targets.sh). Not the drills: they give phase 2, their lab, a second attempt themselves
# (test/lab/drills.sh test), a second 15-minute run of the drills is not worth it, and a drill that
# fails has its table, its failed checks and the lab's state printed (LAB_DIR/drill.log).
RETRY_TARGETS := test-lab-tenants
# The targets make test's jobs (TEST_JOBS) leave to run alone afterwards: the labs, whose FRR, BFD and
# corosync timings under TCG are what a second job's load breaks. test-route boots a guest too but
# only runs internal/route's tests in it (no timing), so it is one of the jobs.
ALONE_TARGETS := test-lab-tenants test-lab-drills

# Fragments come before the rules that list their targets: make expands prerequisites as it reads.
-include $(sort $(wildcard $(ROOT)/mk/*.mk))

.PHONY: all build tools test test-go lint-go fmt bench fuzz help clean
all: build

help:
	@echo 'make build        the shipped module binaries into plugins/modules/__bin (linux/amd64, static)'
	@echo 'make tools        build bin/pvesim and bin/dnslab'
	@echo 'make test         everything CI runs: go vet, gofmt, golangci-lint, go test -race, then $$(TEST_TARGETS)'
	@echo 'make bench        go test -bench for every package, then $$(BENCH_TARGETS)'
	@echo 'make fuzz         each fuzz target for FUZZTIME (default 20s)'
	@echo 'make dist         the collection tarball in dist/ (mk/ansible.mk)'

# linux/amd64, what the hypervisor and most controllers run; `make build-all` (mk/ansible.mk) adds
# the other platforms. The action plugin runs __bin/<module>_<os>_<arch> when it exists, else
# __bin/tenant_modules_<os>_<arch> told which module to be (docs/adr/0011-binary-selection.md); a
# binary beside a .py doc stub would hide the module from ansible-doc --list, hence __bin.
# They ship xz-compressed (<binary>.xz, scripts/xz-pack.py: 10 MB for the tarball instead of 13.3 MB
# with gzip alone); the action plugin unpacks one on the controller into a cache
# (plugins/plugin_utils/binary_cache.py). The Go build writes the plain binary into $(RAW_BIN_DIR)
# and replaces it only when its bytes change, so an unchanged binary is not compressed again.
# The per-module mains cmd/<module> are for development; `go vet ./...` compiles them.
build: $(foreach b,$(SHIPPED_BINARIES),$(BIN_DIR)/__bin/$(b)_linux_amd64.xz)
	@rm -f $(foreach b,$(SHIPPED_BINARIES),$(BIN_DIR)/__bin/$(b)_linux_amd64)

# $(call go_binary,GOOS,GOARCH,CMD): the recipe of $(RAW_BIN_DIR)/<binary>_<os>_<arch>. A temporary
# file per shell ($$$$) and a rename: two makes at once (make test's TEST_LANES=2) may build the same binary.
define go_binary
@mkdir -p $(@D)
cd $(ROOT) && CGO_ENABLED=0 GOOS=$(1) GOARCH=$(2) $(GO) build $(GOFLAGS_BUILD) -o $@.tmp.$$$$ ./cmd/$(3) && \
  if cmp -s $@.tmp.$$$$ $@; then rm -f $@.tmp.$$$$; else mv -f $@.tmp.$$$$ $@; fi
endef
$(RAW_BIN_DIR)/%_linux_amd64: FORCE
	$(call go_binary,linux,amd64,$*)

$(BIN_DIR)/__bin/%.xz: $(RAW_BIN_DIR)/%
	@mkdir -p $(@D)
	$(PYTHON3) $(ROOT)/scripts/xz-pack.py $< $@

tools: $(foreach t,$(TOOLS),$(ROOT)/bin/$(t))
# Built beside and renamed over only when the bytes differ, as go_binary: make test's jobs run the
# tools while another job's make builds them again (go build -o removes the old file first).
$(foreach t,$(TOOLS),$(ROOT)/bin/$(t)): $(ROOT)/bin/%: FORCE
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_TOOLS) -o $@.tmp.$$$$ ./cmd/$* && \
	  if cmp -s $@.tmp.$$$$ $@; then rm -f $@.tmp.$$$$; else mv -f $@.tmp.$$$$ $@; fi

FORCE:

fmt:
	gofmt -w $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.venv*')

GOLANGCI_LINT ?= $(shell command -v golangci-lint 2>/dev/null || echo $(HOME)/go/bin/golangci-lint)
lint-go:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.venv*' -not -path './.cache/*')); \
	  if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...

# GORACE atexit_sleep_ms=0: a race-built binary sleeps 1 s before it exits (the race runtime's
# default), and the pvesim tests run the test binary itself as pvesh and as the envelope guard at
# every hookscript start: 119 s of internal/pvesim's 141 s were those sleeps.
test-go:
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 ./...

# Each target in turn, timed, with a table of the times at the end (scripts/run-targets.sh).
# TEST_LANES=2 runs GUEST_TARGETS (each boots a QEMU guest) in a second lane beside the rest, which
# runs niced (LANE1_NICE). One lane (the default) keeps the labs alone on the machine, as every
# green CI run had them: with two lanes, unniced (load 3-6) and niced alike (2026-12-02, two
# fresh-clone runs), phase 2's EVPN session between the nodes did not come up after the new node's
# FRR restart (test/lab/README.md, Drills).
#
# TEST_JOBS (default 2, one per core of the machines CI runs on): the targets that boot no guest run
# that many at a time first, each job with its own installed collection (install-collection empties
# its directory); then the ALONE_TARGETS one after another, alone on the machine. The jobs' targets
# share nothing else that one of them writes while another reads it: the venvs, binaries, tools,
# tarball and the Debian tree are made before they start (LANE_PREP; each target's make is then told
# not to make them again: 5-9 s a target), the tarball and the tools are replaced by
# a rename, and every test makes its own work directory, ports and namespaces. TEST_JOBS=1 runs
# every target in turn, in the order listed.
# The jobs take the targets in TEST_ORDER: the longest first, so that no long one starts last
# (2026-12-06 fresh clone, two jobs: substrate 487 s, lifecycle 276, secrets 190, ansible 187, upgrade
# 134, report 122, go 96, adversary 86, ...; test-upgrade, not in the list then, started last and
# ended 110 s after the other job).
#
# ALONE_BESIDE=1: the ALONE_TARGETS start at once, beside the jobs, which run at SCHED_IDLE
# (scripts/run-targets.sh): the labs keep the CPU they want, the jobs take what they leave. Off:
# on 2 cores it gains nothing (fresh clone, 2026-12-06 06:57-07:21): test-lab-tenants took 1375 s
# beside the jobs (about 600 alone) and test-lifecycle 557 s (232), the machine 100% busy with no
# idle and no steal: the labs leave too little to fill. For a machine with cores to spare.
TEST_LANES ?= 1
TEST_JOBS  ?= 2
ALONE_BESIDE ?= 0
TEST_LONGEST := test-substrate test-lifecycle test-secrets test-ansible test-upgrade test-report test-go \
  test-adversary test-sanity test-pvesim test-ee docs test-route test-contract test-takeover test-sdn
TEST_ORDER = $(TEST_LONGEST) $(filter-out $(TEST_LONGEST),$(TEST_TARGETS))
test:
	@TEST_LANES=$(TEST_LANES) TEST_JOBS=$(TEST_JOBS) ALONE_BESIDE=$(ALONE_BESIDE) JOB_VARS='COLLECTIONS_DIR=$(ROOT)/.ansible/collections-job%N' \
	  GUEST_TARGETS="$(GUEST_TARGETS)" ALONE_TARGETS="$(ALONE_TARGETS)" RETRY_TARGETS="$(RETRY_TARGETS)" LANE_PREP="build build-all venv venv-oldest tools collection" \
	  $(ROOT)/scripts/run-targets.sh "$(MAKE)" lint-go build $(TEST_ORDER)
	@echo 'make test: all green'

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./... $(BENCHFLAGS)
	@$(MAKE) --no-print-directory $(BENCH_TARGETS) </dev/null

FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; done

clean:
	rm -rf $(BIN_DIR)/__bin
	rm -rf $(ROOT)/bin $(ROOT)/dist

