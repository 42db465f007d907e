# mk/route.mk: transit_route (owner: route). The host-namespace tests (netns lab with NAT and
# isolation, policy-routing tables) run in `go test ./...`; this adds what needs a kernel with VRF:
# internal/route's whole test suite again inside a QEMU TCG guest (test/guest/run.sh).
#
#   make test-route    guest run of internal/route's tests (VRF devices, VRF default + return
#                      routes, exclusive mode, the persistence hook with `ip route ... vrf`),
#                      internal/netlab's, and internal/cgroupslice's (TestRealKernel, which
#                      moves a process between real cgroups, runs only there)
#   make bench-route   63 tenants: converge and no-op, tables on the host, VRFs in the guest
#   make route-size    size of the stripped module binary

ROUTE_GUEST_TIMEOUT ?= 900

.PHONY: test-route bench-route route-size
test-route:
	GUEST_TIMEOUT=$(ROUTE_GUEST_TIMEOUT) timeout $(ROUTE_GUEST_TIMEOUT) $(ROOT)/test/guest/run.sh -test.v -test.count=1

bench-route:
	cd $(ROOT) && $(GO) test -run '^$$' -bench 'Tables$$' -benchtime 20x ./internal/route
	GUEST_RUN='^$$' GUEST_BENCH='VRF$$' GUEST_TIMEOUT=$(ROUTE_GUEST_TIMEOUT) timeout $(ROUTE_GUEST_TIMEOUT) $(ROOT)/test/guest/run.sh -test.benchtime=5x

route-size:
	cd $(ROOT) && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build $(GOFLAGS_BUILD) -o $(ROOT)/bin/transit_route ./cmd/transit_route
	@stat -c '%n %s bytes' $(ROOT)/bin/transit_route

TEST_TARGETS  += test-route
BENCH_TARGETS += bench-route
