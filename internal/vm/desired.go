package vm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deevnet/tenant/internal/plan"
)

// State is what the caller asks for one VM.
type State string

// States of a VM declaration.
const (
	StatePresent State = "present" // exists and configured; power left as it is (a new VM stays stopped)
	StateStarted State = "started" // present and running (the default)
	StateStopped State = "stopped" // present and stopped
	StateAbsent  State = "absent"  // stopped, then destroyed with purge
	StateRebuilt State = "rebuilt" // destroyed if it exists, cloned again, configured, started; always a change
)

// Desired is everything the module wants one VM to be. Zero values mean "not managed":
// the template's value is kept and never compared.
type Desired struct {
	Tenant string // owning tenant, e.g. "tdemo"
	Pool   string // tenant-tdemo
	VMID   int
	Name   string
	Node   string
	State  State

	Template string // vmid or name of the template to clone
	Full     bool   // full clone instead of linked
	Storage  string // target storage of a full clone

	Cores  int   // 0: unmanaged
	Memory int   // MiB, 0: unmanaged
	Disk   int64 // bytes, 0: unmanaged; grow only

	Bridge       string // the tenant's VNet
	Model        string // NIC model, virtio
	IPConfig0    Props  // ip=, gw=
	Nameserver   []string
	SearchDomain string
	CIUser       string   // "": unmanaged
	SSHKeys      []string // nil: unmanaged
	CIPassword   string   // set when the VM has none; never compared, never shown
	Tags         []string // normalised, owner tag included
	Description  string
}

// OwnerTag is the tag that marks a VM as belonging to tenant.
func OwnerTag(tenant string) string { return "tenant-" + strings.ToLower(tenant) }

// OwnerOf returns the tenant that owns a guest: the tenant whose pool ("tenant-<name>") holds
// it, "" when no tenant's pool does. Tags are not read: a tenant's token may set any tag on its
// own VMs (VM.Config.Options), so a tag is a claim anyone can forge, while only the substrate's
// credential puts a guest in a pool (Pool.Allocate on /pool/<id> of the pool it leaves and joins).
func OwnerOf(o Observed) string { return PoolOwner(o.Pool) }

// PoolOwner is the tenant whose pool pool is ("tenant-<name>"), "" for any other pool or none.
func PoolOwner(pool string) string {
	if rest, ok := strings.CutPrefix(pool, "tenant-"); ok {
		return rest
	}
	return ""
}

// Squats lists, one sentence each, the guests pool holds outside the tenant's own vmid range
// [first, last]: vmids ADR-0002 gives another index, taken by this tenant's token (PVE lets
// VM.Allocate on a pool take any free vmid). The name given is the pool's tenant, never a tag.
func Squats(inv *Inventory, pool string, first, last int) []string {
	var ids []int
	for id, o := range inv.VMs {
		if o.Pool == pool && !o.Template && (id < first || id > last) {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, SquatMessage(id, inv.VMs[id].Name, OwnerOf(inv.VMs[id])))
	}
	return out
}

// SquatMessage says that vmid, outside its holder's range, is held by tenant holder's pool.
func SquatMessage(vmid int, name, holder string) string {
	where := "below every tenant's range"
	if idx, ok := plan.VMIDIndex(vmid); ok {
		first, last := plan.VMIDRange(idx)
		where = fmt.Sprintf("in index %d's range %d-%d", idx, first, last)
	}
	return fmt.Sprintf("vmid %d (%q) is held by tenant %s's pool, %s, not its own", vmid, name, holder, where)
}

// ownerFromTags returns the tenant an owner tag names, "" when there is none: only to refuse a
// declaration that would label VMs as another tenant's, never to decide who owns a VM.
func ownerFromTags(tags []string) string {
	for _, t := range tags {
		if rest, ok := strings.CutPrefix(t, "tenant-"); ok && rest != "" {
			return rest
		}
	}
	return ""
}

// Validate checks the declaration before any request, naming the field and the rule.
func (d Desired) Validate() error {
	where := fmt.Sprintf("VM %s (vmid %d)", d.Name, d.VMID)
	switch d.State {
	case StatePresent, StateStarted, StateStopped, StateAbsent, StateRebuilt:
	default:
		return fmt.Errorf("%s: state %q: must be one of present, started, stopped, absent, rebuilt", where, d.State)
	}
	if d.VMID < 100 || d.VMID > 999999999 {
		return fmt.Errorf("%s: vmid must be in 100..999999999", where)
	}
	if d.Cores < 0 || d.Cores > 512 {
		return fmt.Errorf("%s: cores %d: must be in 1..512", where, d.Cores)
	}
	if d.Memory != 0 && d.Memory < 16 {
		return fmt.Errorf("%s: memory %d: must be at least 16 (MiB)", where, d.Memory)
	}
	if d.Disk < 0 {
		return fmt.Errorf("%s: disk must be positive", where)
	}
	if d.Storage != "" && !d.Full {
		return fmt.Errorf("%s: storage %q is only allowed with full: true (PVE refuses a target storage for linked clones)", where, d.Storage)
	}
	if len(d.Description) > 8192 {
		return fmt.Errorf("%s: description: at most 8192 characters", where)
	}
	return nil
}
