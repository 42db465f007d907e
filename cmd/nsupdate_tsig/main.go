// Command nsupdate_tsig is the deevnet.tenant.nsupdate_tsig Ansible module on its own (plugins/modules/nsupdate_tsig.py); the
// collection ships it inside the multi-call binary cmd/tenant_modules. Both dispatch on
// internal/modules.
package main

import "github.com/deevnet/tenant/internal/modules"

func main() { modules.Main("nsupdate_tsig") }
