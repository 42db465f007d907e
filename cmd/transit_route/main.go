// Command transit_route is the deevnet.tenant.transit_route Ansible module: tenant egress
// routes and forwarding on the hypervisor (ADR-0003). The module lives in internal/route.
//
// Its own binary, not an entry of internal/modules: it is copied to the hypervisor on
// every task and must stay small (docs/adr/0011-binary-selection.md).
package main

import (
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/route"
)

func main() {
	module.Main("transit_route", func(name string) (module.Entry, bool) {
		return route.Module(), name == "transit_route"
	})
}
