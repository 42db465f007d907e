package report

import (
	"fmt"
	"strings"
)

// Markdown renders the report: a summary line, the Mermaid topology, the checks table, then the
// read-back details (fabric, each tenant's objects and records).
func Markdown(v View) string {
	var b strings.Builder
	total, failed := v.Counts()
	fmt.Fprintf(&b, "# Substrate report: %s\n\n", md(v.Site.Zone))
	by := v.GeneratedBy
	if by == "" {
		by = "deevnet.tenant.verify"
	}
	fmt.Fprintf(&b, "Generated %s by `%s` from what the Proxmox VE API and the resolver (%s) answered: "+
		"read back, not taken from the declarations.\n\n", md(v.GeneratedAt), md(by), md(orNone(v.Resolver)))
	switch {
	case total == 0:
		b.WriteString("**No check has run yet.**\n\n")
	case failed == 0:
		fmt.Fprintf(&b, "**All %d checks passed.**\n\n", total)
	default:
		fmt.Fprintf(&b, "**%d of %d checks FAILED.**\n\n", failed, total)
	}
	b.WriteString("## Topology\n\n```mermaid\n")
	b.WriteString(Mermaid(v))
	b.WriteString("```\n\n")

	b.WriteString("## Checks of the tenant contract\n\n")
	b.WriteString("| tenant | check | target | result | detail | ran at (UTC) |\n|---|---|---|---|---|---|\n")
	for _, t := range v.Tenants {
		if len(t.Checks) == 0 {
			fmt.Fprintf(&b, "| %s | (none) | | not verified yet | | |\n", md(t.Plan.Name))
		}
		for _, c := range t.Checks {
			b.WriteString(checkRow(t.Plan.Name, c))
		}
	}
	for _, c := range v.SiteChecks {
		b.WriteString(checkRow("(site)", c))
	}

	markdownFabric(&b, v.Substrate)
	markdownQuorum(&b, v.Substrate.Quorum)
	b.WriteString("\n## Tenants\n")
	for _, t := range v.Tenants {
		markdownTenant(&b, t)
	}
	return b.String()
}

// markdownFabric writes the fabric's members and the controllers.
func markdownFabric(b *strings.Builder, s Substrate) {
	b.WriteString("\n## Fabric\n\n| node | status | fabric | VTEP loopback |\n|---|---|---|---|\n")
	for _, n := range s.Nodes {
		fab, ip := "(not a member)", ""
		for _, fn := range s.FabricNodes {
			if fn.Node == n.Name {
				fab, ip = fn.Fabric, fn.IP
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", md(n.Name), md(n.Status), md(fab), md(ip))
	}
	for _, c := range s.Controllers {
		fmt.Fprintf(b, "\nController `%s` (%s, ASN %s).\n", md(c.ID), md(c.Type), md(c.ASN))
	}
}

// markdownTenant writes a tenant's objects, planned against read back, and its records.
func markdownTenant(b *strings.Builder, t TenantView) {
	p := t.Plan
	fmt.Fprintf(b, "\n### %s (index %d)\n\n| object | plan | read back |\n|---|---|---|\n", md(p.Name), p.Index)
	zone := "**MISSING**"
	if t.Zone != nil {
		zone = fmt.Sprintf("%s, VRF VNI %s, controller %s", t.Zone.Type, t.Zone.VRFVXLAN, t.Zone.Controller)
	}
	fmt.Fprintf(b, "| zone (VRF) | %s = %s, VNI %d | %s |\n", p.Zone, p.VRFDevice, p.VRFVXLAN, md(zone))
	for _, vn := range t.VNets {
		got := "**MISSING**"
		if vn.Found != nil {
			got = fmt.Sprintf("VNI %s in %s", vn.Found.Tag, vn.Found.Zone)
			for _, s := range vn.Found.Subnets {
				got += fmt.Sprintf("; subnet %s gw %s", s.CIDR, s.Gateway)
			}
		}
		fmt.Fprintf(b, "| VNet %s | VNI %d, %s gw %s | %s |\n", vn.Plan.ID, vn.Plan.Tag, vn.Plan.Subnet, vn.Plan.Gateway, md(got))
	}
	if c, ok := t.EnvelopeCheck(); ok {
		use, limit := c.EnvelopeParts()
		if !c.OK {
			use = "**" + use + " (OVER)**"
		}
		fmt.Fprintf(b, "| envelope (pool %s) | %s | %s |\n", md(c.Target), md(limit), md(use))
	}
	for _, vm := range t.VMs {
		want := "(not planned)"
		if vm.Plan != nil {
			want = fmt.Sprintf("%s (vmid %d) %s", vm.Plan.Name, vm.Plan.VMID, vm.Plan.Address)
		}
		got := "**MISSING**"
		if vm.Found != nil {
			got = fmt.Sprintf("%s on %s, %s, bridge %s, pool %s", orNone(vm.Address), vm.Found.Node, vm.Found.Status,
				orNone(vm.Found.Bridge), orNone(vm.Found.Pool))
			if pr := vm.Problems(); len(pr) > 0 {
				got += " **(" + strings.Join(pr, "; ") + ")**"
			}
		}
		fmt.Fprintf(b, "| VM %s | %s | %s |\n", md(vm.Name()), md(want), md(got))
	}
	fmt.Fprintf(b, "\nDNS zones %s and %s, read through the resolver:\n\n| name | type | answer |\n|---|---|---|\n",
		p.DNSZone, p.ReverseZone)
	for _, vm := range t.VMs {
		if vm.Plan != nil {
			b.WriteString(recordRow(vm.A))
			b.WriteString(recordRow(vm.PTR))
		}
	}
	for _, r := range t.Records {
		b.WriteString(recordRow(r))
	}
}

// Counts is how many checks ran (the tenants' and the site's) and how many failed.
func (v View) Counts() (total, failed int) {
	for _, t := range v.Tenants {
		total += len(t.Checks)
		failed += len(t.Failed())
	}
	for _, c := range v.SiteChecks {
		total++
		if !c.OK {
			failed++
		}
	}
	return total, failed
}

func checkRow(tenant string, c Check) string {
	res := "✅ pass"
	if !c.OK {
		res = "❌ **FAIL**"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", md(tenant), md(c.Name), md(c.Target), res, md(c.Detail), md(c.Time))
}

func recordRow(r Record) string {
	ans := strings.Join(r.Values, ", ")
	switch {
	case r.Err != "":
		ans = "**ERROR** " + r.Err
	case ans == "":
		ans = "**no answer**"
	}
	return fmt.Sprintf("| %s | %s | %s |\n", md(r.Name), md(r.Type), md(ans))
}

// md keeps a value inside its table cell: no pipe, no line break.
func md(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}
