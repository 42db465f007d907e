// Command substrate_report is the deevnet.tenant.substrate_report Ansible module (see plugins/modules/substrate_report.py).
package main

import (
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/report/reportmod"
)

func main() { module.Run(reportmod.Spec(), reportmod.Handle) }
