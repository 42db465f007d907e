package vm

import (
	"fmt"
	"strings"
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
	Adopt        bool // take over an existing VM that matches by vmid, name and pool (adopt.go)
}

// OwnerTag is the tag that marks a VM as belonging to tenant.
func OwnerTag(tenant string) string { return "tenant-" + strings.ToLower(tenant) }

// OwnerOf returns the tenant that owns a guest by the same rules tenant_vm uses: its owner
// tag, else its pool when that is a tenant's pool ("tenant-<name>"); "" when nothing says.
func OwnerOf(o Observed) string {
	if owner := ownerFromTags(o.Tags); owner != "" {
		return owner
	}
	if rest, ok := strings.CutPrefix(o.Pool, "tenant-"); ok {
		return rest
	}
	return ""
}

// ownerFromTags returns the tenant named by an owner tag, "" when there is none.
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
