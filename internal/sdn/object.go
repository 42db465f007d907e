package sdn

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Kind is an SDN object type.
type Kind string

// The SDN object kinds this package manages, in creation order.
const (
	KindFabric     Kind = "fabric"
	KindFabricNode Kind = "fabric_node"
	KindController Kind = "controller"
	KindZone       Kind = "zone"
	KindVNet       Kind = "vnet"
	KindSubnet     Kind = "subnet"
)

// createRank orders kinds so that dependencies are created first and deleted last.
var createRank = map[Kind]int{KindFabric: 0, KindFabricNode: 1, KindController: 2, KindZone: 3, KindVNet: 4, KindSubnet: 5}

// Props are an object's properties as normalised strings. A list property (fabric node
// interfaces) is its normalised elements joined by "\n".
type Props map[string]string

// Object is one SDN object: its kind, its id, its parent (the fabric of a fabric node, the vnet
// of a subnet) and its properties.
type Object struct {
	Kind   Kind
	ID     string // zone/vnet/controller/fabric id; subnet id "<zone>-<net>-<len>"; fabric node: node name
	Parent string
	Props  Props
}

// Key names an object uniquely across kinds, e.g. "zone/tn01", "fabric_node/ufab/dv02hyp002p02".
func (o Object) Key() string { return ObjectKey(o.Kind, o.Parent, o.ID) }

// ObjectKey builds the key of an object without the object.
func ObjectKey(k Kind, parent, id string) string {
	if k == KindFabricNode {
		return string(k) + "/" + parent + "/" + id
	}
	return string(k) + "/" + id
}

// CheckKey validates an object key as Key() writes it ("zone/tn01", "fabric_node/ufab/node1");
// field names the option in the message.
func CheckKey(field, key string) error {
	kind, rest, ok := strings.Cut(key, "/")
	if _, known := createRank[Kind(kind)]; !ok || !known || rest == "" {
		return fmt.Errorf("%s: %q is not an SDN object key (<kind>/<id> with kind one of fabric, fabric_node, controller, zone, vnet, subnet; as tenant_vrf returns them in pending_objects)", field, key)
	}
	if Kind(kind) == KindFabricNode {
		if parent, id, ok := strings.Cut(rest, "/"); !ok || parent == "" || id == "" {
			return fmt.Errorf("%s: %q: a fabric_node key is fabric_node/<fabric>/<node>", field, key)
		}
	} else if strings.ContainsAny(rest, "/ \t") {
		return fmt.Errorf("%s: %q: the id of a %s key has no '/' or blanks", field, key, kind)
	}
	return nil
}

// listKeys are array-valued properties; setKeys are comma lists PVE stores as sorted sets.
var (
	listKeys = map[string]bool{"interfaces": true, "dhcp-range": true}
	setKeys  = map[string]bool{"nodes": true, "exitnodes": true, "peers": true}
)

// defaults are values equal to absence, per kind (booleans that default to off).
var defaults = map[Kind]Props{
	KindSubnet: {"snat": "0"},
	KindZone:   {"exitnodes-local-routing": "0", "advertise-subnets": "0", "disable-arp-nd-suppression": "0"},
	KindVNet:   {"vlanaware": "0", "isolate-ports": "0"},
}

// normValue renders one JSON value as a comparable string; ok is false for null.
func normValue(key string, v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		if setKeys[key] {
			return normSet(x), true
		}
		if listKeys[key] {
			return normPropString(x), true
		}
		return x, true
	case bool:
		if x {
			return "1", true
		}
		return "0", true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10), true
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case json.Number:
		return x.String(), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := normValue(key, e); ok {
				parts = append(parts, s)
			}
		}
		sort.Strings(parts)
		return strings.Join(parts, "\n"), true
	case []string:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, normPropString(e))
		}
		sort.Strings(parts)
		return strings.Join(parts, "\n"), true
	case map[string]any:
		// dhcp-range reads back as objects {start-address, end-address}.
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			s, _ := normValue(k, x[k])
			parts = append(parts, k+"="+s)
		}
		return strings.Join(parts, ","), true
	default:
		return fmt.Sprint(x), true
	}
}

// normSet sorts and dedups a comma list.
func normSet(s string) string {
	seen := map[string]bool{}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// normPropString orders the k=v parts of a property string ("name=eth0,ip=...") so that
// equal strings compare equal; a bare first item is PVE's default key "name".
func normPropString(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if i == 0 && !strings.Contains(p, "=") {
			p = "name=" + p
		}
		parts[i] = p
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// normalise returns props with default-valued keys dropped.
func normalise(k Kind, p Props) Props {
	out := make(Props, len(p))
	for key, v := range p {
		if d, ok := defaults[k][key]; ok && d == v {
			continue
		}
		out[key] = v
	}
	return out
}

// Owned returns only the keys in owned, normalised.
func (p Props) Owned(k Kind, owned []string) Props {
	n := normalise(k, p)
	out := make(Props, len(owned))
	for _, key := range owned {
		if v, ok := n[key]; ok {
			out[key] = v
		}
	}
	return out
}

// Clone copies p.
func (p Props) Clone() Props {
	out := make(Props, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// Map renders props for a diff or a return value: list properties become lists.
func (p Props) Map() map[string]any {
	out := make(map[string]any, len(p))
	for k, v := range p {
		if listKeys[k] {
			if v == "" {
				out[k] = []string{}
			} else {
				out[k] = strings.Split(v, "\n")
			}
			continue
		}
		out[k] = v
	}
	return out
}
