package vm

// Taking over a VM another tool built (adopt: true, docs/migrate-from-terraform.md). A VM that
// carries no owner tag and sits in no pool is nobody's to tenant_vm, which refuses it; adopt
// takes it when it is the plan's VM by identity (vmid, name, pool) and then writes only what
// the plan needs: the pool membership and the owner tag (with the other managed keys). It
// never destroys, clones, resizes or restarts the VM, so its MAC, disk and uptime stay.

import (
	"fmt"
	"strings"
)

// checkAdopt is checkOwner for a takeover: it refuses a template, another tenant's owner tag or
// pool, and a name that is not the plan's, listing every identity field that differs. It
// returns whether the VM must still join the tenant's pool.
func checkAdopt(d Desired, o Observed) (joinPool bool, err error) {
	who := fmt.Sprintf("vmid %d (%q)", d.VMID, o.Name)
	if o.Template {
		return false, fmt.Errorf("VM %s: adopt: %s is a template; refusing to take it over", d.Name, who)
	}
	var diffs []string
	if owner := ownerFromTags(o.Tags); owner != "" && owner != strings.ToLower(d.Tenant) {
		diffs = append(diffs, fmt.Sprintf("tags: owner tag %s (plan %s)", OwnerTag(owner), OwnerTag(d.Tenant)))
	}
	if o.Pool != "" && o.Pool != d.Pool {
		diffs = append(diffs, fmt.Sprintf("pool: %s (plan %s)", o.Pool, d.Pool))
	}
	if o.Name != d.Name {
		diffs = append(diffs, fmt.Sprintf("name: %q (plan %q)", o.Name, d.Name))
	}
	if len(diffs) > 0 {
		return false, fmt.Errorf("VM %s: adopt: %s does not match the plan: %s; refusing to take it over", d.Name, who, strings.Join(diffs, "; "))
	}
	return o.Pool == "", nil
}

// checkAdoptDelta refuses a takeover whose plan would change the VM's disk: adopt keeps the
// disk as it is (a bigger disk is a later, ordinary run without adopt).
func checkAdoptDelta(d Desired, dl Delta) error {
	if dl.Resize != nil {
		return fmt.Errorf("VM %s: adopt: disk: %s would grow to %s; a takeover never changes a disk (declare the size the VM has, grow it after the takeover)",
			d.Name, dl.Resize.Key, FormatSize(dl.Resize.Size))
	}
	return nil
}

// poolChange is the diff entry of joining the tenant's pool.
func poolChange(d Desired) Change { return Change{Key: "pool", Before: nil, After: d.Pool} }

// joinPool adds the VM to the tenant's pool (PVE 9's PUT /pools, poolid in the body): the
// membership that gives the tenant's token its rights on the VM.
func (a *applier) joinPool() error {
	if !a.p.joinPool {
		return nil
	}
	d, r := a.p.d, a.p.res
	r.Actions = append(r.Actions, "pool")
	r.Changed = true
	body := map[string]any{"poolid": d.Pool, "vms": fmt.Sprint(d.VMID)}
	if err := a.api.Put(a.ctx, "/pools", body, nil); err != nil {
		return fmt.Errorf("VM %s (vmid %d): adopt: joining pool %s: %w", d.Name, d.VMID, d.Pool, err)
	}
	return nil
}
