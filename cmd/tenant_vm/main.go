// Command tenant_vm is the deevnet.tenant.tenant_vm Ansible module: a tenant's VMs cloned from a
// template into its pool, on its VNet, addressed by cloud-init, in one idempotent task.
package main

import (
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/vm"
)

func main() { module.Run(vm.Spec(), vm.Handle) }
