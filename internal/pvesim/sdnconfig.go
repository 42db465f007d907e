package pvesim

// The SDN config model shared by every kind: current vs running config, the
// pending/running views, digests and how parameters are stored.

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/pveschema"
)

// sdnObj is one section of an SDN config file, with values as PVE returns
// them: strings, int64 (booleans as 0/1), float64, or []any.
type sdnObj map[string]any

type sdnConfig map[string]map[string]sdnObj // kind -> id -> object

type sdnLock struct {
	Token string `json:"token"`
	Since int64  `json:"since"`
	Owner string `json:"owner"`
}

type sdnState struct {
	Current sdnConfig         `json:"current"`
	Running sdnConfig         `json:"running"` // nil until the first apply
	Version int               `json:"version"`
	Lock    *sdnLock          `json:"lock,omitempty"`
	IPAMs   map[string]sdnObj `json:"ipams"`
	DNS     map[string]sdnObj `json:"dns"`
	// NodeFiles are each node's running files, written at apply.
	NodeFiles map[string]*nodeFiles `json:"node_files,omitempty"`
}

var sdnKinds = []string{"zones", "vnets", "subnets", "controllers", "fabrics", "fabricnodes"}

func newSDNState() *sdnState {
	c := sdnConfig{}
	for _, k := range sdnKinds {
		c[k] = map[string]sdnObj{}
	}
	return &sdnState{Current: c, IPAMs: map[string]sdnObj{"pve": {"ipam": "pve", "type": "pve"}}, DNS: map[string]sdnObj{}}
}

func (c sdnConfig) clone() sdnConfig {
	b, _ := json.Marshal(c)
	out := sdnConfig{}
	_ = json.Unmarshal(b, &out)
	for _, k := range sdnKinds {
		if out[k] == nil {
			out[k] = map[string]sdnObj{}
		}
		for _, o := range out[k] {
			normalizeNumbers(o)
		}
	}
	return out
}

// normalizeNumbers turns float64 from a JSON round trip back into int64 where integral.
func normalizeNumbers(o sdnObj) {
	for k, v := range o {
		if f, ok := v.(float64); ok && f == float64(int64(f)) && k != "hello_interval" && k != "csnp_interval" {
			o[k] = int64(f)
		}
	}
}

