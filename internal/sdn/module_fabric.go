package sdn

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
)

// FabricOptions are pve_sdn_fabric's options (fabricSpec declares their rules).
type FabricOptions struct {
	Staging
	Fabric           *string            `opt:"fabric"`
	Protocol         string             `opt:"protocol"`
	IPPrefix         *string            `opt:"ip_prefix"`
	Area             module.Opt[string] `opt:"area"`
	Nodes            []FabricMember     `opt:"nodes"`
	Controller       *string            `opt:"controller"`
	ASN              *int               `opt:"asn"`
	ManageController bool               `opt:"manage_controller"`
	PurgeNodes       bool               `opt:"purge_nodes"`
}

// FabricMember is one entry of nodes.
type FabricMember struct {
	Name       string   `opt:"name"`
	IP         string   `opt:"ip"`
	Number     *int     `opt:"number"`
	Interfaces []string `opt:"interfaces"`
}

// FabricModule is pve_sdn_fabric: plugins/modules/pve_sdn_fabric.py documents it.
func FabricModule() module.Entry { return module.Declare(fabricSpec(), fabric) }

func fabricSpec() module.Spec {
	return module.Spec{
		Options: stagingSpec(map[string]*module.Option{
			"fabric":    {Type: module.TypeStr},
			"protocol":  {Type: module.TypeStr, Default: "openfabric", Choices: []any{"openfabric", "ospf"}},
			"ip_prefix": {Type: module.TypeStr},
			"area":      {Type: module.TypeStr, Default: "0"},
			"nodes": {Type: module.TypeList, Elements: module.TypeDict, Options: map[string]*module.Option{
				"name":       {Type: module.TypeStr, Required: true},
				"ip":         {Type: module.TypeStr},
				"number":     {Type: module.TypeInt},
				"interfaces": {Type: module.TypeList, Elements: module.TypeStr, Required: true},
			}},
			"controller":        {Type: module.TypeStr},
			"asn":               {Type: module.TypeInt},
			"manage_controller": {Type: module.TypeBool, Default: true},
			"purge_nodes":       {Type: module.TypeBool, Default: false},
		}),
		RequiredIf:        []module.RequiredIf{{Key: "state", Value: "present", Requires: []string{"nodes"}}},
		SupportsCheckMode: true,
	}
}

// spec builds the fabric from the site plan and the options. A member's loopback is its
// explicit ip, else the plan's NodeLoopback(number), number defaulting to its position.
func (o *FabricOptions) spec() (FabricSpec, error) {
	site, err := plan.SiteFromMap(o.Site)
	if err != nil {
		return FabricSpec{}, err
	}
	f := FabricSpec{ID: site.Fabric, Protocol: o.Protocol, Prefix: site.Loopbacks, ASN: site.ASN}
	override(&f.ID, o.Fabric)
	if o.IPPrefix != nil {
		if f.Prefix, err = netip.ParsePrefix(*o.IPPrefix); err != nil {
			return f, fmt.Errorf("ip_prefix: %w", err)
		}
		// Checked here, not only in Validate: the members' loopbacks are derived from it below.
		if !f.Prefix.Addr().Is4() {
			return f, fmt.Errorf("ip_prefix: %s must be an IPv4 prefix", f.Prefix)
		}
	}
	if f.Protocol == "ospf" {
		f.Area = o.Area.Value
	} else if o.Area.Set {
		return f, fmt.Errorf("area: applies to protocol ospf only, not %s; remove it", f.Protocol)
	}
	if o.ManageController {
		f.Controller = site.Controller
		override(&f.Controller, o.Controller)
		override(&f.ASN, o.ASN)
	}
	loopSite := site
	loopSite.Loopbacks = f.Prefix
	for i, e := range o.Nodes {
		n := FabricNode{Name: e.Name, Interfaces: e.Interfaces}
		if e.IP != "" {
			if n.IP, err = netip.ParseAddr(e.IP); err != nil {
				return f, fmt.Errorf("nodes[%d].ip: %w", i, err)
			}
		} else {
			num := i + 1
			override(&num, e.Number)
			if n.IP, err = loopSite.NodeLoopback(num); err != nil {
				return f, fmt.Errorf("nodes[%d].number: %w", i, err)
			}
		}
		f.Nodes = append(f.Nodes, n)
	}
	if o.State == "absent" {
		return f, CheckID(KindFabric, "fabric", f.ID)
	}
	return f, f.Validate()
}

// fabric is pve_sdn_fabric's handler.
func fabric(m *module.Module, o *FabricOptions) (module.Result, error) {
	spec, err := o.spec()
	if err != nil {
		return module.Result{}, err
	}
	present := o.State == "present"
	// what PlanFabric reads first
	first := []pve.Read{listRead(fabricsPath)}
	if spec.Controller != "" {
		first = append(first, listRead(controllersPath))
	}
	return stage(m, &o.Staging, "fabric", spec.ID, first, func(ctx context.Context, api API) (Work, error) {
		if present {
			if err := checkNodes(ctx, api, spec.Nodes); err != nil {
				return Work{}, err
			}
		}
		return PlanFabric(ctx, api, spec, present, o.PurgeNodes)
	})
}

// override sets *dst to the option's value when the user gave one.
func override[T any](dst *T, opt *T) {
	if opt != nil {
		*dst = *opt
	}
}

// checkNodes refuses members that are not nodes of the cluster, before any write: PVE would
// accept the fabric node and fail later with an unrelated message.
func checkNodes(ctx context.Context, api API, members []FabricNode) error {
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
