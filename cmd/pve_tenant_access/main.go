// Command pve_tenant_access is the deevnet.tenant.pve_tenant_access Ansible module on its own (plugins/modules/pve_tenant_access.py); the
// collection ships it inside the multi-call binary cmd/tenant_modules. Both dispatch on
// internal/modules.
package main

import "github.com/deevnet/tenant/internal/modules"

func main() { modules.Main("pve_tenant_access") }
