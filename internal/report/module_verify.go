package report

// The deevnet.tenant.tenant_verify Ansible module: one tenant's checks (verify.go) in one run. It
// only reads, so check mode runs it unchanged; it reports changed: false.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/deevnet/tenant/internal/envelope"
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
)

// VerifyOptions are tenant_verify's options (verifySpec declares their rules).
type VerifyOptions struct {
	pve.Connection
	Name         string          `opt:"name"`
	Index        int             `opt:"index"`
	VMs          int             `opt:"vms"`
	VNets        int             `opt:"vnets"`
	VMVNet       []int           `opt:"vm_vnet"`
	Site         map[string]any  `opt:"site"`
	Resolver     ResolverOptions `opt:"resolver"`
	FailOnFailed bool            `opt:"fail_on_failed"`
	Maintenance  []string        `opt:"maintenance"`
	// the attachment's envelope: with it, one check compares the pool's use with it
	Envelope *envelope.Envelope `opt:"envelope"`
}

// VerifyModule is tenant_verify: plugins/modules/tenant_verify.py documents it.
func VerifyModule() module.Entry { return module.Declare(verifySpec(), verify) }

// verifyCredential is the PVE connection, optional as a whole: without api_host the PVE checks
// are not made (a tenant repository without a PVE token), with it every credential option is
// required (verifySpec's RequiredTogether).
var verifyCredential = []string{"api_host", "api_user", "api_token_id", "api_token_secret"}

func verifySpec() module.Spec {
	opts := pve.WithConnectionOptions(map[string]*module.Option{
		"name":    {Type: module.TypeStr, Required: true},
		"index":   {Type: module.TypeInt, Required: true},
		"vms":     {Type: module.TypeInt, Default: 1},
		"vnets":   {Type: module.TypeInt, Default: 1},
		"vm_vnet": {Type: module.TypeList, Elements: module.TypeInt, Default: []any{}},
		"site":    {Type: module.TypeDict, Default: map[string]any{}},
		"resolver": {Type: module.TypeDict, Required: true, Options: map[string]*module.Option{
			"server": {Type: module.TypeStr, Required: true},
			"port":   {Type: module.TypeInt, Default: 53},
		}},
		"fail_on_failed": {Type: module.TypeBool, Default: true},
		"maintenance":    {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
		"envelope":       plan.EnvelopeOption(),
	})
	for _, k := range verifyCredential {
		o := *opts[k]
		o.Required = false
		opts[k] = &o
	}
	return module.Spec{Options: opts, RequiredTogether: [][]string{verifyCredential}, SupportsCheckMode: true}
}

// verify plans the tenant (a bad declaration fails before any read), makes every check and fails,
// when fail_on_failed, with the failed ones; the checks are in the result either way.
func verify(m *module.Module, o *VerifyOptions) (module.Result, error) {
	site, err := plan.SiteFromMap(o.Site)
	if err != nil {
		return module.Result{}, err
	}
	t, err := TenantInput{Name: o.Name, Index: o.Index, VMs: o.VMs, VNets: o.VNets, VMVNet: o.VMVNet}.Plan(site)
	if err != nil {
		return module.Result{}, err
	}
	if o.Envelope != nil {
		if err := o.Envelope.Validate("envelope"); err != nil {
			return module.Result{}, err
		}
	}
	var c *pve.Client
	if o.Host != "" {
		if c, err = o.Client(m); err != nil {
			return module.Result{}, err
		}
	}
	ctx, cancel := context.WithTimeout(m.Context(), time.Duration(o.Timeout)*time.Second*4)
	defer cancel()
	if c != nil {
		// the run's first reads, side by side: awayNodes' /nodes and PVEChecks' VM list
		first := []pve.Read{vmListRead()}
		if len(o.Maintenance) > 0 {
			first = append(first, pve.NodesRead())
		}
		c.Prefetch(ctx, first...)
	}
	now := time.Now().UTC().Format("2006-01-02T15:04:05Z")
	away, err := awayNodes(ctx, c, o.Maintenance)
	if err != nil {
		return module.Result{}, err
	}
	checks := DNSChecks(ctx, Resolver{Server: o.Resolver.Server, Port: o.Resolver.Port}, t, now)
	if c != nil {
		checks = append(checks, PVEChecks(ctx, c, t, site.Nodes[0], now, away, o.Envelope)...)
	}
	left := 0
	for _, ch := range checks {
		if ch.Name == CheckLeft {
			left++
			m.Warn("VM " + ch.Target + ": " + ch.Detail)
		}
	}
	values := map[string]any{"checks": checkValues(checks), "pending_nodes": pendingOf(checks, away)}
	msg := FailedMessage(o.Name, checks)
	if msg == "" {
		msg = "every check passed"
		if left > 0 {
			msg = fmt.Sprintf("every check passed; %d VM(s) on nodes offline in maintenance not checked in PVE", left)
		}
		return module.Result{Msg: msg, Values: values}, nil
	}
	if o.FailOnFailed {
		return module.Result{}, module.Fail(msg, values)
	}
	return module.Result{Msg: msg, Values: values}, nil
}

// awayNodes are the nodes of maintenance that GET /nodes shows offline: their VMs cannot be read
// (PVE answers 595). Without a maintenance list, or without a PVE connection, nothing is read.
// A maintenance entry that names no cluster node is refused before any check.
func awayNodes(ctx context.Context, c *pve.Client, maintenance []string) ([]string, error) {
	if c == nil || len(maintenance) == 0 {
		return nil, nil
	}
	status, err := pve.NodeStatus(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := pve.CheckMaintenance(maintenance, status); err != nil {
		return nil, err
	}
	var away []string
	for _, n := range maintenance {
		if status[n] != "online" {
			away = append(away, n)
		}
	}
	return away, nil
}

// pendingOf are the away nodes some VM was left on, sorted.
func pendingOf(checks []Check, away []string) []string {
	out := []string{}
	for _, n := range away {
		for _, ch := range checks {
			if ch.Name == CheckLeft && ch.Detail == LeftDetail(n) {
				out = append(out, n)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkValues are the checks as plain JSON values, which the module masks like the rest of its
// result (a detail quotes what a server answered).
func checkValues(checks []Check) []any {
	out := make([]any, len(checks))
	for i, c := range checks {
		out[i] = map[string]any{"name": c.Name, "target": c.Target, "ok": c.OK, "detail": c.Detail, "time": c.Time}
	}
	return out
}
