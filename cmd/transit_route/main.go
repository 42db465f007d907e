// Command transit_route is the deevnet.tenant.transit_route Ansible module: tenant egress
// routes and forwarding on the hypervisor (ADR-0003). Logic lives in internal/route.
package main

import (
	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/route"
)

// spec is transit_route's argument spec; plugins/modules/transit_route.py documents it.
var spec = module.Spec{
	Options: map[string]*module.Option{
		"routes": {Type: module.TypeList, Elements: module.TypeDict, Default: []any{}, Options: map[string]*module.Option{
			"dest":    {Type: module.TypeStr, Required: true, Aliases: []string{"dst", "destination"}},
			"gateway": {Type: module.TypeStr, Aliases: []string{"via", "gw"}},
			"device":  {Type: module.TypeStr, Aliases: []string{"dev"}},
			"metric":  {Type: module.TypeInt, Default: 0},
			"table":   {Type: module.TypeStr, Default: route.MainTable, Aliases: []string{"vrf"}},
		}},
		"state":          {Type: module.TypeStr, Default: string(route.Present), Choices: []any{string(route.Present), string(route.Absent)}},
		"exclusive":      {Type: module.TypeBool, Default: false},
		"forwarding":     {Type: module.TypeList, Elements: module.TypeStr, Default: []any{}},
		"persist":        {Type: module.TypeBool, Default: false},
		"persist_path":   {Type: module.TypePath, Default: route.DefaultHookPath},
		"ifupdown2_conf": {Type: module.TypePath, Default: route.DefaultIfupdown2Conf},
	},
	SupportsCheckMode: true,
}

// Its own binary, not a registry entry: it is copied to the hypervisor on every task and must stay
// small (docs/adr/0011-binary-selection.md).
func main() {
	module.Main("transit_route", func(name string) (module.Entry, bool) {
		return module.Entry{Spec: spec, Handler: route.Handler}, name == "transit_route"
	})
}
