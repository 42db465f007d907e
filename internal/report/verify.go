package report

// The checks of one tenant's verify run (roles/tenant, tasks/verify.yml): each VM's name and
// address through the resolver, and its configuration and state as PVE reports them to the
// tenant's own token. One module run does every read: as Ansible tasks they were two dig runs and
// 1 + 2 uri runs per VM, each a Python module start.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/deevnet/tenant/internal/envelope"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/vm"
)

// The names of the checks, as the report and the verify playbook's message show them.
const (
	CheckA       = "A record through the resolver"
	CheckPTR     = "PTR record through the resolver"
	CheckConfig  = "PVE configuration (name, address, gateway)"
	CheckRunning = "VM running"
	// CheckOwnRange fails for each guest the tenant's pool holds in another index's vmid range
	// (squatting, docs/security.md); it is listed only when it fails.
	CheckOwnRange = "Pool's VMs in the tenant's own vmid range"
	// CheckLeft stands for a VM's PVE checks when its node is offline and in the operator's
	// maintenance list: PVE cannot be asked (595), and the run says so instead of failing (#25).
	CheckLeft = "VM left on its node in maintenance"
	// CheckEnvelope compares what the tenant's pool takes with the envelope the substrate set at
	// onboarding (docs/adr/0014-tenant-envelope.md); made when the attachment has an envelope.
	CheckEnvelope = "Pool's use inside the tenant's envelope"
)

// lookupTries is how often a lookup the server did not answer is sent (dig +tries=2).
const lookupTries = 2

// DNSChecks checks that each VM's name resolves to its address and its address back to its name,
// the one value the resolver answers in each case.
func DNSChecks(ctx context.Context, r Resolver, t plan.Tenant, now string) []Check {
	var a, ptr []Check
	for _, vm := range t.VMs {
		addr := vm.Address.String()
		a = append(a, answerCheck(CheckA, vm.FQDN, addr, lookup(ctx, r, vm.FQDN, "A"), now))
		rev, err := dns.ReverseAddr(addr)
		rec := Record{Err: fmt.Sprintf("no reverse name for %s", addr)}
		if err == nil {
			rec = lookup(ctx, r, rev, "PTR")
		}
		ptr = append(ptr, answerCheck(CheckPTR, addr, dns.Fqdn(vm.FQDN), rec, now))
	}
	return append(a, ptr...)
}

// lookup asks again when the server did not answer, as dig +tries=2 does.
func lookup(ctx context.Context, r Resolver, name, typ string) Record {
	rec := r.Lookup(ctx, name, typ)
	for i := 1; i < lookupTries && rec.Err != "" && ctx.Err() == nil; i++ {
		rec = r.Lookup(ctx, name, typ)
	}
	return rec
}

// answerCheck passes when the answer is exactly want. Its detail is the answer, "no answer" for
// an empty one (NXDOMAIN too), or why the resolver gave none.
func answerCheck(name, target, want string, rec Record, now string) Check {
	c := Check{Name: name, Target: target, Time: now}
	switch {
	case rec.Err != "":
		c.Detail = "resolver: " + rec.Err
	case len(rec.Values) == 0:
		c.Detail = "no answer"
	default:
		c.Detail = strings.Join(rec.Values, " ")
		c.OK = len(rec.Values) == 1 && rec.Values[0] == want
	}
	return c
}

// PVEChecks checks each VM's configuration (name, address, gateway) and that it runs, on the node
// PVE places it on (the site's first node when /cluster/resources does not list it). A VM on a node
// in away (offline and in maintenance) gets one CheckLeft instead, which passes and says why.
//
// With env, one more check compares every guest of the tenant's pool (planned or not) with the
// envelope; a planned VM's configuration is read once for both.
func PVEChecks(ctx context.Context, c *pve.Client, t plan.Tenant, fallbackNode, now string, away []string, env *envelope.Envelope) []Check {
	nodes := map[int]string{}
	var rows []row
	var out []Check
	var members []row // the tenant's pool's guests, the template aside
	vms := vmListRead()
	listed := c.Get(ctx, vms.Path, vms.Query, &rows) == nil
	if listed {
		first, last := plan.VMIDRange(t.Index)
		for _, x := range rows {
			id := atoi(x["vmid"])
			nodes[id] = str(x["node"])
			// The pool names the holder; a tag, which the tenant's token may set, is not read.
			if str(x["pool"]) != t.Pool || str(x["template"]) == "1" {
				continue
			}
			members = append(members, x)
			if id < first || id > last {
				out = append(out, Check{Name: CheckOwnRange, Target: t.Pool, Time: now,
					Detail: vm.SquatMessage(id, str(x["name"]), vm.PoolOwner(t.Pool))})
			}
		}
	}
	nodeOf := func(vmid int) string {
		if node, ok := nodes[vmid]; ok {
			return node
		}
		return fallbackNode
	}
	c.Prefetch(ctx, checkReads(t, nodeOf, away, env != nil && listed, members)...)
	configs := map[int]row{}
	for _, vm := range t.VMs {
		node := nodeOf(vm.VMID)
		target := fmt.Sprintf("%s (%d)", vm.Name, vm.VMID)
		if slices.Contains(away, node) {
			out = append(out, Check{Name: CheckLeft, Target: target, Time: now, OK: true, Detail: LeftDetail(node)})
			continue
		}
		base := vmPath(node, vm.VMID)
		conf := Check{Name: CheckConfig, Target: target, Time: now}
		var cfg row
		if err := c.Get(ctx, base+"config", nil, &cfg); err != nil {
			conf.Detail = answered(err)
		} else {
			configs[vm.VMID] = cfg
			ipc := str(cfg["ipconfig0"])
			conf.OK = str(cfg["name"]) == vm.Name && strings.Contains(ipc, "ip="+vm.CIDR) &&
				strings.Contains(ipc, "gw="+vm.Gateway.String())
			conf.Detail = fmt.Sprintf("name %s, ipconfig0 %s", str(cfg["name"]), orNone(ipc))
		}
		run := Check{Name: CheckRunning, Target: target, Time: now}
		var st row
		if err := c.Get(ctx, base+"status/current", nil, &st); err != nil {
			run.Detail = answered(err)
		} else {
			status := str(st["status"])
			run.OK = status == "running"
			if status == "" {
				status = "unknown"
			}
			run.Detail = "status " + status
		}
		out = append(out, conf, run)
	}
	if env != nil {
		out = append(out, envelopeCheck(ctx, c, t, *env, listed, members, configs, away, now))
	}
	return out
}

