package vm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/reconcile"
)

// DefaultParallel is how many VMs converge at once. PVE clones from a template under a shared
// lock, so clones of one template run side by side; each API call holds one of pvedaemon's
// few workers (3 by default) only for the short synchronous part, and the tasks run outside
// them. Four keeps the node responsive for other clients while hiding most of the latency.
const DefaultParallel = 4

// MaxParallel bounds the option: more would only queue on pvedaemon's workers.
const MaxParallel = 16

// Options tune one Converge call.
type Options struct {
	Parallel    int           // VMs at once; 0: DefaultParallel
	TaskTimeout time.Duration // per PVE task; 0: 10 minutes
	CheckMode   bool          // read and compare only
	// PlannedVNets are the VNets another task of the same check run would create (the tenant role's
	// tenant_vrf, which check mode does not run): net0 on one that does not exist yet is planned, with
	// a warning saying so, where a real run (and check mode without it) refuses it.
	PlannedVNets []string
	Nodes        Nodes // offline nodes and maintenance (nodes.go)
}

// Result is the outcome for one VM.
type Result struct {
	Name     string   `json:"name"`
	VMID     int      `json:"vmid"`
	Node     string   `json:"node"`
	State    State    `json:"state"`
	Changed  bool     `json:"changed"`
	Actions  []string `json:"actions"`         // clone, config, resize, start, stop, destroy, in order
	Changes  []Change `json:"changes"`         // config keys, before and after
	Status   string   `json:"status"`          // running, stopped, absent (after the run; predicted in check mode)
	MAC      string   `json:"mac,omitempty"`   // net0's MAC, when known
	Pending  []string `json:"pending"`         // keys PVE keeps pending until the next start
	Warnings []string `json:"warnings"`        // also reported through the module
	Error    string   `json:"error,omitempty"` // this VM failed
	// PendingNode is the offline node in maintenance the VM was left on, this run.
	PendingNode string         `json:"pending_node,omitempty"`
	Before      map[string]any `json:"-"` // for the diff
	After       map[string]any `json:"-"`
}

// vmPlan is what the read phase decided for one VM.
type vmPlan struct {
	d        Desired
	obs      *Observed
	node     string
	cur      map[string]string
	destroy  bool
	clone    bool
	template int
	tmplNode string // the node holding the template: clones are requested there
	away     bool   // on an offline node in maintenance: left as it is
	delta    Delta
	joinPool bool // adopt: the VM joins the tenant's pool
	res      *Result
}

// Converge brings every VM to its declaration. It reads first (one /cluster/resources, one
// /pending per existing VM), checks everything a write would need (template, pool, VNet,
// storage, ownership) and only then writes, VMs in parallel. A failure of one VM does not stop
// the others; the error lists every failed VM. In check mode nothing is written and the
// results say what would change.
//
// It is a reconcile.Run: the plan is every VM's plan, act applies them all, and a run with
// nothing to do, like check mode, writes nothing and reports what predict derives from the
// plan (for such a run that is what is).
func Converge(ctx context.Context, api API, want []Desired, opts Options) ([]*Result, error) {
	opts = opts.withDefaults()
	plans, acted, err := reconcile.Run(ctx, opts.CheckMode, func(ctx context.Context) ([]*vmPlan, bool, error) {
		plans, err := planAll(ctx, api, want, opts)
		return plans, slices.ContainsFunc(plans, (*vmPlan).acts), err
	}, func(ctx context.Context, plans []*vmPlan) error {
		return applyAll(ctx, api, plans, opts)
	})
	if err != nil && !acted {
		return nil, err
	}
	results := make([]*Result, len(plans))
	for i, p := range plans {
		if !acted {
			predict(p)
		}
		results[i] = p.res
	}
	return results, err
}

// withDefaults fills the options left at zero and bounds the parallelism.
func (o Options) withDefaults() Options {
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.Parallel > MaxParallel {
		o.Parallel = MaxParallel
	}
	if o.TaskTimeout <= 0 {
		o.TaskTimeout = 10 * time.Minute
	}
	return o
}

