// Command pve_sdn_fabric is the deevnet.tenant.pve_sdn_fabric Ansible module (see plugins/modules/pve_sdn_fabric.py).
package main

import (
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/sdn/sdnmod"
)

func main() { module.Run(sdnmod.FabricSpec(), sdnmod.Fabric) }
