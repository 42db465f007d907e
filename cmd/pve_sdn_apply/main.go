// Command pve_sdn_apply is the deevnet.tenant.pve_sdn_apply Ansible module (see plugins/modules/pve_sdn_apply.py).
package main

import (
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/sdn/sdnmod"
)

func main() { module.Run(sdnmod.ApplySpec(), sdnmod.Apply) }
