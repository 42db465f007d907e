# mk/dns.mk: nsupdate_tsig (owner: dns).
#
#   make test-dns    tests/dns/playbook.yml through ansible-playbook against PowerDNS + Unbound from
#                    scripts/dns-lab.sh: check/diff, converge, a no-op second run (server counters),
#                    multi-value present from two tasks, ownership, a cross-tenant REFUSED, removal
#   make bench-dns   200 records in one zone: one nsupdate_tsig task against a loop of
#                    community.general.nsupdate tasks, same PowerDNS, wall time and DNS messages
#                    (PowerDNS statistics); .venv-bench holds ansible + dnspython for the peer
#   make dns-lab-up / dns-lab-down   the lab alone (scripts/dns-lab.sh; DNS_LAB_DIR etc. from the environment)
#
# The Go tests (internal/dnsupdate, internal/dnslab, dnsupdate module: real PowerDNS/BIND/Unbound on loopback)
# run with `go test ./...`; they skip without the servers, and fail in CI (testenv). They start the
# servers with internal/dnslab, the code scripts/dns-lab.sh runs (cmd/dnslab, built into bin/dnslab).
# Debian packages: pdns-server pdns-backend-sqlite3 sqlite3 bind9 bind9-dnsutils unbound.

VENV_BENCH ?= $(ROOT)/.venv-bench
BENCH_DNS_RECORDS ?= 200
# The same interpreter family as .venv: the collection's action plugin runs under it.
PYTHON_BENCH ?= $(shell $(ROOT)/tests/ansible/python.sh 3.12 3.99)

.PHONY: test-dns bench-dns dns-lab-up dns-lab-down venv-bench

test-dns: install-collection venv
	$(ROOT)/tests/dns/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR)

venv-bench: $(VENV_BENCH)/.stamp
$(VENV_BENCH)/.stamp: $(ROOT)/tests/dns/requirements-bench.txt $(PIP_CONSTRAINTS)
	@test -n "$(PYTHON_BENCH)" || { echo 'no Python >= 3.12 found for .venv-bench'; exit 1; }
	rm -rf $(VENV_BENCH)
	$(PYTHON_BENCH) -m venv $(VENV_BENCH)
	$(VENV_BENCH)/bin/python -m pip install -q --disable-pip-version-check -r $< -c $(PIP_CONSTRAINTS)
	touch $@

bench-dns: install-collection venv-bench
	$(ROOT)/tests/dns/bench.sh --venv $(VENV_BENCH) --collections $(COLLECTIONS_DIR) --records $(BENCH_DNS_RECORDS)

dns-lab-up:
	$(ROOT)/scripts/dns-lab.sh up
dns-lab-down:
	$(ROOT)/scripts/dns-lab.sh down

TEST_TARGETS  += test-dns
BENCH_TARGETS += bench-dns