// vmListRead is PVEChecks' read of the cluster's VMs.
func vmListRead() pve.Read {
	return pve.Read{Path: "/cluster/resources", Query: url.Values{"type": {"vm"}}}
}

func vmPath(node string, vmid int) string {
	return fmt.Sprintf("/nodes/%s/qemu/%d/", url.PathEscape(node), vmid)
}

// checkReads are the GETs PVEChecks makes after the VM list, in its order: each planned VM's
// config and status (unless away), then, with envelope, the config of each pool member on no
// away node that is not a planned VM.
func checkReads(t plan.Tenant, nodeOf func(int) string, away []string, withEnvelope bool, members []row) []pve.Read {
	var out []pve.Read
	planned := map[int]bool{}
	for _, vm := range t.VMs {
		planned[vm.VMID] = true
		if node := nodeOf(vm.VMID); !slices.Contains(away, node) {
			base := vmPath(node, vm.VMID)
			out = append(out, pve.Read{Path: base + "config"}, pve.Read{Path: base + "status/current"})
		}
	}
	if withEnvelope {
		for _, x := range members {
			if id, node := atoi(x["vmid"]), str(x["node"]); !planned[id] && !slices.Contains(away, node) {
				out = append(out, pve.Read{Path: vmPath(node, id) + "config"})
			}
		}
	}
	return out
}

// envelopeCheck adds up what the pool's guests take, from each one's configuration (a planned VM's
// read already is not read again) and its state in /cluster/resources, and fails when what runs
// or what is allocated goes over env. A guest on a node away in maintenance cannot be read (595):
// the detail counts it as not read.
func envelopeCheck(ctx context.Context, c *pve.Client, t plan.Tenant, env envelope.Envelope, listed bool,
	members []row, configs map[int]row, away []string, now string) Check {
	check := Check{Name: CheckEnvelope, Target: t.Pool, Time: now}
	if !listed {
		check.Detail = "GET /cluster/resources was not answered"
		return check
	}
	var guests []envelope.Guest
	var unread []string
	for _, x := range members {
		id, node := atoi(x["vmid"]), str(x["node"])
		if slices.Contains(away, node) {
			unread = append(unread, fmt.Sprintf("%d", id))
			continue
		}
		cfg, ok := configs[id]
		if !ok {
			if err := c.Get(ctx, vmPath(node, id)+"config", nil, &cfg); err != nil {
				check.Detail = fmt.Sprintf("VM %d's configuration: %s", id, answered(err))
				return check
			}
		}
		g, err := envelope.GuestFromConfig(cfg, str(x["status"]) == "running")
		if err != nil {
			check.Detail = fmt.Sprintf("VM %d: %v", id, err)
			return check
		}
		guests = append(guests, g)
	}
	use := envelope.UseOf(guests)
	over := env.Over(use)
	check.OK = len(over) == 0
	check.Detail = fmt.Sprintf("uses %s of %s", use, env)
	if len(unread) > 0 {
		check.Detail += fmt.Sprintf("; not counted, on nodes away in maintenance: %s", strings.Join(unread, ", "))
	}
	if !check.OK {
		check.Detail += ": " + strings.Join(over, "; ")
	}
	return check
}

// LeftDetail is CheckLeft's detail, and the warning of a run that left VMs on node.
func LeftDetail(node string) string {
	return fmt.Sprintf("node %s is offline and in maintenance: its configuration and state were not checked; "+
		"the first run after %s returns checks them (pending_nodes)", node, node)
}

// answered says what PVE answered instead of the object.
func answered(err error) string {
	var ae *pve.APIError
	if errors.As(err, &ae) {
		return fmt.Sprintf("PVE answered %d: %s", ae.Status, ae.Message)
	}
	return "PVE answered nothing: " + err.Error()
}

// FailedMessage is the message a verify run fails with: each failed check's name, target and
// detail.
func FailedMessage(tenant string, checks []Check) string {
	var parts []string
	for _, c := range checks {
		if !c.OK {
			parts = append(parts, c.Name+": "+c.Target+": "+c.Detail)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return tenant + ": failed checks: " + strings.Join(parts, "; ")
}
