// Command nsupdate_tsig is the Ansible module that converges DNS record sets over TSIG-signed
// RFC 2136 updates, forward and reverse, with an ownership registry (ADR-0004).
package main

import (
	"github.com/deevnet/tenant/internal/dnsupdate/nsmodule"
	"github.com/deevnet/tenant/internal/module"
)

func main() { module.Run(nsmodule.Spec(), nsmodule.Handle) }
