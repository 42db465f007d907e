# mk/takeover.mk: taking over what the Terraform module built (owner: takeover).
#
#   make test-takeover   docs/migrate-from-terraform.md end to end (tests/takeover/run.sh): the bpg/proxmox
#                        provider's calls for tdemo replayed into pvesim, tdemo's zones and records as
#                        Terraform's DNS providers publish them, then onboard and tenant with tenant_adopt
#                        (check mode first), an ordinary run with no write, verify
#
# The Go tests of the adopt options (tenant_vrf, tenant_vm, pve_tenant_access, nsupdate_tsig) and of
# pvesim's drive format run with `go test ./...`.

.PHONY: test-takeover

test-takeover: install-collection tools
	$(ROOT)/tests/takeover/run.sh --venv $(VENV) --collections $(COLLECTIONS_DIR)

TEST_TARGETS += test-takeover
