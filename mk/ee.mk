# mk/ee.mk: the execution environment (owner: ship). AWX / Automation Platform run the collection
# in an image built by ansible-builder, its jobs by ansible-runner; containers cannot run here, so
# tests/ee/run.sh proves the build's steps and a runner job without them (see its header).
#
#   make test-ee    ansible-builder create of examples/ee/execution-environment.yml; a fresh venv
#                   doing what the image build does (PyPI, the tarball, introspect, bindep);
#                   ansible-runner jobs converge, verify, converge again on pvesim + the DNS lab;
#                   assertions on their artifacts, no secret in any.
#
# The tools (ansible-builder, ansible-runner, bindep) live in $(EE_VENV), never in the collection's
# runtime (requirements.txt). The work dir is kept after a run for a look at the artifacts.

EE_VENV ?= $(ROOT)/.venv-ee
EE_WORK ?= /tmp/dvt-ee

.PHONY: venv-ee test-ee

venv-ee: $(EE_VENV)/.stamp
$(eval $(call python_venv,$(EE_VENV),$(ROOT)/tests/ee/requirements.txt,$(PYTHON_NEWEST)))

test-ee: collection tools venv-ee
	cd $(ROOT) && timeout 900 tests/ee/run.sh --tools-venv $(EE_VENV) --tarball $(COLLECTION_TARBALL) \
	  --pvesim $(ROOT)/bin/pvesim --python $(PYTHON_NEWEST) --work $(EE_WORK)

TEST_TARGETS += test-ee
