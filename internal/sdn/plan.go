package sdn

import (
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/deevnet/tenant/internal/reconcile"
)

// Desired is an object the caller wants, with the keys it owns. An owned key missing from
// Props must be absent on the server (it is removed with delete=).
type Desired struct {
	Object
	Owned []string
}

// Action is what an Op does.
type Action = reconcile.Action

// Actions.
const (
	Create = reconcile.Create
	Update = reconcile.Update
	Remove = reconcile.Delete
)

// Op is one staged write.
type Op struct {
	Action Action
	Object Object   // the desired object (create/update) or the observed one (delete)
	Set    Props    // create: every property; update: the changed keys
	Unset  []string // update: owned keys to remove
	Before Props    // owned keys as they are now (nil on create)
	After  Props    // owned keys as they will be (nil on delete)
	Full   Props    // the whole current config after the op (nil on delete), for pending state
	Obs    *Observed
}

// Change is the op in the shared vocabulary: the owned keys before and after, for the diff.
func (op Op) Change() reconcile.Change {
	c := reconcile.Change{Kind: string(op.Object.Kind), ID: op.Object.Key(), Action: op.Action}
	if op.Before != nil {
		c.Before = op.Before.Map()
	}
	if op.After != nil {
		c.After = op.After.Map()
	}
	return c
}

// Changes is ops in the shared vocabulary.
func Changes(ops []Op) reconcile.Plan {
	out := make(reconcile.Plan, 0, len(ops))
	for _, op := range ops {
		out = append(out, op.Change())
	}
	return out
}

// Index maps object keys to what the pending view shows.
type Index map[string]Observed

// NewIndex indexes observed objects by key.
func NewIndex(objs ...[]Observed) Index {
	ix := Index{}
	for _, list := range objs {
		for _, o := range list {
			ix[o.Key()] = o
		}
	}
	return ix
}

// Plan compares desired objects with the index and returns the writes that converge them:
// deletions of remove (children first), then creations and updates (parents first).
// An object in both lists is only kept. An object already as desired gives no op.
func Plan(desired []Desired, remove []Object, ix Index) []Op {
	var dels, puts []Op
	want := map[string]bool{}
	for _, d := range desired {
		want[d.Key()] = true
	}
	for _, r := range remove {
		if want[r.Key()] {
			continue
		}
		obs, ok := ix[r.Key()]
		if !ok || !obs.Exists() {
			continue
		}
		o := obs
		dels = append(dels, Op{Action: Remove, Object: obs.Object, Before: obs.Props.Owned(r.Kind, ownedKeys[r.Kind]), Obs: &o})
	}
	for _, d := range desired {
		wantProps := normalise(d.Kind, d.Props)
		obs, ok := ix[d.Key()]
		if !ok || !obs.Exists() {
			var po *Observed
			if ok {
				o := obs
				po = &o
			}
			puts = append(puts, Op{Action: Create, Object: d.Object, Set: wantProps.Clone(),
				After: wantProps.Owned(d.Kind, d.Owned), Full: wantProps.Clone(), Obs: po})
			continue
		}
		cur := obs.Props.Owned(d.Kind, d.Owned)
		after := wantProps.Owned(d.Kind, d.Owned)
		if maps.Equal(cur, after) {
			continue
		}
		set := Props{}
		for k, v := range after {
			if cur[k] != v {
				set[k] = v
			}
		}
		var unset []string
		for k := range cur {
			if _, ok := after[k]; !ok {
				unset = append(unset, k)
			}
		}
		sort.Strings(unset)
		full := normalise(d.Kind, obs.Props)
		for k, v := range set {
			full[k] = v
		}
		for _, k := range unset {
			delete(full, k)
		}
		o := obs
		puts = append(puts, Op{Action: Update, Object: Object{Kind: d.Kind, ID: d.ID, Parent: d.Parent, Props: wantProps},
			Set: set, Unset: unset, Before: cur, After: after, Full: full, Obs: &o})
	}
	sort.SliceStable(dels, func(i, j int) bool { return createRank[dels[i].Object.Kind] > createRank[dels[j].Object.Kind] })
	sort.SliceStable(puts, func(i, j int) bool { return createRank[puts[i].Object.Kind] < createRank[puts[j].Object.Kind] })
	return append(dels, puts...)
}

// PendingAfter is the pending state the object will have once op is staged (op may be nil).
func PendingAfter(obs *Observed, op *Op) string {
	if op == nil {
		if obs == nil {
			return StateNone
		}
		return obs.State
	}
	var running Props
	if obs != nil {
		running = obs.Running
	}
	switch op.Action {
	case Remove:
		if running != nil {
			return StateDeleted
		}
		return StateNone
	default:
		if running == nil {
			return StateNew
		}
		if maps.Equal(normalise(op.Object.Kind, running), normalise(op.Object.Kind, op.Full)) {
			return StateNone
		}
		return StateChanged
	}
}

