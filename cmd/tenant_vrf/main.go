// Command tenant_vrf is the deevnet.tenant.tenant_vrf Ansible module on its own (plugins/modules/tenant_vrf.py); the
// collection ships it inside the multi-call binary cmd/tenant_modules. Both dispatch on
// internal/module/registry.
package main

import "github.com/deevnet/tenant/internal/module/registry"

func main() { registry.Main("tenant_vrf") }
