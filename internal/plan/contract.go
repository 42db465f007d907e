package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/module"
)

// The tenant contract's rules that the role's argument spec cannot express (docs/tenant-contract.md):
// tenant_plan checks them when given the declaration as contract, so the role deevnet.tenant.tenant
// checks and plans in one task (an assert of its own was paid on every run). The messages are the
// ones the role's assert printed, word for word: tests/contract pins them.

// Contract is a tenant's declaration as the role holds it, its defaults filled in.
type Contract struct {
	Name    string           `opt:"name"`
	Index   int              `opt:"index"`
	VNets   int              `opt:"vnets"`
	VMs     ContractVMs      `opt:"vms"`
	Records []ContractRecord `opt:"records"`
}

// ContractVMs is the declaration's vms.
type ContractVMs struct {
	Count     int      `opt:"count"`
	Cores     int      `opt:"cores"`
	Memory    int      `opt:"memory"`
	Disk      int      `opt:"disk"`
	Template  int      `opt:"template"`
	SSHKeys   []string `opt:"ssh_keys"`
	Placement string   `opt:"placement"`
	VNet      []int    `opt:"vnet"`
}

// ContractRecord is one of the declaration's records.
type ContractRecord struct {
	Name   string   `opt:"name"`
	Type   string   `opt:"type"`
	Values []string `opt:"values"`
	TTL    int      `opt:"ttl"`
}

// contractOption declares contract with the role's defaults (roles/tenant/vars/main.yml) and
// types (roles/tenant/meta/argument_specs.yml); choices stay the role's spec's job.
func contractOption() *module.Option {
	return &module.Option{Type: module.TypeDict, Options: map[string]*module.Option{
		"name":  {Type: module.TypeStr, Required: true},
		"index": {Type: module.TypeInt, Required: true},
		"vnets": {Type: module.TypeInt, Default: 1},
		"vms": {Type: module.TypeDict, Default: map[string]any{}, Options: map[string]*module.Option{
			"count":     {Type: module.TypeInt, Default: 1},
			"cores":     {Type: module.TypeInt, Default: 1},
			"memory":    {Type: module.TypeInt, Default: 1024},
			"disk":      {Type: module.TypeInt, Default: 8},
			"template":  {Type: module.TypeInt, Default: 9000},
			"ssh_keys":  {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
			"placement": {Type: module.TypeStr, Default: "first"},
			"vnet":      {Type: module.TypeList, Elements: module.TypeInt, Default: []any{}},
		}},
		"records": {Type: module.TypeList, Elements: module.TypeDict, Default: []any{}, Options: map[string]*module.Option{
			"name":   {Type: module.TypeStr, Required: true},
			"type":   {Type: module.TypeStr, Required: true},
			"values": {Type: module.TypeList, Elements: module.TypeStr, Required: true},
			"ttl":    {Type: module.TypeInt, Default: 300},
		}},
	}}
}

var (
	tenantName = regexp.MustCompile(`^[a-z][a-z0-9-]*[a-z0-9]$`)
	recordName = regexp.MustCompile(`^([a-z0-9_]([a-z0-9_-]*[a-z0-9])?)(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9])?)*$`)
)

// ValidTenantName reports whether name is a tenant name: a DNS label and PVE id of 2..20
// characters.
func ValidTenantName(name string) bool {
	return tenantName.MatchString(name) && len(name) >= 2 && len(name) <= 20
}

// Check returns every broken rule of c, each naming the field and the rule, joined by "; " (no
// error when c keeps them all).
func (c *Contract) Check() error {
	var errs []string
	if !ValidTenantName(c.Name) {
		errs = append(errs, "tenant.name "+pyJSON(c.Name)+" must match ^[a-z][a-z0-9-]*[a-z0-9]$ and have 2..20 characters (a DNS label and PVE id)")
	}
	if c.Index < 1 || c.Index > 63 {
		e := fmt.Sprintf("tenant.index %d must be 1..63", c.Index)
		if c.Index == ReservedIndex {
			e += ": index 0 is the reference tenant (examples/tenant), which cannot be applied; ask the substrate for an index (playbooks/onboard.yml)"
		}
		errs = append(errs, e)
	}
	for _, b := range []struct {
		key       string
		v, lo, hi int
		unit      string
	}{
		{"count", c.VMs.Count, 0, maxVMs, ""}, {"cores", c.VMs.Cores, 1, 64, ""}, {"memory", c.VMs.Memory, 256, 262144, " MiB"},
		{"disk", c.VMs.Disk, 1, 4096, " GiB"}, {"template", c.VMs.Template, 100, 999999999, " (a vmid)"},
	} {
		if b.v < b.lo || b.v > b.hi {
			errs = append(errs, fmt.Sprintf("tenant.vms.%s %d is out of range: %d..%d%s", b.key, b.v, b.lo, b.hi, b.unit))
		}
	}
	vnet := c.VMs.VNet
	if (len(vnet) != 0 && len(vnet) != c.VMs.Count) || slices.ContainsFunc(vnet, func(n int) bool { return n < 0 || n >= c.VNets }) {
		errs = append(errs, fmt.Sprintf("tenant.vms.vnet %s: give one VNet number per VM (%d VMs; VM k is on VNet vnet[k-1]), or none for all on VNet 0;"+
			" each must be 0..%d (tenant.vnets is %d)", pyInts(vnet), c.VMs.Count, c.VNets-1, c.VNets))
	}
	vmName := regexp.MustCompile(`^` + regexp.QuoteMeta(c.Name) + `-[0-9]+$`)
	for i, r := range c.Records {
		if (r.Name != "@" && !recordName.MatchString(r.Name)) || vmName.MatchString(r.Name) || len(r.Values) == 0 || r.TTL < 60 || r.TTL > 86400 {
			errs = append(errs, fmt.Sprintf("tenant.records[%d] (%s %s): name must be '@' or a relative DNS name, not a VM name %s-<k>"+
				" (those are derived), values must not be empty and ttl must be 60..86400", i, r.Name, r.Type, c.Name))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// agrees refuses a contract whose tenant differs from the one tenant_plan's own options plan.
func (c *Contract) agrees(o *ModuleOptions) error {
	vnet := o.VMVNet
	if vnet == nil {
		vnet = []int{}
	}
	mine := []any{c.Name, c.Index, c.VMs.Count, c.VNets, pyInts(c.VMs.VNet)}
	theirs := []any{o.Name, o.Index, o.VMs, o.VNets, pyInts(vnet)}
	for i, opt := range []string{"name", "index", "vms", "vnets", "vm_vnet"} {
		if mine[i] != theirs[i] {
			return fmt.Errorf("contract disagrees with %s: %v in the contract, %v in %s (give the same tenant)", opt, mine[i], theirs[i], opt)
		}
	}
	return nil
}

// pyJSON is s as Ansible's to_json writes it (Python's json.dumps: non-ASCII escaped, <>& kept).
func pyJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r > 0x7f && r <= 0xffff):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pyInts is l as Python prints a list of ints: [0, 2].
func pyInts(l []int) string {
	s := make([]string, len(l))
	for i, n := range l {
		s[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(s, ", ") + "]"
}
