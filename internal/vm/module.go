package vm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/reconcile"
)

var stateChoices = []any{"present", "started", "stopped", "absent", "rebuilt"}

// ModuleOptions are tenant_vm's options (spec declares their rules).
type ModuleOptions struct {
	pve.Connection
	// Settings at the top level apply to every VM that does not set its own.
	Settings
	Name        string         `opt:"name"`
	Index       int            `opt:"index"`
	Site        map[string]any `opt:"site"`
	VMs         []VMOption     `opt:"vms"`
	Count       *int           `opt:"count"`
	Node        string         `opt:"node"`
	Placement   string         `opt:"placement"`
	Maintenance []string       `opt:"maintenance"`
	VNet        int            `opt:"vnet"`
	VNetCount   int            `opt:"vnet_count"`
	Storage     string         `opt:"storage"`
	Full        bool           `opt:"full"`
	CIUser      string         `opt:"ciuser"`
	CIPassword  string         `opt:"cipassword"`
	SSHKeys     *[]string      `opt:"sshkeys"`
	Tags        []string       `opt:"tags"`
	Description string         `opt:"description"`
	Parallel    int            `opt:"parallel"`
	Timeout     int            `opt:"timeout"`
	Adopt       bool           `opt:"adopt"`
	// PlannedVNets: in check mode, the VNets this run's tenant_vrf would create (Options.PlannedVNets).
	PlannedVNets []string `opt:"planned_vnets"`
	// Tenants converges many tenants' VMs in one run (many.go): name, index and VMs per entry.
	Tenants *[]TenantOption `opt:"tenants"`
}

// Settings are the options a VM entry may set for itself; nil is "not given".
type Settings struct {
	Cores  *int `opt:"cores"`
	Memory *int `opt:"memory"`
	// Disk is a size with a unit ("20G", PVE's form) or a whole number of GiB (20, the tenant
	// contract's tenant.vms.disk): raw, so that a number is not turned into the string "20".
	Disk     *any    `opt:"disk"`
	Template *string `opt:"template"`
	State    *string `opt:"state"`
}

// VMOption is one entry of vms.
type VMOption struct {
	Settings
	Index *int `opt:"index"`
	// VNet is this VM's VNet (tenant.vms.vnet); nil takes the top-level vnet.
	VNet *int `opt:"vnet"`
}

// over returns s with every setting s leaves out taken from top.
func (s Settings) over(top Settings) Settings {
	orTop(&s.Cores, top.Cores)
	orTop(&s.Memory, top.Memory)
	orTop(&s.Disk, top.Disk)
	orTop(&s.Template, top.Template)
	orTop(&s.State, top.State)
	return s
}

func orTop[T any](own **T, top *T) {
	if *own == nil {
		*own = top
	}
}

// Module is tenant_vm: plugins/modules/tenant_vm.py documents it.
func Module() module.Entry { return module.Declare(spec(), handle) }