// planAll validates the declarations, reads the inventory once and plans every VM (par at
// once), then prechecks what the writes rely on. It writes nothing; any error refuses the run.
func planAll(ctx context.Context, api API, want []Desired, opts Options) ([]*vmPlan, error) {
	seen := map[int]string{}
	for _, d := range want {
		if err := d.Validate(); err != nil {
			return nil, err
		}
		if other, dup := seen[d.VMID]; dup {
			return nil, fmt.Errorf("VM %s and VM %s both map to vmid %d", other, d.Name, d.VMID)
		}
		seen[d.VMID] = d.Name
	}
	inv, err := ReadInventory(ctx, api)
	if err != nil {
		return nil, err
	}
	plans := make([]*vmPlan, len(want))
	errs := make([]error, len(want))
	forEach(len(want), opts.Parallel, func(i int) {
		plans[i], errs[i] = planVM(ctx, api, inv, want[i], opts.Nodes)
	})
	if err := joinErrors(errs); err != nil {
		return nil, err
	}
	if err := precheck(ctx, api, inv, plans, opts); err != nil {
		return nil, err
	}
	// The pool's guests outside the tenant's range squat another index's vmids: said on the result
	// of each pool's first VM (a tenant's VMs share its pool), never refused here, since tenant_vm
	// does not manage them; verify fails on them.
	warned := map[string]bool{}
	for i, d := range want {
		if !warned[d.Pool] {
			warned[d.Pool] = true
			first, last := vmidRange(d.VMID)
			plans[i].res.Warnings = append(plans[i].res.Warnings, Squats(inv, d.Pool, first, last)...)
		}
	}
	return plans, nil
}

// applyAll applies every plan, opts.Parallel at once. Each VM's failure is kept in its result
// and does not stop the others; the error joins them all.
func applyAll(ctx context.Context, api API, plans []*vmPlan, opts Options) error {
	errs := make([]error, len(plans))
	forEach(len(plans), opts.Parallel, func(i int) {
		errs[i] = apply(ctx, api, plans[i], opts.TaskTimeout)
		if errs[i] != nil {
			plans[i].res.Error = errs[i].Error()
		}
	})
	return joinErrors(errs)
}

// forEach runs f(0..n-1) on at most par goroutines.
func forEach(n, par int, f func(i int)) {
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}(i)
	}
	wg.Wait()
}

func joinErrors(errs []error) error {
	var msgs []string
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// planVM reads one VM and decides what to do; it writes nothing.
func planVM(ctx context.Context, api API, inv *Inventory, d Desired, nodes Nodes) (*vmPlan, error) {
	p := &vmPlan{d: d, node: d.Node, res: &Result{Name: d.Name, VMID: d.VMID, Node: d.Node, State: d.State,
		Actions: []string{}, Changes: []Change{}, Pending: []string{}, Warnings: []string{}}}
	if o, ok := inv.VMs[d.VMID]; ok {
		p.obs = &o
		p.node = o.Node
		p.res.Node = o.Node
		if d.Adopt {
			join, err := checkAdopt(d, o)
			if err != nil {
				return nil, err
			}
			p.joinPool = join
		} else if err := checkOwner(d, o); err != nil {
			return nil, err
		}
		if o.Lock != "" {
			return nil, fmt.Errorf("VM %s (vmid %d) is locked (%s): a PVE task is working on it; run again when it has finished", d.Name, d.VMID, o.Lock)
		}
		if leave, err := nodes.leave(d, o.Node); err != nil || leave {
			if leave {
				p.res.Status = o.Status
				p.leaveVM(o.Node)
			}
			return p, err
		}
		cur, pending, err := ReadConfig(ctx, api, o.Node, d.VMID)
		if err != nil {
			return nil, fmt.Errorf("VM %s: %w", d.Name, err)
		}
		if l := cur["lock"]; l != "" {
			return nil, fmt.Errorf("VM %s (vmid %d) is locked (%s): a PVE task is working on it; run again when it has finished", d.Name, d.VMID, l)
		}
		p.cur = cur
		if pending != nil {
			p.res.Pending = pending
		}
		p.res.MAC = ParseNIC(cur["net0"]).MAC
		p.res.Before = Values(d, cur)
		p.res.Status = o.Status
	} else {
		// /cluster/resources lists only what the token may audit. /cluster/nextid answers for
		// every vmid, so it tells a free vmid from one that hides another tenant's VM.
		if err := vmidFree(ctx, api, d); err != nil {
			return nil, err
		}
		p.res.Before = map[string]any{}
		p.res.Status = "absent"
	}

	switch d.State {
	case StateAbsent:
		p.destroy = p.obs != nil
		return p, nil
	case StateRebuilt:
		p.destroy = p.obs != nil
		p.clone = true
	default:
		p.clone = p.obs == nil
	}
	if p.clone {
		id, err := resolveTemplate(inv, d)
		if err != nil {
			return nil, err
		}
		p.template = id
		p.tmplNode = inv.VMs[id].Node
		if err := nodes.cloneOn(d, id, p.tmplNode); err != nil {
			return nil, err
		}
	} else {
		if err := keepVNet(d, p.cur); err != nil {
			return nil, err
		}
		p.delta = Compare(d, p.cur)
		if d.Adopt {
			if err := checkAdoptDelta(d, p.delta); err != nil {
				return nil, err
			}
			if p.joinPool {
				p.delta.Changes = append([]Change{poolChange(d)}, p.delta.Changes...)
			}
		}
		p.res.Warnings = append(p.res.Warnings, p.delta.Warnings...)
		if !HasCloudInitDrive(p.cur) {
			p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("VM %s has no cloud-init drive: ipconfig0, nameserver and sshkeys will not reach the guest", d.Name))
		}
	}
	return p, nil
}

