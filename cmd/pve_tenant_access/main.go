// Command pve_tenant_access is the Ansible module that converges a tenant's PVE access objects
// (pool, user, API token, ACLs) from its name and index. The logic lives in internal/access.
package main

import (
	"github.com/deevnet/tenant/internal/access"
	"github.com/deevnet/tenant/internal/module"
)

func main() { module.Run(access.Spec(), access.Handle) }
