package vm

// Carrying out one VM's plan: destroy, clone, config, resize, power, each waited for.

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/reconcile"
)

// apply runs one VM's writes in order: stop and destroy, clone, config, resize, power.
func apply(ctx context.Context, api API, p *vmPlan, timeout time.Duration) error {
	a := &applier{ctx: ctx, api: api, p: p, timeout: timeout, running: p.obs != nil && p.obs.Status == "running"}
	d, r := p.d, p.res
	if p.away { // its node is offline: nothing can reach it
		return nil
	}
	if p.destroy {
		if err := a.destroy(); err != nil {
			return err
		}
		if d.State == StateAbsent {
			r.After = map[string]any{}
			return nil
		}
	}
	if d.State == StateAbsent {
		r.After = map[string]any{}
		return nil
	}
	cur, delta := p.cur, p.delta
	if p.clone {
		var err error
		if cur, delta, err = a.clone(); err != nil {
			return err
		}
	}
	r.Changes = append(r.Changes, delta.Changes...)
	if err := a.joinPool(); err != nil {
		return err
	}
	if err := a.config(delta); err != nil {
		return err
	}
	if err := a.resize(delta); err != nil {
		return err
	}
	a.recordAfter(cur, delta)
	if err := a.power(); err != nil {
		return err
	}
	r.Status = map[bool]string{true: "running", false: "stopped"}[a.running]
	return nil
}

// applier carries one VM's apply: the plan, and whether the VM runs now.
type applier struct {
	ctx     context.Context
	api     API
	p       *vmPlan
	timeout time.Duration
	running bool
}

// base is the VM's API path on node.
func (a *applier) base(node string) string {
	return fmt.Sprintf("/nodes/%s/qemu/%d", url.PathEscape(node), a.p.d.VMID)
}

// task waits for a task the VM's write started, at most the module's timeout.
func (a *applier) task(what, upid string) error {
	d := a.p.d
	a.p.res.Changed = true
	tctx, cancel := context.WithTimeout(a.ctx, a.timeout)
	defer cancel()
	if err := a.api.WaitTask(tctx, upid); err != nil {
		if tctx.Err() != nil && a.ctx.Err() == nil {
			return fmt.Errorf("VM %s (vmid %d): %s: task %s did not finish within %s (it may still be running on the node)", d.Name, d.VMID, what, upid, a.timeout)
		}
		return fmt.Errorf("VM %s (vmid %d): %s: %w", d.Name, d.VMID, what, err)
	}
	return nil
}

// post is an asynchronous write (a POST answered with a task), recorded as action what.
func (a *applier) post(what, path string, body map[string]any) error {
	d := a.p.d
	a.p.res.Actions = append(a.p.res.Actions, what)
	var upid string
	if err := a.api.Post(a.ctx, path, body, &upid); err != nil {
		return fmt.Errorf("VM %s (vmid %d): %s: %w", d.Name, d.VMID, what, err)
	}
	return a.task(what, upid)
}

// destroy stops the VM if it runs, then destroys it with its disks.
func (a *applier) destroy() error {
	p, d, r := a.p, a.p.d, a.p.res
	if a.running {
		if err := a.post("stop", a.base(p.node)+"/status/stop", nil); err != nil {
			return err
		}
		a.running = false
	}
	r.Actions = append(r.Actions, "destroy")
	var upid string
	q := url.Values{"purge": {"1"}, "destroy-unreferenced-disks": {"1"}}
	if err := a.api.Delete(a.ctx, a.base(p.node), q, &upid); err != nil {
		return fmt.Errorf("VM %s (vmid %d): destroy: %w", d.Name, d.VMID, err)
	}
	if err := a.task("destroy", upid); err != nil {
		return err
	}
	r.Status = "absent"
	return nil
}