// vmidRange is the tenant range (ADR-0002) that holds vmid, a declared VM's.
func vmidRange(vmid int) (first, last int) {
	idx, _ := plan.VMIDIndex(vmid)
	return plan.VMIDRange(idx)
}

// vmidFree fails when vmid is taken by a VM the token cannot see.
func vmidFree(ctx context.Context, api API, d Desired) error {
	var id any
	err := api.Get(ctx, "/cluster/nextid", url.Values{"vmid": {strconv.Itoa(d.VMID)}}, &id)
	if err == nil {
		return nil
	}
	var ae *pve.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		// Naming the holder needs a credential that sees every pool: verify and the site
		// report read with the substrate's and name the tenant whose pool holds the vmid.
		return fmt.Errorf("VM %s: vmid %d is taken by a VM this token cannot see (held by another tenant's pool, or outside every pool); refusing to touch it; verify's site report, read with the substrate's credential, names the holder", d.Name, d.VMID)
	}
	return fmt.Errorf("VM %s: checking that vmid %d is free: %w", d.Name, d.VMID, err)
}

// checkOwner refuses a vmid that is not this tenant's: the VM sits in another pool (named by the
// tenant whose pool it is) or in none (someone else's hand-made VM). Only the pool counts: a tag
// is set by whoever may configure the VM, another tenant included (vm.OwnerOf).
func checkOwner(d Desired, o Observed) error {
	who := fmt.Sprintf("vmid %d (%q)", d.VMID, o.Name)
	if o.Template {
		return fmt.Errorf("VM %s: %s is a template; refusing to touch it", d.Name, who)
	}
	switch owner := OwnerOf(o); {
	case o.Pool == d.Pool:
		return nil
	case owner != "":
		return fmt.Errorf("VM %s: %s is held by tenant %s's pool %s, not %s; refusing to touch it", d.Name, who, owner, o.Pool, d.Pool)
	case o.Pool != "":
		return fmt.Errorf("VM %s: %s is in pool %s, not %s; refusing to touch it", d.Name, who, o.Pool, d.Pool)
	}
	return fmt.Errorf("VM %s: %s exists outside pool %s; refusing to touch a VM this tenant does not own (a tag does not make it the tenant's)", d.Name, who, d.Pool)
}