// numericKeys are sent as JSON numbers; everything else as strings.
var numericKeys = map[string]bool{
	"asn": true, "vrf-vxlan": true, "tag": true, "mtu": true, "snat": true, "vxlan-port": true,
	"hello_interval": true, "csnp_interval": true, "exitnodes-local-routing": true,
	"advertise-subnets": true, "disable-arp-nd-suppression": true, "vlanaware": true, "isolate-ports": true,
}

var digits = regexp.MustCompile(`^-?[0-9]+$`)

func jsonValue(key, v string) any {
	if listKeys[key] {
		if v == "" {
			return []string{}
		}
		return strings.Split(v, "\n")
	}
	if numericKeys[key] && digits.MatchString(v) {
		n := 0
		neg := strings.HasPrefix(v, "-")
		for _, c := range strings.TrimPrefix(v, "-") {
			n = n*10 + int(c-'0')
		}
		if neg {
			n = -n
		}
		return n
	}
	return v
}

// Request is one HTTP call of an Op.
type Request struct {
	Method string
	Path   string
	Body   map[string]any // POST/PUT
	Query  url.Values     // DELETE
}

// Request renders the op as an API call; token is the SDN lock token ("" when not locked).
func (op Op) Request(token string) Request {
	o := op.Object
	esc := url.PathEscape
	var base, item string
	switch o.Kind {
	case KindZone:
		base, item = "/cluster/sdn/zones", "/cluster/sdn/zones/"+esc(o.ID)
	case KindVNet:
		base, item = "/cluster/sdn/vnets", "/cluster/sdn/vnets/"+esc(o.ID)
	case KindSubnet:
		base = "/cluster/sdn/vnets/" + esc(o.Parent) + "/subnets"
		item = base + "/" + esc(o.ID)
	case KindController:
		base, item = "/cluster/sdn/controllers", "/cluster/sdn/controllers/"+esc(o.ID)
	case KindFabric:
		base, item = "/cluster/sdn/fabrics/fabric", "/cluster/sdn/fabrics/fabric/"+esc(o.ID)
	case KindFabricNode:
		base = "/cluster/sdn/fabrics/node/" + esc(o.Parent)
		item = base + "/" + esc(o.ID)
	}
	if op.Action == Remove {
		q := url.Values{}
		if token != "" {
			q.Set("lock-token", token)
		}
		return Request{Method: "DELETE", Path: item, Query: q}
	}
	body := map[string]any{}
	for k, v := range op.Set {
		body[k] = jsonValue(k, v)
	}
	if token != "" {
		body["lock-token"] = token
	}
	if op.Action == Create {
		switch o.Kind {
		case KindSubnet:
			// The create body names the CIDR; PVE derives the id "<zone>-<net>-<len>".
			body["subnet"] = SubnetCIDR(o.ID)
			body["type"] = "subnet"
		case KindFabricNode:
			body["node_id"] = o.ID
		default:
			body[idKeys[o.Kind]] = o.ID
		}
		return Request{Method: "POST", Path: base, Body: body}
	}
	switch o.Kind {
	case KindZone, KindController:
		delete(body, "type") // fixed at creation; PUT does not take it
	case KindFabric:
		// PVE requires protocol and a delete array on every fabric PUT.
		body["protocol"] = o.Props["protocol"]
		body["delete"] = slices.Clone(op.Unset)
		if op.Unset == nil {
			body["delete"] = []string{}
		}
	case KindFabricNode:
		// PVE requires protocol and interfaces on every node PUT.
		body["protocol"] = o.Props["protocol"]
		body["interfaces"] = jsonValue("interfaces", o.Props["interfaces"])
		if len(op.Unset) > 0 {
			body["delete"] = slices.Clone(op.Unset)
		}
	}
	if o.Kind != KindFabric && o.Kind != KindFabricNode && len(op.Unset) > 0 {
		body["delete"] = strings.Join(op.Unset, ",")
	}
	return Request{Method: "PUT", Path: item, Body: body}
}

// SubnetCIDR turns a subnet id "<zone>-<net>-<len>" back into "<net>/<len>".
func SubnetCIDR(id string) string {
	i := strings.Index(id, "-")
	j := strings.LastIndex(id, "-")
	if i < 0 || j <= i {
		return id
	}
	return id[i+1:j] + "/" + id[j+1:]
}

// SubnetID builds PVE's subnet id from a zone and a CIDR.
func SubnetID(zone, cidr string) string {
	return zone + "-" + strings.ReplaceAll(cidr, "/", "-")
}
