package vm

import (
	"fmt"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
)

var stateChoices = []any{"present", "started", "stopped", "absent", "rebuilt"}

// Spec is tenant_vm's argument spec (the connection options included).
func Spec() module.Spec {
	vmOpts := map[string]*module.Option{
		"index":    {Type: module.TypeInt},
		"cores":    {Type: module.TypeInt},
		"memory":   {Type: module.TypeInt},
		"disk":     {Type: module.TypeStr},
		"template": {Type: module.TypeStr},
		"state":    {Type: module.TypeStr, Choices: stateChoices},
		"vnet":     {Type: module.TypeInt},
	}
	return module.Spec{
		Options: pve.WithConnectionOptions(map[string]*module.Option{
			"name":        {Type: module.TypeStr, Required: true, Aliases: []string{"tenant"}},
			"index":       {Type: module.TypeInt, Required: true},
			"site":        {Type: module.TypeDict},
			"vms":         {Type: module.TypeList, Elements: module.TypeDict, Options: vmOpts},
			"count":       {Type: module.TypeInt},
			"state":       {Type: module.TypeStr, Default: "started", Choices: stateChoices},
			"cores":       {Type: module.TypeInt},
			"memory":      {Type: module.TypeInt},
			"disk":        {Type: module.TypeStr},
			"template":    {Type: module.TypeStr},
			"node":        {Type: module.TypeStr},
			"placement":   {Type: module.TypeStr, Default: "first", Choices: []any{"first", "spread"}},
			"vnet":        {Type: module.TypeInt, Default: 0},
			"vnet_count":  {Type: module.TypeInt, Default: 1},
			"storage":     {Type: module.TypeStr},
			"full":        {Type: module.TypeBool, Default: false},
			"ciuser":      {Type: module.TypeStr},
			"cipassword":  {Type: module.TypeStr, NoLog: true},
			"sshkeys":     {Type: module.TypeList, Elements: module.TypeStr},
			"tags":        {Type: module.TypeList, Elements: module.TypeStr},
			"description": {Type: module.TypeStr},
			"parallel":    {Type: module.TypeInt, Default: DefaultParallel},
			"timeout":     {Type: module.TypeInt, Default: 600},
		}),
		MutuallyExclusive: [][]string{{"vms", "count"}},
		RequiredOneOf:     [][]string{{"vms", "count"}},
		SupportsCheckMode: true,
	}
}

