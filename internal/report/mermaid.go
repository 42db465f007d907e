package report

import (
	"fmt"
	"strings"
)

// Mermaid renders the topology as a Mermaid flowchart: the fabric's nodes with their VTEP
// loopbacks, one box per tenant (its VRF, VNets, VMs with address, node and state, and its failed
// checks), the perimeter and the resolver. What is missing or failed is drawn red with the reason
// in its label, so the picture alone tells the operator.
func Mermaid(v View) string {
	var b strings.Builder
	// Labels wrap at 200 px by default, which breaks addresses and names mid-word.
	b.WriteString(`%%{init: {"flowchart": {"wrappingWidth": 400, "nodeSpacing": 30, "rankSpacing": 60}}}%%` + "\n")
	b.WriteString("flowchart LR\n")
	b.WriteString("  classDef infra fill:#eef3fb,stroke:#3b5b92,color:#111\n")
	b.WriteString("  classDef ok fill:#e7f5ea,stroke:#2e7d32,color:#111\n")
	b.WriteString("  classDef bad fill:#fde3e1,stroke:#c62828,stroke-width:3px,color:#111\n")
	b.WriteString("  classDef missing fill:#ffffff,stroke:#c62828,stroke-width:3px,stroke-dasharray:6 4,color:#c62828\n")
	mermaidFabric(&b, v.Substrate)
	dp, dpCls := dataPlane(v.SiteChecks)
	fmt.Fprintf(&b, "  perimeter[%s]:::%s\n", label("Perimeter", "NAT egress · default-drop forward", dp), dpCls)
	fmt.Fprintf(&b, "  resolver[%s]:::infra\n", label("Resolver "+v.Site.Resolver.String(), "read back at "+orNone(v.Resolver)))
	for ti, t := range v.Tenants {
		mermaidTenant(&b, fmt.Sprintf("t%d", ti), t)
	}
	b.WriteString("  style fabric fill:#f4f7fc,stroke:#3b5b92\n")
	return b.String()
}

// mermaidFabric draws the fabric box: its nodes with their VTEP loopbacks, and the controllers.
func mermaidFabric(b *strings.Builder, s Substrate) {
	title := "Fabric"
	for _, f := range s.Fabrics {
		title = fmt.Sprintf("Fabric %s · %s · %s", f.ID, f.Protocol, f.Prefix)
	}
	if len(s.Fabrics) == 0 {
		title = "Fabric: NONE read back"
	}
	fmt.Fprintf(b, "  subgraph fabric[%s]\n    direction TB\n", label(title))
	for i, n := range s.Nodes {
		ip, cls := "not a fabric member", "bad"
		for _, fn := range s.FabricNodes {
			if fn.Node == n.Name {
				ip, cls = "VTEP "+fn.IP, "infra"
			}
		}
		if n.Status != "online" {
			cls = "bad"
		}
		fmt.Fprintf(b, "    node%d[%s]:::%s\n", i, label(n.Name, ip, n.Status), cls)
	}
	for _, c := range s.Controllers {
		fmt.Fprintf(b, "    ctl_%s[%s]:::infra\n", ident(c.ID), label("controller "+c.ID, c.Type+" · ASN "+c.ASN))
	}
	b.WriteString("  end\n")
}

