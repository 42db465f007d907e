// Package modules maps the name of each controller-side module (the ones that talk to the PVE API
// or DNS, or only compute) to its argument spec and handler. The multi-call binary
// cmd/tenant_modules and every cmd/<module> main dispatch on it; the go_module action plugin tells
// the multi-call binary which module to be (module.SelectKey, docs/adr/0011-binary-selection.md).
//
// transit_route is not here: it runs on the hypervisor and is copied there on every task, so its
// binary must not link the PVE client and DNS code this package pulls in.
package modules

import (
	"sort"

	"github.com/deevnet/tenant/internal/access"
	"github.com/deevnet/tenant/internal/corosync"
	"github.com/deevnet/tenant/internal/dnsupdate"
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/preflight"
	"github.com/deevnet/tenant/internal/report"
	"github.com/deevnet/tenant/internal/sdn"
	"github.com/deevnet/tenant/internal/vm"
)

// entries is built per call: no package state.
func entries() map[string]module.Entry {
	return map[string]module.Entry{
		"tenant_plan":         plan.Module(),
		"pve_sdn_fabric":      sdn.FabricModule(),
		"tenant_vrf":          sdn.VRFModule(),
		"pve_sdn_apply":       sdn.ApplyModule(),
		"tenant_vm":           vm.Module(),
		"pve_tenant_access":   access.Module(),
		"pve_tenant_storages": access.StoragesModule(),
		"nsupdate_tsig":       dnsupdate.Module(),
		"substrate_report":    report.Module(),
		"tenant_verify":       report.VerifyModule(),
		"tenant_index_info":   access.InfoModule(),
		"corosync_qdevice":    corosync.Module(),
		"substrate_preflight": preflight.Module(),
	}
}

// Lookup returns the module called name (the short name, e.g. "tenant_vm").
func Lookup(name string) (module.Entry, bool) {
	e, ok := entries()[name]
	return e, ok
}

// Names lists the registered modules, sorted.
func Names() []string {
	m := entries()
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Main runs the module the args file names (module.SelectKey), else def ("" for none).
func Main(def string) { module.Main(def, Lookup) }
