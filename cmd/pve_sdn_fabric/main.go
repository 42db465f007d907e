// Command pve_sdn_fabric is the deevnet.tenant.pve_sdn_fabric Ansible module on its own (plugins/modules/pve_sdn_fabric.py); the
// collection ships it inside the multi-call binary cmd/tenant_modules. Both dispatch on
// internal/modules.
package main

import "github.com/deevnet/tenant/internal/modules"

func main() { modules.Main("pve_sdn_fabric") }
