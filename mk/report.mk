# mk/report.mk: the site report (owner: report). playbooks/verify.yml writes a Markdown report per
# site (Mermaid topology + the contract's checks) read back by deevnet.tenant.substrate_report.
#
#   make test-report   scripts/demo.sh up in a private lab; the report drawn by mermaid-cli in
#                      Debian's headless Chromium (tests/report/render.sh); every tenant in the
#                      picture, no secret in it; then a stopped VM and a removed record must show in
#                      the table and the picture. PNGs kept under tests/report/out (CI artefact).

REPORT_ENV = PATH="$(VENV)/bin:$$PATH" ANSIBLE_COLLECTIONS_PATH="$(COLLECTIONS_DIR)" \
	PVESIM="$(ROOT)/bin/pvesim"

.PHONY: test-report

test-report: install-collection tools
	cd $(ROOT) && $(REPORT_ENV) timeout 900 tests/report/run.sh

TEST_TARGETS += test-report
