package report

import (
	"fmt"
	"strings"

	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/vm"
)

// Check is the outcome of one check of the tenant contract, as the verify run saw it.
type Check struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Time   string `json:"time"`
}

// RecordQuery names a declared record of a tenant: Name relative to its zone ("@" for the apex).
type RecordQuery struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// TenantInput is what the verify run knows of a tenant: its name and index (the attachment), its
// declaration's sizes and records when it was verified, and its checks' outcomes.
type TenantInput struct {
	Name    string        `opt:"name"`
	Index   int           `opt:"index"`
	VMs     int           `opt:"vms"`
	VNets   int           `opt:"vnets"`
	VMVNet  []int         `opt:"vm_vnet"` // VM k on VNet VMVNet[k-1] (tenant.vms.vnet); empty: all on VNet 0
	Records []RecordQuery `opt:"records"`
	Checks  []Check       `opt:"checks"`
}

// Plan is the tenant as the site plans it from the verified declaration: its sizes and where
// each VM's NIC is, so a VM on another VNet than 0 is expected at that VNet's address.
func (in TenantInput) Plan(site plan.Site) (plan.Tenant, error) {
	t, err := site.Tenant(in.Name, in.Index, in.VMs, in.VNets)
	if err != nil {
		return plan.Tenant{}, err
	}
	if err := t.PlaceVMs("vm_vnet", in.VMVNet); err != nil {
		return plan.Tenant{}, err
	}
	return t, nil
}

// VNetView is a planned VNet and what PVE has for it (nil: missing).
type VNetView struct {
	Plan  plan.VNet
	Found *VNet
}

// VMView is a planned VM (or one found in the tenant's pool that the plan lacks) and what PVE and
// the resolver have for it.
type VMView struct {
	Plan    *plan.VM
	Found   *VM
	A, PTR  Record
	Address string // from the VM's ipconfig0, as PVE has it
	// The tenant's pool and vmid range: a planned vmid held by another pool, or a vmid of
	// another range held by this pool, is squatting (docs/security.md).
	Pool        string
	First, Last int
}

// Name is the VM's planned name, else the name PVE reports.
func (v VMView) Name() string {
	if v.Plan != nil {
		return v.Plan.Name
	}
	return v.Found.Name
}

// VMID is the planned vmid, else PVE's.
func (v VMView) VMID() int {
	if v.Plan != nil {
		return v.Plan.VMID
	}
	return v.Found.VMID
}

// Problems lists what is wrong with the VM as read back; empty when it is as planned and running.
func (v VMView) Problems() []string {
	var p []string
	switch {
	case v.Found == nil:
		return []string{"missing in PVE"}
	case v.Plan != nil && v.Found.Pool != v.Pool:
		// Only the pool says whose a VM is: the name and tags are the holder's to set.
		holder := "no tenant's pool"
		if t := vm.PoolOwner(v.Found.Pool); t != "" {
			holder = "tenant " + t + "'s pool"
		}
		return []string{fmt.Sprintf("vmid %d is held by %s (pool %s), not %s", v.Found.VMID, holder, orNone(v.Found.Pool), v.Pool)}
	case v.Plan == nil && (v.Found.VMID < v.First || v.Found.VMID > v.Last):
		p = append(p, vm.SquatMessage(v.Found.VMID, v.Found.Name, vm.PoolOwner(v.Found.Pool)))
	case v.Plan == nil:
		p = append(p, "not in the plan")
	}
	if v.Found.Status != "running" {
		p = append(p, v.Found.Status)
	}
	if v.Plan != nil && v.Address != v.Plan.Address.String() {
		p = append(p, fmt.Sprintf("address %s, plan %s", orNone(v.Address), v.Plan.Address))
	}
	return p
}

// TenantView is a tenant as planned from its name and index and as read back.
type TenantView struct {
	Plan    plan.Tenant
	Zone    *Zone
	VNets   []VNetView
	VMs     []VMView
	Records []Record
	Checks  []Check
}