func spec() module.Spec {
	vmOpts := map[string]*module.Option{
		"index":    {Type: module.TypeInt},
		"cores":    {Type: module.TypeInt},
		"memory":   {Type: module.TypeInt},
		"disk":     {Type: module.TypeRaw},
		"template": {Type: module.TypeStr},
		"state":    {Type: module.TypeStr, Choices: stateChoices},
		"vnet":     {Type: module.TypeInt},
	}
	return module.Spec{
		Options: pve.WithConnectionOptions(map[string]*module.Option{
			"name":          {Type: module.TypeStr, Aliases: []string{"tenant"}},
			"index":         {Type: module.TypeInt},
			"site":          {Type: module.TypeDict},
			"vms":           {Type: module.TypeList, Elements: module.TypeDict, Options: vmOpts},
			"count":         {Type: module.TypeInt},
			"state":         {Type: module.TypeStr, Default: "started", Choices: stateChoices},
			"cores":         {Type: module.TypeInt},
			"memory":        {Type: module.TypeInt},
			"disk":          {Type: module.TypeRaw},
			"template":      {Type: module.TypeStr},
			"node":          {Type: module.TypeStr},
			"placement":     {Type: module.TypeStr, Default: "first", Choices: []any{"first", "spread"}},
			"maintenance":   {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
			"vnet":          {Type: module.TypeInt, Default: 0},
			"vnet_count":    {Type: module.TypeInt, Default: 1},
			"storage":       {Type: module.TypeStr},
			"full":          {Type: module.TypeBool, Default: false},
			"ciuser":        {Type: module.TypeStr},
			"cipassword":    {Type: module.TypeStr, NoLog: true},
			"sshkeys":       {Type: module.TypeList, Elements: module.TypeStr},
			"tags":          {Type: module.TypeList, Elements: module.TypeStr},
			"description":   {Type: module.TypeStr},
			"parallel":      {Type: module.TypeInt, Default: DefaultParallel},
			"timeout":       {Type: module.TypeInt, Default: 600},
			"adopt":         {Type: module.TypeBool, Default: false},
			"planned_vnets": {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
			"tenants":       tenantsOption(vmOpts),
		}),
		// tenants stands for name, index and each tenant's VMs
		MutuallyExclusive: [][]string{{"vms", "count"}, {"name", "tenants"}, {"index", "tenants"}, {"vms", "tenants"}, {"count", "tenants"},
			{"vnet_count", "tenants"}},
		RequiredOneOf:     [][]string{{"vms", "count", "tenants"}, {"name", "tenants"}, {"index", "tenants"}},
		SupportsCheckMode: true,
	}
}

// Declarations turns the module's options into one Desired per VM, every identifier taken
// from the plan of internal/plan.
func Declarations(m *ModuleOptions) ([]Desired, error) {
	site := plan.DefaultSite()
	if o := m.Site; o != nil {
		s, err := plan.SiteFromMap(o)
		if err != nil {
			return nil, fmt.Errorf("site: %w", err)
		}
		site = s
	}
	decls, own, maxK, err := declared(m)
	if err != nil {
		return nil, err
	}
	t, err := site.Tenant(m.Name, m.Index, max(maxK, 1), m.VNetCount)
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
	tags, err := ownedTags(m.Tags, t)
	if err != nil {
		return nil, err
	}
	var sshkeys []string
	if m.SSHKeys != nil {
		sshkeys = normalizeKeyLines(*m.SSHKeys)
		if sshkeys == nil {
			sshkeys = []string{}
		}
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
			Full: m.Full, Storage: m.Storage,
			Bridge: t.VNets[pv.VNet].ID, Model: "virtio",
			IPConfig0:  Props{"ip": pv.CIDR, "gw": pv.Gateway.String()},
			Nameserver: []string{site.Resolver.String()}, SearchDomain: t.DNSZone,
			CIUser: m.CIUser, SSHKeys: sshkeys, CIPassword: m.CIPassword,
			Tags: tags, Description: m.Description, Adopt: m.Adopt,
		}
		if d.Description == "" {
			d.Description = fmt.Sprintf("%s: VM %d of tenant %s, managed by deevnet.tenant.tenant_vm", pv.FQDN, dc.index, t.Name)
		}
		if err := d.settle(dc.opts.over(m.Settings)); err != nil {
			return nil, err
		}
		if d.Adopt && (d.State == StateRebuilt || d.State == StateAbsent) {
			return nil, fmt.Errorf("state: %s cannot be combined with adopt (a takeover never destroys or recreates a VM)", d.State)
		}
		if err := d.Validate(); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// decl is one declared VM: its index in the tenant and the settings its vms entry gives.
type decl struct {
	index int
	opts  Settings
}

// declared lists the VMs the options declare, count's first and then each vms entry's (an
// index repeated is refused later, naming the VM), with each entry's own VNet (vnet.go) and
// the highest index, which sizes the plan.
func declared(m *ModuleOptions) (decls []decl, own []vmVNet, maxK int, err error) {
	if m.Count != nil {
		n := *m.Count
		if n < 0 {
			return nil, nil, 0, fmt.Errorf("count %d: must be 0 or more", n)
		}
		for k := 1; k <= n; k++ {
			decls = append(decls, decl{index: k})
		}
	}
	for i, e := range m.VMs {
		k := i + 1
		if e.Index != nil {
			k = *e.Index
		}
		if k < 1 {
			return nil, nil, 0, fmt.Errorf("vms[%d].index %d: VM indexes start at 1", i, k)
		}
		decls = append(decls, decl{index: k, opts: e.Settings})
		own = append(own, vmVNet{pos: i, k: k, vnet: e.VNet})
	}
	for _, d := range decls {
		maxK = max(maxK, d.index)
	}
	return decls, own, maxK, nil
}

// ownedTags are the tenant's owner tag and the user's tags, normalised; a user's tag that
// would label the VMs as another tenant's is refused. The tag is a label for people: ownership
// is read from the pool alone (OwnerOf), since a tenant's token can set any tag.
func ownedTags(user []string, t plan.Tenant) ([]string, error) {
	tags, err := NormalizeTags(append([]string{t.OwnerTag}, user...))
	if err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	for _, tag := range tags {
		if o := ownerFromTags([]string{tag}); o != "" && o != strings.ToLower(t.Name) {
			return nil, fmt.Errorf("tags: %q would mark the VMs as tenant %s's; tenant- tags are reserved for ownership", tag, o)
		}
	}
	return tags, nil
}

// settle sets d's state and sizes from the VM's settings (its own over the top-level ones).
// Zero inside Desired means "not managed"; a zero the user gave is a mistake, not that.
func (d *Desired) settle(set Settings) error {
	d.State = State(*set.State)
	if set.Cores != nil {
		if v := *set.Cores; v < 1 {
			return fmt.Errorf("VM %s: cores %d: must be in 1..512 (leave it out to keep the template's)", d.Name, v)
		}
		d.Cores = *set.Cores
	}
	if set.Memory != nil {
		if v := *set.Memory; v < 16 {
			return fmt.Errorf("VM %s: memory %d: must be at least 16 (MiB; leave it out to keep the template's)", d.Name, v)
		}
		d.Memory = *set.Memory
	}
	if set.Template != nil {
		d.Template = *set.Template
	}
	if set.Disk != nil {
		n, err := diskBytes(*set.Disk)
		if err != nil {
			return fmt.Errorf("VM %s: %w", d.Name, err)
		}
		d.Disk = n
	}
	return nil
}

// diskBytes reads disk: a whole number is GiB (the tenant contract's tenant.vms.disk), a string a
// size with a unit as PVE writes it ("20G"); a string without a unit is refused, not read as bytes.
func diskBytes(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case string:
		if x == "" {
			return 0, nil
		}
		n, err := ParseSize(x)
		if err != nil {
			return 0, fmt.Errorf("disk: %w", err)
		}
		if n < 1<<20 {
			return 0, fmt.Errorf("disk %q: give a size with a unit, e.g. \"20G\", or a whole number of GiB, e.g. 20", x)
		}
		return n, nil
	case json.Number:
		g, err := strconv.ParseInt(x.String(), 10, 64)
		if err != nil || g < 1 || g > 1<<20 {
			return 0, fmt.Errorf("disk %s: a number is GiB, a whole number from 1 to 1048576 (or give a size with a unit, e.g. \"20G\")", x)
		}
		return g << 30, nil
	case int:
		return diskBytes(json.Number(strconv.Itoa(x)))
	case int64:
		return diskBytes(json.Number(strconv.FormatInt(x, 10)))
	case float64:
		return diskBytes(json.Number(strconv.FormatFloat(x, 'f', -1, 64)))
	default:
		return 0, fmt.Errorf("disk: a %T; give a whole number of GiB (20) or a size with a unit (\"20G\")", v)
	}
}

// placement returns the node a new VM k is cloned on. "first" (the default): O(node), else the
// site's first node not in maintenance. "spread": round-robin over the site's nodes not in
// maintenance by VM index (VM k on node (k-1) mod n), so a VM's node does not depend on how many
// VMs are declared. Only creation follows it: an existing VM stays where it is (converge reads its
// node back), which keeps the module idempotent and never migrates; a VM created while a node was
// in maintenance stays on the node it got.
func placement(m *ModuleOptions, nodes []string) (func(k int) string, error) {
	avail := available(nodes, m.Maintenance)
	switch m.Placement {
	case "spread":
		if m.Node != "" {
			return nil, fmt.Errorf("node: %q cannot be combined with placement spread (spread places VMs over the site's nodes)", m.Node)
		}
		if len(nodes) == 0 {
			return nil, fmt.Errorf("placement: spread needs the site plan's nodes (site.nodes is empty)")
		}
		if len(avail) == 0 {
			return nil, fmt.Errorf("maintenance: every node of the site (%s) is in maintenance: no node to place VMs on", strings.Join(nodes, ", "))
		}
		return func(k int) string { return avail[(k-1)%len(avail)] }, nil
	default:
		node := m.Node
		if node == "" && len(avail) > 0 {
			node = avail[0]
		}
		if node == "" && len(nodes) > 0 {
			return nil, fmt.Errorf("maintenance: every node of the site (%s) is in maintenance: no node to place VMs on", strings.Join(nodes, ", "))
		}
		if node == "" {
			return nil, fmt.Errorf("node: required (the site plan names no node)")
		}
		return func(int) string { return node }, nil
	}
}

// handle is tenant_vm's handler.
func handle(m *module.Module, o *ModuleOptions) (module.Result, error) {
	want, err := declarationsOf(o)
	if err != nil {
		return module.Result{}, err
	}
	par := o.Parallel
	if par < 1 || par > MaxParallel {
		return module.Result{}, fmt.Errorf("parallel %d: must be in 1..%d", par, MaxParallel)
	}
	if o.Timeout < 1 {
		return module.Result{}, fmt.Errorf("timeout %d: must be at least 1 second", o.Timeout)
	}
	m.AddSecret(o.CIPassword)
	api, err := o.Client(m)
	if err != nil {
		return module.Result{}, err
	}
	// The run's first two reads, side by side: /nodes, then Converge's inventory.
	api.Prefetch(m.Context(), pve.NodesRead(), inventoryRead())
	// before anything else is read: which nodes are offline, and is every maintenance entry one
	status, err := pve.NodeStatus(m.Context(), api)
	if err != nil {
		return module.Result{}, err
	}
	if err := pve.CheckMaintenance(o.Maintenance, status); err != nil {
		return module.Result{}, err
	}
	results, cerr := Converge(m.Context(), api, want, Options{
		Parallel: par, TaskTimeout: time.Duration(o.Timeout) * time.Second, CheckMode: m.CheckMode,
		Nodes: Nodes{Status: status, Maintenance: o.Maintenance}, PlannedVNets: o.PlannedVNets,
	})
	res := module.Result{Values: map[string]any{"vms": results, "pending_nodes": pendingNodes(results)}}
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
	}
	res.Diffs = diffPlan(results).Diffs()
	res.Msg = summary(len(want), counts, m.CheckMode)
	if cerr != nil {
		return res, module.Fail(cerr.Error(), res.Values)
	}
	return res, nil
}

// diffPlan is the run in reconcile's vocabulary, for the diff: one change per VM in declared
// order, the VMs left as they are too (the diff shows every declared VM, so a run's diff lists
// the same entries whatever it did). Before and After are the result's maps: an absent side is
// already {} there, and a nil After (a VM whose write failed before its config was read back)
// is a typed nil, which Diffs keeps and the diff shows as null, as it always has.
func diffPlan(results []*Result) reconcile.Plan {
	p := make(reconcile.Plan, 0, len(results))
	for _, r := range results {
		p = append(p, reconcile.Change{
			Kind: "vm", ID: fmt.Sprintf("%s (vmid %d)", r.Name, r.VMID), Action: vmAction(r.Actions),
			Before: r.Before, After: r.After,
		})
	}
	return p
}

// vmAction names what the run did (or would do) to a VM: a clone creates it (a rebuild too:
// the VM after is a new clone), a destroy alone deletes it, any other write updates it.
func vmAction(actions []string) reconcile.Action {
	switch {
	case slices.Contains(actions, "clone"):
		return reconcile.Create
	case slices.Contains(actions, "destroy"):
		return reconcile.Delete
	case len(actions) > 0:
		return reconcile.Update
	}
	return reconcile.Unchanged
}

func summary(n int, counts map[string]int, check bool) string {
	if len(counts) == 0 {
		return fmt.Sprintf("%d VM(s) already as declared", n)
	}
	var parts []string
	for _, a := range []string{"destroy", "clone", "pool", "config", "resize", "start", "stop"} {
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
