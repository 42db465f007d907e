package sdnmod

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/sdn"
)

// FabricSpec is pve_sdn_fabric's argument spec.
func FabricSpec() module.Spec {
	opts := stagingOptions()
	opts["fabric"] = &module.Option{Type: module.TypeStr}
	opts["protocol"] = &module.Option{Type: module.TypeStr, Default: "openfabric", Choices: []any{"openfabric", "ospf"}}
	opts["ip_prefix"] = &module.Option{Type: module.TypeStr}
	opts["area"] = &module.Option{Type: module.TypeStr, Default: "0"}
	opts["nodes"] = &module.Option{Type: module.TypeList, Elements: module.TypeDict, Options: map[string]*module.Option{
		"name":       {Type: module.TypeStr, Required: true},
		"ip":         {Type: module.TypeStr},
		"number":     {Type: module.TypeInt},
		"interfaces": {Type: module.TypeList, Elements: module.TypeStr, Required: true},
	}}
	opts["controller"] = &module.Option{Type: module.TypeStr}
	opts["asn"] = &module.Option{Type: module.TypeInt}
	opts["manage_controller"] = &module.Option{Type: module.TypeBool, Default: true}
	opts["purge_nodes"] = &module.Option{Type: module.TypeBool, Default: false}
	return module.Spec{
		Options:           pve.WithConnectionOptions(opts),
		RequiredIf:        []module.RequiredIf{{Key: "state", Value: "present", Requires: []string{"nodes"}}},
		SupportsCheckMode: true,
	}
}

// fabricSpecFrom builds the fabric from the site plan and the options. A member's loopback is
// its explicit ip, else the plan's NodeLoopback(number), number defaulting to its position.
func fabricSpecFrom(m *module.Module) (sdn.FabricSpec, error) {
	site, err := plan.SiteFromMap(m.Dict("site"))
	if err != nil {
		return sdn.FabricSpec{}, err
	}
	f := sdn.FabricSpec{ID: site.Fabric, Protocol: m.Str("protocol"), Prefix: site.Loopbacks, ASN: site.ASN}
	if m.IsSet("fabric") {
		f.ID = m.Str("fabric")
	}
	if m.IsSet("ip_prefix") {
		if f.Prefix, err = netip.ParsePrefix(m.Str("ip_prefix")); err != nil {
			return f, fmt.Errorf("ip_prefix: %w", err)
		}
		// Checked here, not only in Validate: the members' loopbacks are derived from it below.
		if !f.Prefix.Addr().Is4() {
			return f, fmt.Errorf("ip_prefix: %s must be an IPv4 prefix", f.Prefix)
		}
	}
	if f.Protocol == "ospf" {
		f.Area = m.Str("area")
	} else if m.IsSet("area") {
		return f, fmt.Errorf("area: applies to protocol ospf only, not %s; remove it", f.Protocol)
	}
	if m.Bool("manage_controller") {
		f.Controller = site.Controller
		if m.IsSet("controller") {
			f.Controller = m.Str("controller")
		}
		if m.IsSet("asn") {
			f.ASN = m.Int("asn")
		}
	}
	loopSite := site
	loopSite.Loopbacks = f.Prefix
	for i, e := range m.List("nodes") {
		d, _ := e.(map[string]any)
		n := sdn.FabricNode{Name: fmt.Sprint(d["name"]), Interfaces: strList(d["interfaces"])}
		if ip, ok := d["ip"].(string); ok && ip != "" {
			if n.IP, err = netip.ParseAddr(ip); err != nil {
				return f, fmt.Errorf("nodes[%d].ip: %w", i, err)
			}
		} else {
			num := i + 1
			if v, ok := d["number"].(int); ok {
				num = v
			}
			if n.IP, err = loopSite.NodeLoopback(num); err != nil {
				return f, fmt.Errorf("nodes[%d].number: %w", i, err)
			}
		}
		f.Nodes = append(f.Nodes, n)
	}
	if m.Str("state") == "absent" {
		if err := sdn.CheckID(sdn.KindFabric, "fabric", f.ID); err != nil {
			return f, err
		}
		return f, nil
	}
	return f, f.Validate()
}

// Fabric is pve_sdn_fabric's handler.
func Fabric(m *module.Module) (module.Result, error) {
	spec, err := fabricSpecFrom(m)
	if err != nil {
		return module.Result{}, err
	}
	if err := checkTimes(m); err != nil {
		return module.Result{}, err
	}
	api, err := connect(m)
	if err != nil {
		return module.Result{}, err
	}
	ctx, cancel := withTimeout(m)
	defer cancel()
	if m.Str("state") == "present" {
		if err := checkNodes(ctx, api, spec.Nodes); err != nil {
			return module.Result{}, err
		}
	}
	w, err := sdn.PlanFabric(ctx, api, spec, m.Str("state") == "present", m.Bool("purge_nodes"))
	if err != nil {
		return module.Result{}, err
	}
	res, err := converge(ctx, m, api, w)
	res.Values["fabric"] = spec.ID
	return res, err
}

// checkNodes refuses members that are not nodes of the cluster, before any write: PVE would
// accept the fabric node and fail later with an unrelated message.
func checkNodes(ctx context.Context, api sdn.API, members []sdn.FabricNode) error {
	var rows []struct {
		Node string `json:"node"`
	}
	if err := api.C.Get(ctx, "/nodes", nil, &rows); err != nil {
		return fmt.Errorf("reading the cluster's nodes: %w", err)
	}
	have := make(map[string]bool, len(rows))
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		have[r.Node] = true
		names = append(names, r.Node)
	}
	sort.Strings(names)
	for i, n := range members {
		if !have[n.Name] {
			return fmt.Errorf("nodes[%d].name: %q is not a node of this cluster (nodes: %s)", i, n.Name, strings.Join(names, ", "))
		}
	}
	return nil
}