// Declarations turns the module's options into one Desired per VM, every identifier taken
// from the plan of internal/plan.
func Declarations(m *module.Module) ([]Desired, error) {
	site := plan.DefaultSite()
	if o := m.Dict("site"); o != nil {
		s, err := plan.SiteFromMap(o)
		if err != nil {
			return nil, fmt.Errorf("site: %w", err)
		}
		site = s
	}
	type decl struct {
		index int
		opts  map[string]any
	}
	var decls []decl
	var own []vmVNet // vms[].vnet (vnet.go)
	if m.IsSet("count") {
		n := m.Int("count")
		if n < 0 {
			return nil, fmt.Errorf("count %d: must be 0 or more", n)
		}
		for k := 1; k <= n; k++ {
			decls = append(decls, decl{index: k})
		}
	}
	for i, e := range m.List("vms") {
		o, _ := e.(map[string]any)
		k := i + 1
		if v, ok := o["index"].(int); ok {
			k = v
		}
		if k < 1 {
			return nil, fmt.Errorf("vms[%d].index %d: VM indexes start at 1", i, k)
		}
		decls = append(decls, decl{index: k, opts: o})
		own = append(own, vmVNet{pos: i, k: k, vnet: o["vnet"]})
	}
	maxK := 0
	for _, d := range decls {
		maxK = max(maxK, d.index)
	}
	t, err := site.Tenant(m.Str("name"), m.Int("index"), max(maxK, 1), m.Int("vnet_count"))
	if err != nil {
		return nil, err
	}
	if err := placeVNets(m, &t, own); err != nil {
		return nil, err
	}
	if len(t.VMs) < maxK || len(t.VNets) == 0 {
		return nil, fmt.Errorf("plan for tenant %s holds %d VMs and %d VNets; need %d VMs and 1 VNet", t.Name, len(t.VMs), len(t.VNets), maxK)
	}
	nodeOf, err := placement(m, site.Nodes)
	if err != nil {
		return nil, err
	}
	tags, err := NormalizeTags(append([]string{t.OwnerTag}, m.StrList("tags")...))
	if err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	for _, tag := range tags {
		if o := ownerFromTags([]string{tag}); o != "" && o != strings.ToLower(t.Name) {
			return nil, fmt.Errorf("tags: %q would mark the VMs as tenant %s's; tenant- tags are reserved for ownership", tag, o)
		}
	}
	var sshkeys []string
	if m.IsSet("sshkeys") {
		sshkeys = normalizeKeyLines(m.StrList("sshkeys"))
		if sshkeys == nil {
			sshkeys = []string{}
		}
	}
	pick := func(o map[string]any, key string) any {
		if v, ok := o[key]; ok && v != nil {
			return v
		}
		return m.Params[key]
	}
	seen := map[int]bool{}
	out := make([]Desired, 0, len(decls))
	for _, dc := range decls {
		if seen[dc.index] {
			return nil, fmt.Errorf("VM %s-%d is declared twice", t.Name, dc.index)
		}
		seen[dc.index] = true
		pv := t.VMs[dc.index-1]
		d := Desired{
			Tenant: t.Name, Pool: t.Pool, VMID: pv.VMID, Name: pv.Name, Node: nodeOf(dc.index),
			Full: m.Bool("full"), Storage: m.Str("storage"),
			Bridge: t.VNets[pv.VNet].ID, Model: "virtio",
			IPConfig0:  Props{"ip": pv.CIDR, "gw": pv.Gateway.String()},
			Nameserver: []string{site.Resolver.String()}, SearchDomain: t.DNSZone,
			CIUser: m.Str("ciuser"), SSHKeys: sshkeys, CIPassword: m.Str("cipassword"),
			Tags: tags, Description: m.Str("description"),
		}
		if d.Description == "" {
			d.Description = fmt.Sprintf("%s: VM %d of tenant %s, managed by deevnet.tenant.tenant_vm", pv.FQDN, dc.index, t.Name)
		}
		d.State = State(fmt.Sprint(pick(dc.opts, "state")))
		// Zero inside Desired means "not managed"; a zero the user gave is a mistake, not that.
		if v, ok := pick(dc.opts, "cores").(int); ok {
			if v < 1 {
				return nil, fmt.Errorf("VM %s: cores %d: must be in 1..512 (leave it out to keep the template's)", d.Name, v)
			}
			d.Cores = v
		}
		if v, ok := pick(dc.opts, "memory").(int); ok {
			if v < 16 {
				return nil, fmt.Errorf("VM %s: memory %d: must be at least 16 (MiB; leave it out to keep the template's)", d.Name, v)
			}
			d.Memory = v
		}
		if v, ok := pick(dc.opts, "template").(string); ok {
			d.Template = v
		}
		if v, ok := pick(dc.opts, "disk").(string); ok && v != "" {
			n, err := ParseSize(v)
			if err != nil {
				return nil, fmt.Errorf("VM %s: disk: %w", d.Name, err)
			}
			if n < 1<<20 {
				return nil, fmt.Errorf("VM %s: disk %q: give a size with a unit, e.g. 20G", d.Name, v)
			}
			d.Disk = n
		}
		if err := d.Validate(); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// placement returns the node a new VM k is cloned on. "first" (the default): O(node), else the
// site's first node. "spread": round-robin over the site's nodes by VM index (VM k on node
// (k-1) mod n), so a VM's node does not depend on how many VMs are declared. Only creation
// follows it: an existing VM stays where it is (converge reads its node back), which keeps
// the module idempotent and never migrates.
func placement(m *module.Module, nodes []string) (func(k int) string, error) {
	switch m.Str("placement") {
	case "spread":
		if m.Str("node") != "" {
			return nil, fmt.Errorf("node: %q cannot be combined with placement spread (spread places VMs over the site's nodes)", m.Str("node"))
		}
		if len(nodes) == 0 {
			return nil, fmt.Errorf("placement: spread needs the site plan's nodes (site.nodes is empty)")
		}
		return func(k int) string { return nodes[(k-1)%len(nodes)] }, nil
	default:
		node := m.Str("node")
		if node == "" && len(nodes) > 0 {
			node = nodes[0]
		}
		if node == "" {
			return nil, fmt.Errorf("node: required (the site plan names no node)")
		}
		return func(int) string { return node }, nil
	}
}

// Handle is tenant_vm's handler.
func Handle(m *module.Module) (module.Result, error) {
	want, err := Declarations(m)
	if err != nil {
		return module.Result{}, err
	}
	par := m.Int("parallel")
	if par < 1 || par > MaxParallel {
		return module.Result{}, fmt.Errorf("parallel %d: must be in 1..%d", par, MaxParallel)
	}
	if m.Int("timeout") < 1 {
		return module.Result{}, fmt.Errorf("timeout %d: must be at least 1 second", m.Int("timeout"))
	}
	m.AddSecret(m.Str("cipassword"))
	api, err := pve.FromModule(m)
	if err != nil {
		return module.Result{}, err
	}
	results, cerr := Converge(m.Context(), api, want, Options{
		Parallel: par, TaskTimeout: time.Duration(m.Int("timeout")) * time.Second, CheckMode: m.CheckMode,
	})
	res := module.Result{Values: map[string]any{"vms": results}}
	if results == nil {
		res.Values["vms"] = []*Result{}
	}
	var counts = map[string]int{}
	for _, r := range results {
		res.Changed = res.Changed || r.Changed
		for _, w := range r.Warnings {
			m.Warn(w)
		}
		for _, a := range r.Actions {
			counts[a]++
		}
		res.Diffs = append(res.Diffs, module.Diff{
			Before: r.Before, After: r.After,
			BeforeHeader: fmt.Sprintf("%s (vmid %d)", r.Name, r.VMID), AfterHeader: fmt.Sprintf("%s (vmid %d)", r.Name, r.VMID),
		})
	}
	res.Msg = summary(len(want), counts, m.CheckMode)
	if cerr != nil {
		return res, module.Fail(cerr.Error(), res.Values)
	}
	return res, nil
}

func summary(n int, counts map[string]int, check bool) string {
	if len(counts) == 0 {
		return fmt.Sprintf("%d VM(s) already as declared", n)
	}
	var parts []string
	for _, a := range []string{"destroy", "clone", "config", "resize", "start", "stop"} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", a, counts[a]))
		}
	}
	verb := "done"
	if check {
		verb = "would be done (check mode)"
	}
	return fmt.Sprintf("%d VM(s): %s %s", n, strings.Join(parts, ", "), verb)
}
