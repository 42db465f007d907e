# mk/docs.mk: the collection's docs site (owner: ship). antsibull-docs + Sphinx render what the
# installed tarball documents (modules, filters, roles with their argument specs, the tenant
# contract, the ADRs) to HTML, offline; the docs lint and a link check of the built site must pass.
#
#   make docs    docs/site/build.sh: dist/docs/html/index.html (see its header)

DOCS_VENV ?= $(ROOT)/.venv-docs
DOCS_OUT  ?= $(DIST_DIR)/docs

.PHONY: venv-docs docs

venv-docs: $(DOCS_VENV)/.stamp
$(eval $(call python_venv,$(DOCS_VENV),$(ROOT)/docs/site/requirements.txt,$(PYTHON_NEWEST)))

docs: install-collection venv-docs
	cd $(ROOT) && timeout 900 docs/site/build.sh --venv $(DOCS_VENV) --collections $(COLLECTIONS_DIR) --out $(DOCS_OUT)

TEST_TARGETS += docs