// dataPlane is the perimeter's line about the site checks, and its class.
func dataPlane(checks []Check) (string, string) {
	if len(checks) == 0 {
		return "data plane: not checked", "infra"
	}
	failed := 0
	for _, c := range checks {
		if !c.OK {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Sprintf("data plane: %d of %d checks FAILED", failed, len(checks)), "bad"
	}
	return fmt.Sprintf("data plane: %d/%d checks passed", len(checks)-failed, len(checks)), "ok"
}

// mermaidTenant draws one tenant's box (VNets, VMs, failed checks) and its edges.
func mermaidTenant(b *strings.Builder, id string, t TenantView) {
	p := t.Plan
	status := fmt.Sprintf("checks %d/%d passed", len(t.Checks)-len(t.Failed()), len(t.Checks))
	if n := len(t.Failed()); n > 0 {
		status = fmt.Sprintf("%d of %d checks FAILED", n, len(t.Checks))
	} else if len(t.Checks) == 0 {
		status = "not verified yet"
	}
	zone := fmt.Sprintf("VRF %s · zone %s · VNI %d", p.VRFDevice, p.Zone, p.VRFVXLAN)
	if t.Zone == nil {
		zone = fmt.Sprintf("zone %s MISSING", p.Zone)
	}
	fmt.Fprintf(b, "  subgraph %s[%s]\n    direction TB\n", id, label(fmt.Sprintf("%s · index %d · %s · %s", p.Name, p.Index, zone, status)))
	for vi, vn := range t.VNets {
		cls, state := "ok", fmt.Sprintf("%s gw %s", vn.Plan.Subnet, vn.Plan.Gateway)
		if vn.Found == nil {
			cls, state = "missing", "MISSING in PVE"
		}
		fmt.Fprintf(b, "    %s_v%d[%s]:::%s\n", id, vi, label(fmt.Sprintf("VNet %s · VNI %d", vn.Plan.ID, vn.Plan.Tag), state), cls)
	}
	for mi, vm := range t.VMs {
		lines, cls := vmLines(vm)
		fmt.Fprintf(b, "    %s_m%d[%s]:::%s\n", id, mi, label(lines...), cls)
		if vi := vnetOf(t, vm); vi >= 0 {
			fmt.Fprintf(b, "    %s_m%d --- %s_v%d\n", id, mi, id, vi)
		}
	}
	if c, ok := t.EnvelopeCheck(); ok {
		use, limit := c.EnvelopeParts()
		cls := "ok"
		if !c.OK {
			cls = "bad"
		}
		fmt.Fprintf(b, "    %s_env[%s]:::%s\n", id, label("envelope "+limit, use), cls)
	}
	if failed := t.Failed(); len(failed) > 0 {
		lines := []string{"FAILED checks"}
		for _, c := range failed {
			lines = append(lines, c.Name+": "+c.Target)
		}
		fmt.Fprintf(b, "    %s_fail[%s]:::bad\n", id, label(lines...))
	}
	b.WriteString("  end\n")
	if t.Healthy() {
		fmt.Fprintf(b, "  style %s fill:#f6fbf6,stroke:#2e7d32,stroke-width:2px\n", id)
	} else {
		fmt.Fprintf(b, "  style %s fill:#fff6f5,stroke:#c62828,stroke-width:3px\n", id)
	}
	fmt.Fprintf(b, "  fabric ==>|%s| %s\n", edge(fmt.Sprintf("EVPN VNI %d", p.VRFVXLAN)), id)
	fmt.Fprintf(b, "  %s ==>|egress| perimeter\n", id)
	fmt.Fprintf(b, "  %s -.->|%s| resolver\n", id, edge(p.DNSZone))
}

// vmLines is a VM's label (name, address, node and state, or what is wrong) and its class.
func vmLines(vm VMView) ([]string, string) {
	lines := []string{fmt.Sprintf("VM %s · %d", vm.Name(), vm.VMID())}
	if vm.Found == nil {
		return append(lines, "MISSING in PVE"), "missing"
	}
	lines = append(lines, orNone(vm.Address))
	if pr := vm.Problems(); len(pr) > 0 {
		return append(lines, "on "+vm.Found.Node+" · "+strings.ToUpper(strings.Join(pr, " · "))), "bad"
	}
	return append(lines, "on "+vm.Found.Node+" · "+vm.Found.Status), "ok"
}

// vnetOf is the index of the VNet the VM's NIC is on (its planned VNet for a VM not read back).
func vnetOf(t TenantView, vm VMView) int {
	if vm.Found == nil || vm.Found.Bridge == "" {
		if vm.Plan != nil && vm.Plan.VNet < len(t.VNets) {
			return vm.Plan.VNet
		}
		return -1
	}
	for i, vn := range t.VNets {
		if vn.Plan.ID == vm.Found.Bridge {
			return i
		}
	}
	return -1
}

// label is a quoted Mermaid node label, one line per argument. Quotes and angle brackets would
// end the label or open HTML, so they become Mermaid's entity codes.
func label(lines ...string) string {
	esc := make([]string, 0, len(lines))
	for _, l := range lines {
		esc = append(esc, escape(l))
	}
	return `"` + strings.Join(esc, "<br/>") + `"`
}

func edge(s string) string { return `"` + escape(s) + `"` }

func escape(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ", "|", "#124;")
	return r.Replace(s)
}

// ident makes a Mermaid node id from an API id.
func ident(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
