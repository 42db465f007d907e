package pvesim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/pvesim/schema"
	"github.com/deevnet/tenant/internal/sdnrender"
)

// renderConfig converts a stored SDN config (running, or current for a dry
// run) into the renderer's input. pending holds the current subnets, which
// PVE reads for exit-node null routes.
func renderConfig(c sdnConfig, version int, pending sdnConfig) *sdnrender.Config {
	out := &sdnrender.Config{Version: version, Zones: map[string]sdnrender.Zone{}, VNets: map[string]sdnrender.VNet{},
		Subnets: map[string]sdnrender.Subnet{}, Controllers: map[string]sdnrender.Controller{}, Fabrics: map[string]sdnrender.Fabric{}}
	if c == nil {
		return out
	}
	for id, o := range c["zones"] {
		out.Zones[id] = sdnrender.Zone{Type: objStr(o, "type"), Controller: objStr(o, "controller"), VRFVXLAN: objInt(o, "vrf-vxlan"),
			MTU: objInt(o, "mtu"), MAC: objStr(o, "mac"), Nodes: objList(o, "nodes"), ExitNodes: objList(o, "exitnodes"),
			ExitNodesPrimary: objStr(o, "exitnodes-primary"), ExitNodesLocalRouting: objInt(o, "exitnodes-local-routing") != 0,
			AdvertiseSubnets: objInt(o, "advertise-subnets") != 0, DisableARPNDSuppression: objInt(o, "disable-arp-nd-suppression") != 0,
			RTImport: objList(o, "rt-import"), VXLANPort: objInt(o, "vxlan-port")}
	}
	for id, o := range c["vnets"] {
		out.VNets[id] = sdnrender.VNet{Zone: objStr(o, "zone"), Tag: objInt(o, "tag"), Alias: objStr(o, "alias")}
	}
	out.Subnets = renderSubnets(c)
	if pending != nil {
		out.PendingSubnets = renderSubnets(pending)
	}
	for id, o := range c["controllers"] {
		asn, _ := strconv.ParseInt(objStr(o, "asn"), 10, 64)
		out.Controllers[id] = sdnrender.Controller{Type: objStr(o, "type"), ASN: asn, Peers: objList(o, "peers"), Fabric: objStr(o, "fabric")}
	}
	for id, o := range c["fabrics"] {
		out.Fabrics[id] = sdnrender.Fabric{Protocol: objStr(o, "protocol"), IPPrefix: objStr(o, "ip_prefix"), IP6Prefix: objStr(o, "ip6_prefix"),
			HelloInterval: objStr(o, "hello_interval"), CSNPInterval: objStr(o, "csnp_interval"), Area: objStr(o, "area"),
			Nodes: map[string]sdnrender.FabricNode{}}
	}
	for _, o := range c["fabricnodes"] {
		f, ok := out.Fabrics[objStr(o, "fabric_id")]
		if !ok {
			continue
		}
		n := sdnrender.FabricNode{IP: objStr(o, "ip"), IP6: objStr(o, "ip6")}
		if l, ok := o["interfaces"].([]any); ok {
			for _, it := range l {
				n.Interfaces = append(n.Interfaces, fabricInterface(fmt.Sprint(it)))
			}
		}
		f.Nodes[objStr(o, "node_id")] = n
	}
	return out
}

func renderSubnets(c sdnConfig) map[string]sdnrender.Subnet {
	out := map[string]sdnrender.Subnet{}
	for id, o := range c["subnets"] {
		out[id] = sdnrender.Subnet{VNet: objStr(o, "vnet"), Gateway: objStr(o, "gateway"), SNAT: objInt(o, "snat") != 0}
	}
	return out
}

// fabricInterface parses "name=ens19,ip=10.0.0.1/31,hello_multiplier=3".
func fabricInterface(s string) sdnrender.FabricInterface {
	var fi sdnrender.FabricInterface
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

// objStr is a stored value as PVE prints it (numbers without exponent).
func objStr(o sdnObj, k string) string {
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

func objInt(o sdnObj, k string) int {
	n, _ := strconv.Atoi(objStr(o, k))
	return n
}

func objList(o sdnObj, k string) []string {
	s := objStr(o, k)
	if s == "" {
		return nil
	}
	return schema.SplitList(s)
}
