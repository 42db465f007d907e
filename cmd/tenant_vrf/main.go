// Command tenant_vrf is the deevnet.tenant.tenant_vrf Ansible module on its own (plugins/modules/tenant_vrf.py); the
// collection ships it inside the multi-call binary cmd/tenant_modules. Both dispatch on
// internal/modules.
package main

import "github.com/deevnet/tenant/internal/modules"

func main() { modules.Main("tenant_vrf") }
