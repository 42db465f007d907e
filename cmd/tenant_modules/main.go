// Command tenant_modules is the multi-call binary of deevnet.tenant's controller-side modules
// (internal/modules): the go_module action plugin runs it with the module's name in the
// args file (module.SelectKey). One binary per platform instead of one per module and platform
// keeps the collection small enough for Galaxy (docs/adr/0011-binary-selection.md).
package main

import "github.com/deevnet/tenant/internal/modules"

func main() { modules.Main("") }
