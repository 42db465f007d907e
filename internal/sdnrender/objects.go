package sdnrender

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/pveschema"
)

// FromObjects is the renderer's input for the config running at version. running holds the
// SDN objects as PVE's API lists them: by section ("zones", "vnets", "subnets", "controllers",
// "fabrics", "fabricnodes") and id, with PVE's property names ("vrf-vxlan", "exitnodes-primary")
// and values (lists as arrays or PVE's comma strings, booleans 1 or 0; fabric nodes carry
// "fabric_id", "node_id" and their interfaces as property strings "name=ens19,ip=10.0.0.1/31").
// pending is the current (staged) config: PVE reads its subnets for exit-node null routes;
// nil: running's.
func FromObjects[O ~map[string]any](running, pending map[string]map[string]O, version int) *Config {
	out := &Config{Version: version, Zones: map[string]Zone{}, VNets: map[string]VNet{}, Subnets: subnets(running),
		Controllers: map[string]Controller{}, Fabrics: map[string]Fabric{}}
	if pending != nil {
		out.PendingSubnets = subnets(pending)
	}
	for id, o := range running["zones"] {
		out.Zones[id] = Zone{Type: str(o, "type"), Controller: str(o, "controller"), VRFVXLAN: integer(o, "vrf-vxlan"),
			MTU: integer(o, "mtu"), MAC: str(o, "mac"), Nodes: list(o, "nodes"), ExitNodes: list(o, "exitnodes"),
			ExitNodesPrimary: str(o, "exitnodes-primary"), ExitNodesLocalRouting: flag(o, "exitnodes-local-routing"),
			AdvertiseSubnets: flag(o, "advertise-subnets"), DisableARPNDSuppression: flag(o, "disable-arp-nd-suppression"),
			RTImport: list(o, "rt-import"), VXLANPort: integer(o, "vxlan-port")}
	}
	for id, o := range running["vnets"] {
		out.VNets[id] = VNet{Zone: str(o, "zone"), Tag: integer(o, "tag"), Alias: str(o, "alias")}
	}
	for id, o := range running["controllers"] {
		asn, _ := strconv.ParseInt(str(o, "asn"), 10, 64)
		out.Controllers[id] = Controller{Type: str(o, "type"), ASN: asn, Peers: list(o, "peers"), Fabric: str(o, "fabric")}
	}
	for id, o := range running["fabrics"] {
		out.Fabrics[id] = Fabric{Protocol: str(o, "protocol"), IPPrefix: str(o, "ip_prefix"), IP6Prefix: str(o, "ip6_prefix"),
			HelloInterval: str(o, "hello_interval"), CSNPInterval: str(o, "csnp_interval"), Area: str(o, "area"),
			Nodes: map[string]FabricNode{}}
	}
	for _, o := range running["fabricnodes"] {
		f, ok := out.Fabrics[str(o, "fabric_id")]
		if !ok {
			continue
		}
		n := FabricNode{IP: str(o, "ip"), IP6: str(o, "ip6")}
		// each entry is a property string with commas of its own: never split as a list
		if l, ok := o["interfaces"].([]any); ok {
			for _, it := range l {
				n.Interfaces = append(n.Interfaces, fabricInterface(fmt.Sprint(it)))
			}
		}
		f.Nodes[str(o, "node_id")] = n
	}
	return out
}

func subnets[O ~map[string]any](c map[string]map[string]O) map[string]Subnet {
	out := map[string]Subnet{}
	for id, o := range c["subnets"] {
		out[id] = Subnet{VNet: str(o, "vnet"), Gateway: str(o, "gateway"), SNAT: flag(o, "snat")}
	}
	return out
}

// fabricInterface parses PVE's interface property string "name=ens19,ip=10.0.0.1/31,hello_multiplier=3".
func fabricInterface(s string) FabricInterface {
	var fi FabricInterface
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue // "name=ens19," is valid
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			k, v = "name", part // the default key
		}
		switch k {
		case "name":
			fi.Name = v
		case "ip":
			fi.IP = v
		case "ip6":
			fi.IP6 = v
		case "hello_multiplier":
			fi.HelloMultiplier, _ = strconv.Atoi(v)
		}
	}
	return fi
}

// str is a value as PVE prints it (numbers without exponent, arrays comma-joined).
func str[O ~map[string]any](o O, k string) string {
	switch v := o[k].(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		parts := make([]string, len(v))
		for i, it := range v {
			parts[i] = fmt.Sprint(it)
		}
		return strings.Join(parts, ",")
	default:
		return fmt.Sprint(v)
	}
}

func integer[O ~map[string]any](o O, k string) int {
	n, _ := strconv.Atoi(str(o, k))
	return n
}

// flag is a PVE boolean, stored as 1 or 0.
func flag[O ~map[string]any](o O, k string) bool { return integer(o, k) != 0 }

// list splits a PVE list, given as an array or a string with PVE's separators.
func list[O ~map[string]any](o O, k string) []string {
	if v, ok := o[k].([]any); ok {
		out := make([]string, len(v))
		for i, it := range v {
			out[i] = fmt.Sprint(it)
		}
		return out
	}
	s := str(o, k)
	if s == "" {
		return nil
	}
	return pveschema.SplitList(s)
}