// clone clones the template and returns the clone's config and what still differs from it.
func (a *applier) clone() (map[string]string, Delta, error) {
	p, d, r := a.p, a.p.d, a.p.res
	p.node = d.Node
	r.Node = d.Node
	body := map[string]any{"newid": d.VMID, "name": d.Name, "pool": d.Pool, "full": reconcile.BoolInt(d.Full)}
	if d.Storage != "" {
		body["storage"] = d.Storage
	}
	// PVE clones on the template's node; another node is a target (PVE refuses it unless the
	// template's disks are on shared storage, and says so). A full clone onto a named storage
	// (the tenant's own, local to each node) is made on the template's node and then migrated:
	// clone_vm refuses a target with a storage that is not shared ("can't clone to non-shared
	// storage"), and an offline migration copies local disks to the same storage on the target.
	from, migrate := d.Node, false
	if p.tmplNode != "" && p.tmplNode != d.Node {
		from = p.tmplNode
		if d.Storage != "" {
			migrate = true
		} else {
			body["target"] = d.Node
		}
	}
	src := fmt.Sprintf("/nodes/%s/qemu/%d/clone", url.PathEscape(from), p.template)
	if err := a.post("clone", src, body); err != nil {
		return nil, Delta{}, fmt.Errorf("%w (clone from template %d)", err, p.template)
	}
	if migrate {
		if err := a.post("migrate", a.base(from)+"/migrate", map[string]any{"target": d.Node}); err != nil {
			return nil, Delta{}, fmt.Errorf("%w (the clone stays on the template's node %s, where later runs converge it, since an existing VM stays where it is; to have it on %s, remove VM %d and run again)", err, from, d.Node, d.VMID)
		}
	}
	cur, _, err := ReadConfig(a.ctx, a.api, d.Node, d.VMID)
	if err != nil {
		return nil, Delta{}, fmt.Errorf("VM %s: after clone: %w", d.Name, err)
	}
	delta := Compare(d, cur)
	r.Warnings = append(r.Warnings, delta.Warnings...)
	if !HasCloudInitDrive(cur) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("VM %s: template %d has no cloud-init drive: ipconfig0, nameserver and sshkeys will not reach the guest", d.Name, p.template))
	}
	a.running = false
	return cur, delta, nil
}

// config writes the changed config parameters in one PUT.
func (a *applier) config(delta Delta) error {
	if len(delta.Params) == 0 {
		return nil
	}
	p, d, r := a.p, a.p.d, a.p.res
	r.Actions = append(r.Actions, "config")
	r.Changed = true
	// PUT is PVE's synchronous config update: its errors (bad value, SSH key validation,
	// permission) come back on this request, with PVE's own message.
	if err := a.api.Put(a.ctx, a.base(p.node)+"/config", delta.Params, nil); err != nil {
		return fmt.Errorf("VM %s (vmid %d): config %s: %w", d.Name, d.VMID, strings.Join(slices.Sorted(maps.Keys(delta.Params)), ", "), err)
	}
	if a.running {
		var later []string
		for _, c := range delta.Changes {
			if c.Key == "cores" || c.Key == "memory" {
				later = append(later, c.Key)
			}
		}
		if len(later) > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("VM %s is running: %s may stay pending until it restarts", d.Name, strings.Join(later, ", ")))
		}
	}
	return nil
}

// resize grows the disk when the plan says so.
func (a *applier) resize(delta Delta) error {
	if delta.Resize == nil {
		return nil
	}
	p, d, r := a.p, a.p.d, a.p.res
	r.Actions = append(r.Actions, "resize")
	var upid string
	body := map[string]any{"disk": delta.Resize.Key, "size": FormatSize(delta.Resize.Size)}
	if err := a.api.Put(a.ctx, a.base(p.node)+"/resize", body, &upid); err != nil {
		return fmt.Errorf("VM %s (vmid %d): resize %s: %w", d.Name, d.VMID, delta.Resize.Key, err)
	}
	if upid != "" {
		if err := a.task("resize", upid); err != nil {
			return err
		}
	}
	r.Changed = true
	return nil
}

// recordAfter sets the result's after values and MAC: the config read plus the changes written.
func (a *applier) recordAfter(cur map[string]string, delta Delta) {
	r := a.p.res
	after := map[string]any{}
	for k, v := range Values(a.p.d, cur) {
		after[k] = v
	}
	for _, c := range delta.Changes {
		after[c.Key] = c.After
	}
	r.After = after
	if mac := ParseNIC(fmt.Sprint(delta.Params["net0"])).MAC; mac != "" {
		r.MAC = mac
	} else if m := ParseNIC(cur["net0"]).MAC; m != "" {
		r.MAC = m
	}
}

// power starts or stops the VM as its state asks.
func (a *applier) power() error {
	base := a.base(a.p.node)
	switch power(a.p.d.State, a.running) {
	case "start":
		if err := a.post("start", base+"/status/start", nil); err != nil {
			return err
		}
		a.running = true
	case "stop":
		if err := a.post("stop", base+"/status/stop", nil); err != nil {
			return err
		}
		a.running = false
	}
	return nil
}
