package sdn

import (
	"fmt"
	"maps"
)

// Pending states of PVE's ?pending=1 view.
const (
	StateNone    = ""
	StateNew     = "new"
	StateChanged = "changed"
	StateDeleted = "deleted"
)

// Observed is one object as the pending view shows it.
type Observed struct {
	Object        // Props is the current (staged) config; nil when the object is deleted but not applied
	Running Props // the applied config; nil when the object was never applied
	State   string
}

// Exists reports whether the object is in the current (staged) config.
func (o Observed) Exists() bool { return o.Props != nil }

// idKeys names the id property of each kind in list answers.
var idKeys = map[Kind]string{
	KindZone: "zone", KindVNet: "vnet", KindSubnet: "subnet", KindController: "controller",
	KindFabric: "id", KindFabricNode: "node_id",
}

// metaKeys are never properties: view bookkeeping, ids and values the server derives.
var metaKeys = map[string]bool{"state": true, "pending": true, "digest": true}

var derivedKeys = map[Kind]map[string]bool{
	KindSubnet:     {"id": true, "cidr": true, "network": true, "mask": true, "zone": true, "type": true, "vnet": true, "subnet": true},
	KindFabricNode: {"fabric_id": true, "node_id": true},
	KindFabric:     {"id": true},
}

// ParseView reads the rows of a pending view (?pending=1) of one kind. parent is the vnet of
// subnets; for fabric nodes it is taken from each row's fabric_id.
func ParseView(k Kind, parent string, rows []map[string]any) ([]Observed, error) {
	idKey, ok := idKeys[k]
	if !ok {
		return nil, fmt.Errorf("unknown SDN kind %q", k)
	}
	out := make([]Observed, 0, len(rows))
	for i, row := range rows {
		id, _ := row[idKey].(string)
		if k == KindSubnet {
			if s, ok := row["id"].(string); ok && s != "" {
				id = s
			}
		}
		if id == "" {
			return nil, fmt.Errorf("%s view row %d has no %q", k, i, idKey)
		}
		p := parent
		if k == KindFabricNode {
			p, _ = row["fabric_id"].(string)
		}
		if k == KindSubnet {
			if v, ok := row["vnet"].(string); ok && v != "" {
				p = v
			}
		}
		state, _ := row["state"].(string)
		top := make(Props)
		for key, v := range row {
			if metaKeys[key] || key == idKey || derivedKeys[k][key] {
				continue
			}
			if s, ok := normValue(key, v); ok {
				top[key] = s
			}
		}
		pend, _ := row["pending"].(map[string]any)
		obs := Observed{Object: Object{Kind: k, ID: id, Parent: p}, State: state}
		switch state {
		case StateNew:
			cur := top
			overlay(k, cur, pend)
			obs.Props = cur
		case StateDeleted:
			obs.Running = top
		case StateChanged:
			obs.Running = top
			cur := maps.Clone(top)
			overlay(k, cur, pend)
			obs.Props = cur
		case StateNone:
			obs.Running = top
			obs.Props = maps.Clone(top)
		default:
			return nil, fmt.Errorf("%s %s: unknown pending state %q", k, id, state)
		}
		out = append(out, obs)
	}
	return out, nil
}

// overlay applies a pending map: a new value, or "deleted" for a removed key.
func overlay(k Kind, cur Props, pend map[string]any) {
	for key, v := range pend {
		if metaKeys[key] || derivedKeys[k][key] {
			continue
		}
		if s, ok := v.(string); ok && s == "deleted" {
			delete(cur, key)
			continue
		}
		if s, ok := normValue(key, v); ok {
			cur[key] = s
		} else {
			delete(cur, key)
		}
	}
}
