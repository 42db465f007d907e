# mk/perf.mk: converge speed against the peers (owner: perf, issue 17). Benchmarks only: not in make test.
#
#   make bench-tenant  tdemo (zone + VNet + subnet + SDN apply + a VM cloned, configured, started) as users run it:
#                      the shipped playbook deevnet.tenant.tenant (verify on; DNS records too) through the lifecycle
#                      lab (pvesim, PowerDNS, Unbound on 127.0.0.1), beside community.proxmox's six-task playbook (from
#                      the ansible package in .venv-bench) for the same network and VM, pvesim at BENCH_LATENCY per
#                      request, first run and no-op (the fastest of BENCH_NOOP_RUNS, 3), on the newest (.venv) and the
#                      oldest (.venv-oldest) ansible-core;
#                      then BENCH_SCALE tenants x 3 VMs in one play by the modules (the peer too for BENCH_PEER_SCALE).
#                      Wall time, tasks and the time of each, pvesim request counts (/_sim/stats), SDN applies, pvesim
#                      RSS, the ratios and the playbook's slowest tasks; results.json in BENCH_OUT.
#                      tests/bench/tenant_bench.py --help says more.
#
#   make bench-converge the shipped playbooks' own cost: onboard, fabric and tenant (tdemo) against the lifecycle
#                      lab (pvesim, PowerDNS, Unbound on 127.0.0.1), first run and no-op, on both ansible-cores:
#                      tasks, host results, wall time, pvesim requests, slowest tasks (callback dvt_profile);
#                      BENCH_REPEAT runs, the fastest kept; converge.json in BENCH_OUT. Give BENCH_COLLECTIONS
#                      'before=DIR after=DIR' to compare two installed trees interleaved (docs/dev/performance.md).
#
# The DNS counterpart is make bench-dns (mk/dns.mk).

BENCH_LATENCY    ?= 20ms
BENCH_SCALE      ?= 10,63
BENCH_PEER_SCALE ?= 10
BENCH_NOOP_RUNS  ?= 3
BENCH_OUT        ?= $(ROOT)/dist/bench

.PHONY: bench-tenant bench-converge

bench-tenant: install-collection tools venv venv-oldest venv-bench
	$(VENV_BENCH)/bin/python $(ROOT)/tests/bench/tenant_bench.py --pvesim $(ROOT)/bin/pvesim \
	  --collections $(COLLECTIONS_DIR) --core newest=$(VENV) --core oldest=$(VENV_OLDEST) \
	  --peer-venv $(VENV_BENCH) --latency $(BENCH_LATENCY) --scale '$(BENCH_SCALE)' \
	  --peer-scale '$(BENCH_PEER_SCALE)' --noop-runs $(BENCH_NOOP_RUNS) --out $(BENCH_OUT)

BENCH_REPEAT      ?= 1
BENCH_COLLECTIONS ?= $(COLLECTIONS_DIR)

bench-converge: install-collection tools venv venv-oldest
	$(VENV)/bin/python $(ROOT)/tests/bench/converge_bench.py --pvesim $(ROOT)/bin/pvesim \
	  $(foreach c,$(BENCH_COLLECTIONS),--collections $(c)) --core newest=$(VENV) --core oldest=$(VENV_OLDEST) \
	  --repeat $(BENCH_REPEAT) --out $(BENCH_OUT)

BENCH_TARGETS += bench-tenant bench-converge
