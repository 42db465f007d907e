// Command substrate_preflight is the deevnet.tenant.substrate_preflight Ansible module on its own
// (plugins/modules/substrate_preflight.py); the collection ships it inside the multi-call binary
// cmd/tenant_modules. Both dispatch on internal/modules.
package main

import "github.com/deevnet/tenant/internal/modules"

func main() { modules.Main("substrate_preflight") }
