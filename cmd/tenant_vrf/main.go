// Command tenant_vrf is the deevnet.tenant.tenant_vrf Ansible module (see plugins/modules/tenant_vrf.py).
package main

import (
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/sdn/sdnmod"
)

func main() { module.Run(sdnmod.VRFSpec(), sdnmod.VRF) }