// Failed returns the failed checks.
func (t TenantView) Failed() []Check {
	var out []Check
	for _, c := range t.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// EnvelopeCheck is the tenant's envelope check of its last verify run, if it made one.
func (t TenantView) EnvelopeCheck() (Check, bool) {
	for _, c := range t.Checks {
		if c.Name == CheckEnvelope {
			return c, true
		}
	}
	return Check{}, false
}

// EnvelopeParts splits the envelope check's detail ("uses <use> of <envelope>[: <over>]") into
// what the pool uses (with what it goes over) and the envelope, for the report's row and box.
func (c Check) EnvelopeParts() (use, envelope string) {
	rest, ok := strings.CutPrefix(c.Detail, "uses ")
	if !ok {
		return c.Detail, "(not read)"
	}
	use, envelope, _ = strings.Cut(rest, " of ")
	if env, over, found := strings.Cut(envelope, ": "); found {
		envelope, use = env, use+": "+over
	}
	return use, envelope
}

// Healthy says whether everything read back matches the plan and every check passed.
func (t TenantView) Healthy() bool {
	if t.Zone == nil || len(t.Failed()) > 0 {
		return false
	}
	for _, v := range t.VNets {
		if v.Found == nil {
			return false
		}
	}
	for _, v := range t.VMs {
		if len(v.Problems()) > 0 {
			return false
		}
	}
	return true
}

// View is the whole report's content.
type View struct {
	Site        plan.Site
	Substrate   Substrate
	Tenants     []TenantView
	SiteChecks  []Check // checks of the site rather than one tenant: the data plane
	Resolver    string  // where the records were read, host:port
	GeneratedAt string
	// GeneratedBy is the playbook that wrote the report (deevnet.tenant.verify or deevnet.tenant.report).
	GeneratedBy string
}

// Build plans each tenant and matches the read-back substrate and records against the plan.
// records maps a tenant's name to the record sets read for it (VM A and PTR first, then the
// declared ones, in the order Queries gives).
func Build(site plan.Site, sub Substrate, tenants []TenantInput, records map[string][]Record) (View, error) {
	v := View{Site: site, Substrate: sub}
	for _, in := range tenants {
		t, err := in.Plan(site)
		if err != nil {
			return View{}, fmt.Errorf("tenant %s: %w", in.Name, err)
		}
		tv := TenantView{Plan: t, Checks: in.Checks}
		for i := range sub.Zones {
			if sub.Zones[i].ID == t.Zone {
				tv.Zone = &sub.Zones[i]
			}
		}
		for _, pv := range t.VNets {
			vv := VNetView{Plan: pv}
			for i := range sub.VNets {
				if sub.VNets[i].ID == pv.ID {
					vv.Found = &sub.VNets[i]
				}
			}
			tv.VNets = append(tv.VNets, vv)
		}
		recs := records[in.Name]
		first, last := plan.VMIDRange(t.Index)
		planned := map[int]bool{}
		for i := range t.VMs {
			pvm := &t.VMs[i]
			planned[pvm.VMID] = true
			vm := VMView{Plan: pvm, Pool: t.Pool, First: first, Last: last}
			if len(recs) >= 2*(i+1) {
				vm.A, vm.PTR = recs[2*i], recs[2*i+1]
			}
			for j := range sub.VMs {
				if sub.VMs[j].VMID == pvm.VMID {
					vm.Found = &sub.VMs[j]
					vm.Address = strings.Split(ipField(sub.VMs[j].IPConfig, "ip"), "/")[0]
				}
			}
			tv.VMs = append(tv.VMs, vm)
		}
		// A guest in the tenant's pool the plan does not know (more VMs than declared).
		for j := range sub.VMs {
			if sub.VMs[j].Pool == t.Pool && !planned[sub.VMs[j].VMID] && !sub.VMs[j].Template {
				tv.VMs = append(tv.VMs, VMView{Found: &sub.VMs[j], Address: strings.Split(ipField(sub.VMs[j].IPConfig, "ip"), "/")[0],
					Pool: t.Pool, First: first, Last: last})
			}
		}
		if len(recs) > 2*len(t.VMs) {
			tv.Records = recs[2*len(t.VMs):]
		}
		v.Tenants = append(v.Tenants, tv)
	}
	return v, nil
}

// Queries lists the record sets to read for a planned tenant: each VM's A and PTR, then the
// declared records.
func Queries(t plan.Tenant, declared []RecordQuery) []RecordQuery {
	var q []RecordQuery
	for _, vm := range t.VMs {
		q = append(q, RecordQuery{Name: vm.FQDN + ".", Type: "A"})
		rev := vm.Address.As4()
		q = append(q, RecordQuery{Name: fmt.Sprintf("%d.%d.%d.%d.in-addr.arpa.", rev[3], rev[2], rev[1], rev[0]), Type: "PTR"})
	}
	for _, d := range declared {
		name := d.Name + "." + t.DNSZone + "."
		if d.Name == "@" {
			name = t.DNSZone + "."
		}
		q = append(q, RecordQuery{Name: name, Type: d.Type})
	}
	return q
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