// digest is the SHA-1 of a whole config file (all objects of one kind).
func (c sdnConfig) digest(kind string) string {
	b, _ := json.Marshal(c[kind])
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

// digest caches sdnConfig.digest per kind until the next write request.
func (s *Server) digest(kind string) string {
	if s.digests == nil {
		s.digests = map[string]string{}
	}
	d, ok := s.digests[kind]
	if !ok {
		d = s.st.SDN.Current.digest(kind)
		s.digests[kind] = d
	}
	return d
}

func idKey(kind string) string {
	switch kind {
	case "zones":
		return "zone"
	case "vnets":
		return "vnet"
	case "subnets":
		return "subnet"
	case "controllers":
		return "controller"
	}
	return "id"
}

// storeParams converts validated parameters into stored values by schema type.
func storeParams(mi *pveschema.Method, params Params, skip ...string) sdnObj {
	o := sdnObj{}
	for k, v := range params {
		if slices.Contains(skip, k) || slices.Contains([]string{"lock-token", "digest", "delete", "release-lock"}, k) {
			continue
		}
		p := mi.Parameters.Lookup(k)
		if p == nil {
			continue
		}
		o[k] = storeValue(k, p, v)
	}
	return o
}

func storeValue(k string, p *pveschema.Param, v any) any {
	switch p.Type {
	case "integer":
		n, _ := strconv.ParseInt(strings.TrimPrefix(fmt.Sprint(v), "+"), 10, 64)
		return n
	case "boolean":
		if fmt.Sprint(v) == "1" {
			return int64(1)
		}
		return int64(0)
	case "number":
		f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
		return f
	case "array":
		items, ok := v.([]string)
		if !ok {
			items = []string{v.(string)}
		}
		out := []any{}
		for _, it := range items {
			out = append(out, it)
		}
		return out
	}
	s := fmt.Sprint(v)
	if arr, ok := v.([]string); ok {
		s = strings.Join(arr, ",")
	}
	if k == "nodes" || k == "exitnodes" {
		items := pveschema.SplitList(s)
		sort.Strings(items)
		s = strings.Join(items, ",")
	}
	return s
}

func (s *Server) macAddr() string {
	return fmt.Sprintf("%s:%02X:%02X:%02X", s.cfg.MACPrefix, s.rng.IntN(256), s.rng.IntN(256), s.rng.IntN(256))
}

// view renders objects of one kind for GET with pending/running flags.
func (s *Server) view(kind string, params Params) []sdnObj {
	sd := s.st.SDN
	cur := sd.Current[kind]
	dg := s.digest(kind)
	if params.Bool("pending") {
		run := map[string]sdnObj{}
		if sd.Running != nil {
			run = sd.Running[kind]
		}
		ids := map[string]bool{}
		for id := range cur {
			ids[id] = true
		}
		for id := range run {
			ids[id] = true
		}
		var out []sdnObj
		for _, id := range sortedKeys(ids) {
			out = append(out, pendingObj(kind, run[id], cur[id]))
		}
		return out
	}
	src := cur
	if params.Bool("running") {
		src = map[string]sdnObj{}
		if sd.Running != nil {
			src = sd.Running[kind]
		}
		dg = ""
	}
	var out []sdnObj
	for _, id := range sortedKeys(src) {
		o := copyObj(src[id])
		if dg != "" {
			o["digest"] = dg
		}
		out = append(out, decorate(kind, o))
	}
	return out
}

// topKeys stay at the top level of a "new" object in the pending view.
func topKeys(kind string) []string {
	switch kind {
	case "subnets":
		return []string{"subnet", "type", "vnet"}
	case "fabrics", "fabricnodes":
		return []string{"id", "fabric_id", "node_id", "protocol"}
	}
	return []string{idKey(kind), "type"}
}

func pendingObj(kind string, run, cur sdnObj) sdnObj {
	switch {
	case run == nil: // new
		o := sdnObj{"state": "new", "digest": nil}
		pend := sdnObj{}
		for k, v := range cur {
			if slices.Contains(topKeys(kind), k) {
				o[k] = v
			} else {
				pend[k] = v
			}
		}
		o["pending"] = pend
		return decorate(kind, o)
	case cur == nil:
		o := copyObj(run)
		o["state"], o["pending"], o["digest"] = "deleted", sdnObj{}, nil
		return decorate(kind, o)
	}
	o := copyObj(run)
	pend := sdnObj{}
	for k, v := range cur {
		if rv, ok := run[k]; !ok || !jsonEqual(rv, v) {
			pend[k] = v
		}
	}
	for k := range run {
		if _, ok := cur[k]; !ok {
			pend[k] = "deleted"
		}
	}
	if len(pend) > 0 {
		o["state"], o["pending"] = "changed", pend
	}
	o["digest"] = nil
	return decorate(kind, o)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func copyObj(o sdnObj) sdnObj {
	c := sdnObj{}
	for k, v := range o {
		c[k] = v
	}
	return c
}

// decorate adds the derived fields PVE returns (subnet id/cidr/network/mask/zone).
func decorate(kind string, o sdnObj) sdnObj {
	if kind == "subnets" {
		id, _ := o["subnet"].(string)
		if parts := strings.Split(id, "-"); len(parts) >= 3 {
			network := strings.Join(parts[1:len(parts)-1], "-")
			o["id"] = id
			o["zone"] = parts[0]
			o["network"] = network
			o["mask"] = parts[len(parts)-1]
			o["cidr"] = network + "/" + parts[len(parts)-1]
		}
		if _, ok := o["dhcp-range"]; !ok {
			o["dhcp-range"] = []any{}
		}
	}
	return o
}

func hasPending(sd *sdnState) bool {
	for _, kind := range []string{"zones", "vnets", "subnets", "controllers"} {
		run := map[string]sdnObj{}
		if sd.Running != nil {
			run = sd.Running[kind]
		}
		if len(run) != len(sd.Current[kind]) {
			return true
		}
		for id, c := range sd.Current[kind] {
			if r, ok := run[id]; !ok || !jsonEqual(r, c) {
				return true
			}
		}
	}
	return false
}

func (s *Server) checkDigest(kind string, params Params, op string) error {
	if d := params.Str("digest"); d != "" && d != s.digest(kind) {
		return plainErr("%s failed: detected modified configuration - file changed by other user? Try again.", op)
	}
	return nil
}

// itemGet is the GET of one object of kind in the requested view.
func (s *Server) itemGet(kind, id string, params Params, notFound string) (any, error) {
	for _, o := range s.view(kind, params) {
		if fmt.Sprint(o[idKey(kind)]) == id {
			return o, nil
		}
	}
	return nil, plainErr("%s", notFound)
}

// applyUpdate merges params into a copy of old, honouring "delete".
func applyUpdate(mi *pveschema.Method, old sdnObj, params Params, fixed ...string) (sdnObj, string) {
	o := copyObj(old)
	if params.Has("delete") {
		var dels []string
		if arr, ok := params["delete"].([]string); ok {
			dels = arr
		} else {
			dels = pveschema.SplitList(params.Str("delete"))
		}
		for _, k := range dels {
			if slices.Contains(fixed, k) {
				return nil, k
			}
			delete(o, k)
		}
	}
	for k, v := range storeParams(mi, params, fixed...) {
		o[k] = v
	}
	return o, ""
}
