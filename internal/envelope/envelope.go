// Package envelope is a tenant's hardware envelope (docs/adr/0014-tenant-envelope.md): the most
// VMs, vCPUs, memory and disk the substrate lets one tenant hold. PVE 9 has no pool quota (a pool
// holds members and ACLs, nothing else), so the substrate sets the envelope at onboarding and
// every place that can refuse growth checks it. This package is the rule itself, with no I/O.
package envelope

import (
	"fmt"
	"strings"
)

// Envelope is one tenant's limits. Memory is in MiB and disk in GiB, the units of the tenant
// contract's vms.memory and vms.disk. Its default has one source, the substrate role's
// substrate_tenant_envelope (roles/substrate/meta/argument_specs.yml).
// The json tags are the guard's envelope file (internal/guard), the opt tags the modules' option.
// DNSRecords and DNSUpdates are the DNS quota (docs/adr/0017-dns-quota.md), which the DNS gateway
// enforces; 0 is "not given" (an attachment written before them has none).
type Envelope struct {
	VMs    int `opt:"vms" json:"vms"`
	Cores  int `opt:"cores" json:"cores"`
	Memory int `opt:"memory" json:"memory"`
	Disk   int `opt:"disk" json:"disk"`
	// records each of the tenant's zones may hold, the apex's SOA and NS aside
	DNSRecords int `opt:"dns_records" json:"dns_records,omitempty"`
	// UPDATE messages a minute
	DNSUpdates int `opt:"dns_updates" json:"dns_updates,omitempty"`
}

// Validate refuses an envelope with a limit below one, naming each such field; the DNS quota's
// limits only where given (0 is not given).
func (e Envelope) Validate(field string) error {
	var errs []string
	for _, l := range e.limits() {
		if l.limit < 1 {
			errs = append(errs, fmt.Sprintf("%s.%s %d must be at least 1%s", field, l.key, l.limit, l.unit))
		}
	}
	for _, l := range e.dnsLimits() {
		if l.limit < 0 {
			errs = append(errs, fmt.Sprintf("%s.%s %d must be at least 1%s, or not given", field, l.key, l.limit, l.unit))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

type limit struct {
	key   string
	limit int
	unit  string
}

func (e Envelope) limits() []limit {
	return []limit{
		{key: "vms", limit: e.VMs}, {key: "cores", limit: e.Cores, unit: " vCPUs"},
		{key: "memory", limit: e.Memory, unit: " MiB"}, {key: "disk", limit: e.Disk, unit: " GiB"},
	}
}

// dnsLimits are the DNS quota's (docs/adr/0017-dns-quota.md), which the DNS gateway enforces.
func (e Envelope) dnsLimits() []limit {
	return []limit{{key: "dns_records", limit: e.DNSRecords, unit: " (records in each zone)"}, {key: "dns_updates", limit: e.DNSUpdates, unit: " (UPDATE messages a minute)"}}
}

// CheckDeclaration refuses a declaration of count VMs of the same shape whose totals exceed e:
// one message naming, for every limit exceeded, the declaration's fields, their total and the limit.
func (e Envelope) CheckDeclaration(count, cores, memory, disk int) error {
	totals := []struct {
		used int
		how  string // the declaration's fields that add up to used
	}{
		{count, "tenant.vms.count"},
		{count * cores, fmt.Sprintf("tenant.vms.count x tenant.vms.cores (%d x %d)", count, cores)},
		{count * memory, fmt.Sprintf("tenant.vms.count x tenant.vms.memory (%d x %d MiB)", count, memory)},
		{count * disk, fmt.Sprintf("tenant.vms.count x tenant.vms.disk (%d x %d GiB)", count, disk)},
	}
	var over []string
	for i, l := range e.limits() {
		if t := totals[i]; t.used > l.limit {
			over = append(over, fmt.Sprintf("%s is %d%s, over the tenant's envelope of %d%s (envelope.%s, set by the substrate at onboarding)",
				t.how, t.used, l.unit, l.limit, l.unit, l.key))
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("%s", strings.Join(over, "; "))
	}
	return nil
}
