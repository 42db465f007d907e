// Command tenant_plan is the deevnet.tenant.tenant_plan Ansible module on its own (plugins/modules/tenant_plan.py); the
// collection ships it inside the multi-call binary cmd/tenant_modules. Both dispatch on
// internal/modules.
package main

import "github.com/deevnet/tenant/internal/modules"

func main() { modules.Main("tenant_plan") }
