// Package envelope is a tenant's hardware envelope (docs/adr/0014-tenant-envelope.md): the most
// VMs, vCPUs, memory and disk the substrate lets one tenant hold, and the disk I/O its VMs may do. PVE 9 has no pool quota (a pool
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
	// The wire (docs/adr/0016-tenant-wire.md): what the tenant's VMs together may send on each
	// node, in Mbit/s, and of it how many broadcast and multicast frames per second. 0 is "not
	// given" (an attachment from before the wire): its ports are still checked, at no rate.
	Bandwidth int `opt:"bandwidth" json:"bandwidth,omitempty"`
	Broadcast int `opt:"broadcast" json:"broadcast,omitempty"`
	// Disk I/O of all the tenant's VMs on one node together, whatever their own mbps_*/iops_*
	// say (the guard's io.max on the node's devices behind the tenant's thin pool): MiB/s (as
	// PVE's mbps_rd, 1048576 bytes a second) and operations a second. 0 is not given (an
	// attachment from before them): no cap.
	DiskReadMBps  int `opt:"disk_read_mbps" json:"disk_read_mbps,omitempty"`
	DiskWriteMBps int `opt:"disk_write_mbps" json:"disk_write_mbps,omitempty"`
	DiskReadIOPS  int `opt:"disk_read_iops" json:"disk_read_iops,omitempty"`
	DiskWriteIOPS int `opt:"disk_write_iops" json:"disk_write_iops,omitempty"`

	// records each of the tenant's zones may hold, the apex's SOA and NS aside
	DNSRecords int `opt:"dns_records" json:"dns_records,omitempty"`
	// UPDATE messages a minute
	DNSUpdates int `opt:"dns_updates" json:"dns_updates,omitempty"`
}

// Rates are the disk I/O keys of an envelope, in the order Rates lists them: each optional, at
// least 1 when given.
var Rates = []string{"disk_read_mbps", "disk_write_mbps", "disk_read_iops", "disk_write_iops"}

// Rates are e's disk I/O limits by key (0: not given).
func (e Envelope) Rates() map[string]int {
	return map[string]int{"disk_read_mbps": e.DiskReadMBps, "disk_write_mbps": e.DiskWriteMBps,
		"disk_read_iops": e.DiskReadIOPS, "disk_write_iops": e.DiskWriteIOPS}
}

// Validate refuses an envelope with a limit below one, naming each such field; the wire's, the
// disk I/O rates and the DNS quota only where given (0 is not given), never negative.
func (e Envelope) Validate(field string) error {
	var errs []string
	for _, l := range e.limits() {
		if l.limit < 1 {
			errs = append(errs, fmt.Sprintf("%s.%s %d must be at least 1%s", field, l.key, l.limit, l.unit))
		}
	}
	for _, l := range e.wireLimits() {
		if l.limit < 0 {
			errs = append(errs, fmt.Sprintf("%s.%s %d must be at least 1%s, or left out", field, l.key, l.limit, l.unit))
		}
	}
	rates := e.Rates()
	for _, key := range Rates {
		if rates[key] < 0 {
			errs = append(errs, fmt.Sprintf("%s.%s %d must be at least 1 (or not given: no cap)", field, key, rates[key]))
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

func (e Envelope) wireLimits() []limit {
	return []limit{{key: "bandwidth", limit: e.Bandwidth, unit: " Mbit/s"}, {key: "broadcast", limit: e.Broadcast, unit: " frames/s"}}
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