// resolveTemplate finds the template by vmid or by name among what the token can see.
func resolveTemplate(inv *Inventory, d Desired) (int, error) {
	if d.Template == "" {
		return 0, fmt.Errorf("VM %s: template: required to create the VM (vmid %d does not exist)", d.Name, d.VMID)
	}
	if id, err := strconv.Atoi(d.Template); err == nil {
		o, ok := inv.VMs[id]
		if !ok {
			return 0, fmt.Errorf("VM %s: template %d does not exist (or the token lacks VM.Audit on /vms/%d)", d.Name, id, id)
		}
		if !o.Template {
			return 0, fmt.Errorf("VM %s: template %d (%q) is a VM, not a template", d.Name, id, o.Name)
		}
		return id, nil
	}
	var ids []int
	for id, o := range inv.VMs {
		if o.Template && o.Name == d.Template {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	switch len(ids) {
	case 0:
		return 0, fmt.Errorf("VM %s: template %q: no template of that name (or the token lacks VM.Audit on it)", d.Name, d.Template)
	case 1:
		return ids[0], nil
	default:
		return 0, fmt.Errorf("VM %s: template %q is ambiguous: templates %v share the name; give its vmid", d.Name, d.Template, ids)
	}
}

// precheck verifies, once per run and before any write, what the planned writes rely on.
func precheck(ctx context.Context, api API, inv *Inventory, plans []*vmPlan, opts Options) error {
	pools, bridges, storages := map[string]bool{}, map[string]bool{}, map[[2]string]string{}
	for _, p := range plans {
		if p.clone {
			pools[p.d.Pool] = true
			if p.d.Storage != "" {
				storages[[2]string{p.d.Node, p.d.Storage}] = p.d.Name
				if p.tmplNode != "" {
					// the clone is made on the template's node, then migrated (applier.clone)
					storages[[2]string{p.tmplNode, p.d.Storage}] = p.d.Name
				}
			}
			if len(inv.Nodes) > 0 && !inv.Nodes[p.d.Node] {
				return fmt.Errorf("VM %s: node %q does not exist", p.d.Name, p.d.Node)
			}
		}
		if p.d.Bridge != "" && (p.clone || hasKey(p.delta.Changes, "net0")) {
			bridges[p.d.Bridge] = true
		}
	}
	for pool := range pools {
		if err := api.Get(ctx, "/pools/"+url.PathEscape(pool), nil, nil); err != nil {
			return fmt.Errorf("pool %s: cannot use it (onboarding creates it; check the token has Pool.Audit on /pool/%s): %w", pool, pool, err)
		}
	}
	for br := range bridges {
		var vnet map[string]any
		if err := api.Get(ctx, "/cluster/sdn/vnets/"+url.PathEscape(br), url.Values{"pending": {"1"}}, &vnet); err != nil {
			if opts.CheckMode && slices.Contains(opts.PlannedVNets, br) {
				// the plan says what it assumed: the real run reads the VNet tenant_vrf made before it
				for _, p := range plans {
					if p.d.Bridge == br {
						p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("VM %s: VNet %s does not exist yet; check mode plans net0 on it, since tenant_vrf creates it in this run (planned_vnets)", p.d.Name, br))
					}
				}
				continue
			}
			return fmt.Errorf("VNet %s: cannot use it for net0 (tenant_vrf creates it): %w", br, err)
		}
	}
	for k, name := range storages {
		content, ok := inv.Storages[k[0]][k[1]]
		if !ok {
			// PVE lists a storage to a token only with Datastore.Audit or AllocateSpace on it
			return fmt.Errorf("VM %s: storage %q is unknown on node %s (not registered there, or the token lacks Datastore.AllocateSpace on /storage/%s)", name, k[1], k[0], k[1])
		}
		if !slices.Contains(splitList(content), "images") {
			return fmt.Errorf("VM %s: storage %q does not hold VM images (content %q)", name, k[1], content)
		}
	}
	return nil
}

func hasKey(cs []Change, key string) bool {
	for _, c := range cs {
		if c.Key == key {
			return true
		}
	}
	return false
}

// desiredView is the diff's "after" for a VM that does not exist yet.
func desiredView(d Desired) map[string]any {
	out := map[string]any{"name": d.Name}
	if d.Cores > 0 {
		out["cores"] = d.Cores
	}
	if d.Memory > 0 {
		out["memory"] = d.Memory
	}
	if d.Bridge != "" {
		model := d.Model
		if model == "" {
			model = "virtio"
		}
		out["net0"] = model + ",bridge=" + d.Bridge
	}
	if len(d.IPConfig0) > 0 {
		out["ipconfig0"] = d.IPConfig0.Format("ip", "gw", "ip6", "gw6")
	}
	if d.Nameserver != nil {
		out["nameserver"] = strings.Join(d.Nameserver, " ")
	}
	if d.SearchDomain != "" {
		out["searchdomain"] = d.SearchDomain
	}
	if d.CIUser != "" {
		out["ciuser"] = d.CIUser
	}
	if d.SSHKeys != nil {
		out["sshkeys"] = normalizeKeyLines(d.SSHKeys)
	}
	if d.CIPassword != "" {
		out["cipassword"] = Masked
	}
	if d.Tags != nil {
		out["tags"] = strings.Join(d.Tags, ";")
	}
	if d.Description != "" {
		out["description"] = d.Description
	}
	if d.Disk > 0 {
		out["disk"] = FormatSize(d.Disk)
	}
	return out
}

// acts says whether apply would write anything for this VM.
func (p *vmPlan) acts() bool {
	acts, _ := p.actions()
	return len(acts) > 0
}

// actions lists, in order, what apply does to the VM, and whether the VM runs afterwards.
// predict reports them and acts decides from them, so the two cannot disagree.
func (p *vmPlan) actions() (acts []string, running bool) {
	acts = []string{}
	if p.away {
		return acts, false
	}
	running = p.obs != nil && p.obs.Status == "running"
	if p.destroy {
		if running {
			acts = append(acts, "stop")
		}
		acts = append(acts, "destroy")
		running = false
	}
	if p.d.State == StateAbsent {
		return acts, false
	}
	if p.clone {
		acts = append(acts, "clone", "config")
		if p.d.Disk > 0 {
			acts = append(acts, "resize")
		}
	} else {
		if p.joinPool {
			acts = append(acts, "pool")
		}
		if len(p.delta.Params) > 0 {
			acts = append(acts, "config")
		}
		if p.delta.Resize != nil {
			acts = append(acts, "resize")
		}
	}
	switch power(p.d.State, running) {
	case "start":
		acts = append(acts, "start")
		running = true
	case "stop":
		acts = append(acts, "stop")
		running = false
	}
	return acts, running
}

// predict fills the result of a VM apply did not run for (check mode, or a run with nothing
// to do) with what apply would do and leave.
func predict(p *vmPlan) {
	r := p.res
	acts, running := p.actions()
	r.Actions = append(r.Actions, acts...)
	r.Changed = len(r.Actions) > 0
	switch {
	case p.away:
		return
	case p.d.State == StateAbsent:
		r.After = map[string]any{}
		r.Status = "absent"
		return
	case p.clone:
		r.After = desiredView(p.d)
		r.Changes = changesBetween(r.Before, r.After)
	default:
		r.After = afterView(p)
		r.Changes = append(r.Changes, p.delta.Changes...)
	}
	r.Status = map[bool]string{true: "running", false: "stopped"}[running]
}

// afterView is Before with the delta applied.
func afterView(p *vmPlan) map[string]any {
	out := map[string]any{}
	for k, v := range p.res.Before {
		out[k] = v
	}
	for _, c := range p.delta.Changes {
		out[c.Key] = c.After
	}
	return out
}

func changesBetween(before, after map[string]any) []Change {
	keys := make([]string, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []Change{}
	for _, k := range keys {
		if fmt.Sprint(before[k]) != fmt.Sprint(after[k]) {
			out = append(out, Change{Key: k, Before: before[k], After: after[k]})
		}
	}
	return out
}

// power says which power action state needs: "start", "stop" or "".
func power(s State, running bool) string {
	switch s {
	case StateStarted, StateRebuilt:
		if !running {
			return "start"
		}
	case StateStopped:
		if running {
			return "stop"
		}
	}
	return ""
}
