# mk/docs.mk: the collection's docs site (owner: ship). antsibull-docs + Sphinx render what the
# installed tarball documents (modules, filters, roles with their argument specs, the tenant
# contract, the ADRs) to HTML, offline; the docs lint and a link check of the built site must pass.
#
#   make docs    docs/site/build.sh: dist/docs/html/index.html (see its header)

DOCS_VENV ?= $(ROOT)/.venv-docs
DOCS_OUT  ?= $(DIST_DIR)/docs

.PHONY: venv-docs docs

venv-docs: $(DOCS_VENV)/.stamp
$(DOCS_VENV)/.stamp: $(ROOT)/docs/site/requirements.txt
	@test -n "$(PYTHON_NEWEST)" || { echo 'no Python >= 3.12 found (pyenv, /usr/bin, /usr/local/bin)'; exit 1; }
	rm -rf $(DOCS_VENV)
	$(PYTHON_NEWEST) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install -q --disable-pip-version-check -r $<
	touch $@

docs: install-collection venv-docs
	cd $(ROOT) && timeout 900 docs/site/build.sh --venv $(DOCS_VENV) --collections $(COLLECTIONS_DIR) --out $(DOCS_OUT)

TEST_TARGETS += docs
