// Command substrate_report is the deevnet.tenant.substrate_report Ansible module on its own
// (plugins/modules/substrate_report.py); the collection ships it inside the multi-call binary
// cmd/tenant_modules. Both dispatch on internal/module/registry.
package main

import "github.com/deevnet/tenant/internal/module/registry"

func main() { registry.Main("substrate_report") }
