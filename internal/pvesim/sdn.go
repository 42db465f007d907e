package pvesim

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/deevnet/tenant/internal/pvesim/schema"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
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
func storeParams(mi *schema.Method, params Params, skip ...string) sdnObj {
	o := sdnObj{}
	for k, v := range params {
		if contains(skip, k) || contains([]string{"lock-token", "digest", "delete", "release-lock"}, k) {
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

func storeValue(k string, p *schema.Param, v any) any {
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
		items := schema.SplitList(s)
		sort.Strings(items)
		s = strings.Join(items, ",")
	}
	return s
}

func (s *Server) checkLockToken(params Params, op string) error {
	l := s.st.SDN.Lock
	if l != nil && params.Str("lock-token") != l.Token {
		return plainErr("%s: invalid lock token provided!", op)
	}
	return nil
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
			if contains(topKeys(kind), k) {
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

// ---- cluster-level ----

func (s *Server) sdnIndex(r *reqCtx) (any, error) {
	var out []map[string]string
	for _, id := range []string{"controllers", "dns", "dry-run", "fabrics", "ipams", "lock", "rollback", "vnets", "zones"} {
		out = append(out, map[string]string{"id": id})
	}
	return out, nil
}

func (s *Server) sdnLockAcquire(r *reqCtx) (any, error) {
	sd := s.st.SDN
	if sd.Lock != nil {
		return nil, plainErr("could not acquire lock for SDN config: invalid lock token provided!")
	}
	if !r.params.Bool("allow-pending") && hasPending(sd) {
		return nil, plainErr("could not acquire lock for SDN config: configuration has pending changes")
	}
	sd.Lock = &sdnLock{Token: randomUUID(s.rng), Since: time.Now().Unix(), Owner: r.who.String()}
	return sd.Lock.Token, nil
}

func (s *Server) sdnLockRelease(r *reqCtx) (any, error) {
	sd := s.st.SDN
	if r.params.Bool("force") {
		sd.Lock = nil
		return nil, nil
	}
	if sd.Lock != nil && r.params.Str("lock-token") != sd.Lock.Token {
		return nil, plainErr("could not release lock: invalid lock token provided!")
	}
	sd.Lock = nil
	return nil, nil
}

func (s *Server) sdnRollback(r *reqCtx) (any, error) {
	sd := s.st.SDN
	if err := s.checkLockToken(r.params, "could not rollback SDN configuration"); err != nil {
		return nil, err
	}
	if sd.Running == nil {
		return nil, plainErr("could not rollback SDN configuration: no running configuration found")
	}
	sd.Current = sd.Running.clone()
	if r.params.Has("lock-token") && sd.Lock != nil && (!r.params.Has("release-lock") || r.params.Bool("release-lock")) {
		sd.Lock = nil
	}
	return nil, nil
}

// ---- zones ----

var zoneOptions = map[string]struct{ allowed, required []string }{
	"evpn": {[]string{"controller", "vrf-vxlan", "exitnodes", "exitnodes-primary", "exitnodes-local-routing", "advertise-subnets",
		"disable-arp-nd-suppression", "bridge-disable-mac-learning", "rt-import", "vxlan-port", "mac"}, []string{"controller", "vrf-vxlan"}},
	"simple": {[]string{"dhcp"}, nil},
	"vlan":   {[]string{"bridge"}, []string{"bridge"}},
	"qinq":   {[]string{"bridge", "tag", "vlan-protocol"}, []string{"bridge", "tag"}},
	"vxlan":  {[]string{"peers", "fabric", "vxlan-port", "bridge-disable-mac-learning"}, nil},
	"faucet": {[]string{"dp-id"}, []string{"dp-id"}},
}

var zoneCommon = []string{"zone", "type", "nodes", "ipam", "dns", "reversedns", "dnszone", "mtu"}

func (s *Server) zoneTypeCheck(typ string, o sdnObj) error {
	opts := zoneOptions[typ]
	for _, k := range sortedKeys(o) {
		if !contains(zoneCommon, k) && !contains(opts.allowed, k) {
			return plainErr("unexpected property '%s'", k)
		}
	}
	for _, k := range opts.required {
		if _, ok := o[k]; !ok {
			return plainErr("missing value for required option '%s'", k)
		}
	}
	return nil
}

// zoneSemantic runs the checks PVE does inside the SDN lock.
func (s *Server) zoneSemantic(id string, o sdnObj) string {
	cur := s.st.SDN.Current
	if o["type"] == "evpn" {
		c := fmt.Sprint(o["controller"])
		ctl, ok := cur["controllers"][c]
		if !ok {
			return fmt.Sprintf("controller %s don't exist", c)
		}
		if ctl["type"] != "evpn" {
			return fmt.Sprintf("%s is not a evpn controller type", c)
		}
		for _, zid := range sortedKeys(cur["zones"]) {
			if zid != id && jsonEqual(cur["zones"][zid]["vrf-vxlan"], o["vrf-vxlan"]) {
				return fmt.Sprintf("vrf-vxlan %v is already declared in %s", o["vrf-vxlan"], zid)
			}
		}
	}
	if o["type"] == "vxlan" {
		_, p := o["peers"]
		_, f := o["fabric"]
		if p == f {
			return "400 Parameter verification failed.\npeers: must have exactly one of peers / fabric defined\n"
		}
	}
	if ip, ok := o["ipam"]; ok {
		if _, ok := s.st.SDN.IPAMs[fmt.Sprint(ip)]; !ok {
			return fmt.Sprintf("400 Parameter verification failed.\nipam: %v not existing\n", ip)
		}
	}
	for _, k := range []string{"dns", "reversedns"} {
		if d, ok := o[k]; ok {
			if _, ok := s.st.SDN.DNS[fmt.Sprint(d)]; !ok {
				return fmt.Sprintf("400 Parameter verification failed.\n%s: %v don't exist\n", k, d)
			}
		}
	}
	if _, ok := o["dnszone"]; ok {
		if _, ok := o["dns"]; !ok {
			return "400 Parameter verification failed.\ndnszone: missing dns server\n"
		}
	}
	return ""
}

func (s *Server) zoneList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, o := range s.view("zones", r.params) {
		id := fmt.Sprint(o["zone"])
		if t := r.params.Str("type"); t != "" && o["type"] != t {
			continue
		}
		if s.st.has(r.who, "/sdn/zones/"+id, []string{"SDN.Audit", "SDN.Allocate"}, true) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s *Server) zoneGet(r *reqCtx) (any, error) {
	return s.itemGet("zones", r.params.Str("zone"), r.params, fmt.Sprintf("sdn '%s' does not exist", r.params.Str("zone")))
}

func (s *Server) itemGet(kind, id string, params Params, notFound string) (any, error) {
	for _, o := range s.view(kind, params) {
		if fmt.Sprint(o[idKey(kind)]) == id {
			return o, nil
		}
	}
	return nil, plainErr("%s", notFound)
}

func (s *Server) zoneCreate(r *reqCtx) (any, error) {
	mi := s.schema.Method("/cluster/sdn/zones", "POST")
	o := storeParams(mi, r.params)
	id := r.params.Str("zone")
	if err := s.zoneTypeCheck(fmt.Sprint(o["type"]), o); err != nil {
		return nil, err
	}
	const op = "create sdn zone object"
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	if _, ok := cur["zones"][id]; ok {
		return nil, plainErr("%s failed: sdn zone object ID '%s' already defined", op, id)
	}
	if m := s.zoneSemantic(id, o); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	if o["type"] == "evpn" {
		if _, ok := o["mac"]; !ok {
			o["mac"] = s.macAddr()
		}
	}
	cur["zones"][id] = o
	return nil, nil
}

// applyUpdate merges params into a copy of old, honouring "delete".
func applyUpdate(mi *schema.Method, old sdnObj, params Params, fixed ...string) (sdnObj, string) {
	o := copyObj(old)
	if params.Has("delete") {
		var dels []string
		if arr, ok := params["delete"].([]string); ok {
			dels = arr
		} else {
			dels = schema.SplitList(params.Str("delete"))
		}
		for _, k := range dels {
			if contains(fixed, k) {
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

func (s *Server) zoneUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("zone")
	const op = "update sdn zone object"
	cur := s.st.SDN.Current
	old, ok := cur["zones"][id]
	if !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	mi := s.schema.Method("/cluster/sdn/zones/{zone}", "PUT")
	o, bad := applyUpdate(mi, old, r.params, "zone", "type")
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	if err := s.zoneTypeCheck(fmt.Sprint(o["type"]), o); err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if err := s.checkDigest("zones", r.params, op); err != nil {
		return nil, err
	}
	if m := s.zoneSemantic(id, o); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	if !jsonEqual(o["ipam"], old["ipam"]) {
		for _, sn := range cur["subnets"] {
			if vn := cur["vnets"][fmt.Sprint(sn["vnet"])]; vn != nil && vn["zone"] == id {
				return nil, plainErr("%s failed: 400 Parameter verification failed.\nipam: can't change ipam if a subnet is already defined in this zone\n", op)
			}
		}
	}
	if o["type"] == "evpn" {
		if _, ok := o["mac"]; !ok {
			o["mac"] = s.macAddr()
		}
	}
	cur["zones"][id] = o
	return nil, nil
}

func (s *Server) zoneDelete(r *reqCtx) (any, error) {
	id := r.params.Str("zone")
	const op = "delete sdn zone object"
	cur := s.st.SDN.Current
	if _, ok := cur["zones"][id]; !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	for _, vid := range sortedKeys(cur["vnets"]) {
		if cur["vnets"][vid]["zone"] == id {
			return nil, plainErr("%s failed: zone %s is used by vnet %s", op, id, vid)
		}
	}
	delete(cur["zones"], id)
	return nil, nil
}

// ---- vnets ----

func (s *Server) vnetZone(vnet string) (string, error) {
	v, ok := s.st.SDN.Current["vnets"][vnet]
	if !ok {
		return "", plainErr("sdn vnet '%s' does not exist", vnet)
	}
	return fmt.Sprint(v["zone"]), nil
}

// vnetPerm checks privs on /sdn/zones/<zone>/<vnet>, the zone looked up in
// the current config (so a pending-deleted vnet is "does not exist").
func (s *Server) vnetPerm(r *reqCtx, vnet string, privs ...string) error {
	zone, err := s.vnetZone(vnet)
	if err != nil {
		return err
	}
	return s.st.check(r.who, "/sdn/zones/"+zone+"/"+vnet, privs, true)
}

func (s *Server) vnetList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, o := range s.view("vnets", r.params) {
		zone := fmt.Sprint(o["zone"])
		if p, ok := o["pending"].(sdnObj); ok && o["zone"] == nil {
			zone = fmt.Sprint(p["zone"])
		}
		if s.st.has(r.who, "/sdn/zones/"+zone+"/"+fmt.Sprint(o["vnet"]), []string{"SDN.Audit", "SDN.Allocate"}, true) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s *Server) vnetGet(r *reqCtx) (any, error) {
	id := r.params.Str("vnet")
	if err := s.vnetPerm(r, id, "SDN.Audit", "SDN.Allocate"); err != nil {
		return nil, err
	}
	return s.itemGet("vnets", id, r.params, fmt.Sprintf("sdn vnet '%s' does not exist", id))
}

func (s *Server) vnetSemantic(id string, o sdnObj, hasSubnets bool) string {
	cur := s.st.SDN.Current
	z := cur["zones"][fmt.Sprint(o["zone"])]
	if z == nil {
		return "unknown section type ''"
	}
	if z["type"] == "evpn" || z["type"] == "vxlan" {
		if _, ok := o["tag"]; !ok {
			return "400 Parameter verification failed.\ntag: missing vxlan tag\n"
		}
		if o["vlanaware"] == int64(1) {
			return "400 Parameter verification failed.\nvlanaware: vlan-aware option can't be enabled with evpn\n"
		}
		for _, vid := range sortedKeys(cur["vnets"]) {
			v := cur["vnets"][vid]
			if vid == id {
				continue
			}
			if vz := cur["zones"][fmt.Sprint(v["zone"])]; vz != nil && (vz["type"] == "evpn" || vz["type"] == "vxlan") && jsonEqual(v["tag"], o["tag"]) {
				return fmt.Sprintf("400 Parameter verification failed.\ntag: vxlan tag %v already exist in vnet %s in zone %v\n", o["tag"], vid, v["zone"])
			}
		}
	}
	if o["vlanaware"] == int64(1) && hasSubnets {
		return "400 Parameter verification failed.\nvlanaware: vlanaware vnet can't have subnets\n"
	}
	return ""
}

func (s *Server) vnetSubnets(vnet string) []string {
	var out []string
	for id, sn := range s.st.SDN.Current["subnets"] {
		if sn["vnet"] == vnet {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func (s *Server) vnetCreate(r *reqCtx) (any, error) {
	id := r.params.Str("vnet")
	const op = "create sdn vnet object"
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	if _, ok := cur["vnets"][id]; ok {
		return nil, plainErr("%s failed: sdn vnet object ID '%s' already defined", op, id)
	}
	o := storeParams(s.schema.Method("/cluster/sdn/vnets", "POST"), r.params)
	o["type"] = "vnet"
	if m := s.vnetSemantic(id, o, false); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["vnets"][id] = o
	return nil, nil
}

func (s *Server) vnetUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("vnet")
	const op = "update sdn vnet object"
	if err := s.vnetPerm(r, id, "SDN.Allocate"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	old := cur["vnets"][id]
	o, bad := applyUpdate(s.schema.Method("/cluster/sdn/vnets/{vnet}", "PUT"), old, r.params, "vnet", "type")
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	if _, ok := o["zone"]; !ok {
		return nil, plainErr("%s failed: cannot delete zone", op)
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if err := s.checkDigest("vnets", r.params, op); err != nil {
		return nil, err
	}
	subs := s.vnetSubnets(id)
	if o["zone"] != old["zone"] {
		if len(subs) > 0 {
			return nil, plainErr("%s failed: can't change zone if subnets exist", op)
		}
		// moving to another zone needs Allocate there too
		if err := s.st.check(r.who, "/sdn/zones/"+fmt.Sprint(o["zone"]), []string{"SDN.Allocate"}, false); err != nil {
			return nil, err
		}
	}
	if m := s.vnetSemantic(id, o, len(subs) > 0); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["vnets"][id] = o
	return nil, nil
}

func (s *Server) vnetDelete(r *reqCtx) (any, error) {
	id := r.params.Str("vnet")
	const op = "delete sdn vnet object"
	if err := s.vnetPerm(r, id, "SDN.Allocate"); err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if len(s.vnetSubnets(id)) > 0 {
		return nil, paramErr(map[string]string{"vnet": "Can't delete vnet if subnets exists"})
	}
	delete(s.st.SDN.Current["vnets"], id)
	return nil, nil
}

// ---- subnets ----

func (s *Server) subnetList(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	out := []sdnObj{}
	zone, err := s.vnetZone(vnet)
	if err != nil {
		return nil, err
	}
	if !s.st.has(r.who, "/sdn/zones/"+zone+"/"+vnet, []string{"SDN.Audit", "SDN.Allocate"}, true) {
		return out, nil
	}
	for _, o := range s.view("subnets", r.params) {
		if o["vnet"] == vnet {
			out = append(out, o)
		}
	}
	return out, nil
}

// subnetID turns a CIDR or an id into the canonical "<zone>-<net>-<len>".
func subnetID(zone, v string) string {
	if strings.Contains(v, "/") {
		return zone + "-" + strings.ReplaceAll(v, "/", "-")
	}
	return v
}

func (s *Server) subnetGet(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	if err := s.vnetPerm(r, vnet, "SDN.Audit", "SDN.Allocate"); err != nil {
		return nil, err
	}
	zone, _ := s.vnetZone(vnet)
	id := subnetID(zone, r.params.Str("subnet"))
	o, err := s.itemGet("subnets", id, r.params, fmt.Sprintf("sdn subnet '%s' does not exist", id))
	if err != nil {
		return nil, err
	}
	if o.(sdnObj)["vnet"] != vnet {
		return nil, paramErr(map[string]string{"vnet": "wrong vnet"})
	}
	return o, nil
}

func (s *Server) subnetSemantic(cidr string, o sdnObj) string {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "400 Parameter verification failed.\nsubnet: invalid subnet\n"
	}
	if gw, ok := o["gateway"]; ok {
		a, err := netip.ParseAddr(fmt.Sprint(gw))
		if err != nil || (!pfx.Masked().Contains(a) && (!a.Is4() || pfx.Bits() != 32)) {
			return fmt.Sprintf("400 Parameter verification failed.\ngateway: gateway %v is not in subnet %s\n", gw, cidr)
		}
	}
	if rs, ok := o["dhcp-range"].([]any); ok {
		var parsed []sdnObj
		var ranges [][2]netip.Addr
		for _, it := range rs {
			kv := sdnObj{}
			for _, part := range strings.Split(fmt.Sprint(it), ",") {
				k, v, _ := strings.Cut(part, "=")
				kv[k] = v
			}
			a, e1 := netip.ParseAddr(fmt.Sprint(kv["start-address"]))
			b, e2 := netip.ParseAddr(fmt.Sprint(kv["end-address"]))
			if e1 != nil || e2 != nil || b.Less(a) || !pfx.Masked().Contains(a) || !pfx.Masked().Contains(b) {
				return "400 Parameter verification failed.\ndhcp-range: invalid dhcp range\n"
			}
			for _, rg := range ranges {
				if !b.Less(rg[0]) && !rg[1].Less(a) {
					return "400 Parameter verification failed.\ndhcp-range: dhcp ranges overlap\n"
				}
			}
			ranges = append(ranges, [2]netip.Addr{a, b})
			parsed = append(parsed, kv)
		}
		arr := []any{}
		for _, p := range parsed {
			arr = append(arr, map[string]any(p))
		}
		o["dhcp-range"] = arr
	}
	return ""
}

func (s *Server) subnetCreate(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	const op = "create sdn subnet object"
	if err := s.vnetPerm(r, vnet, "SDN.Allocate"); err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	v := cur["vnets"][vnet]
	zone := fmt.Sprint(v["zone"])
	cidr := r.params.Str("subnet")
	if !strings.Contains(cidr, "/") {
		return nil, paramErr(map[string]string{"subnet": "invalid format - value does not look like a valid CIDR network\n"})
	}
	id := subnetID(zone, cidr)
	if _, ok := cur["subnets"][id]; ok {
		return nil, plainErr("%s failed: sdn subnet object ID '%s' already defined", op, id)
	}
	if v["vlanaware"] == int64(1) {
		return nil, plainErr("%s failed: you can't add a subnet on a vlanaware vnet", op)
	}
	o := storeParams(s.schema.Method("/cluster/sdn/vnets/{vnet}/subnets", "POST"), r.params)
	o["subnet"], o["type"], o["vnet"] = id, "subnet", vnet
	if m := s.subnetSemantic(cidr, o); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["subnets"][id] = o
	return nil, nil
}

func (s *Server) subnetUpdate(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	const op = "update sdn subnet object"
	if err := s.vnetPerm(r, vnet, "SDN.Allocate"); err != nil {
		return nil, err
	}
	zone, _ := s.vnetZone(vnet)
	id := subnetID(zone, r.params.Str("subnet"))
	cur := s.st.SDN.Current
	old, ok := cur["subnets"][id]
	if !ok {
		return nil, plainErr("sdn subnet '%s' does not exist", id)
	}
	if old["vnet"] != vnet {
		return nil, paramErr(map[string]string{"vnet": "wrong vnet"})
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if err := s.checkDigest("subnets", r.params, op); err != nil {
		return nil, err
	}
	o, bad := applyUpdate(s.schema.Method("/cluster/sdn/vnets/{vnet}/subnets/{subnet}", "PUT"), old, r.params, "subnet", "vnet", "type")
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	parts := strings.Split(id, "-")
	cidr := strings.Join(parts[1:len(parts)-1], "-") + "/" + parts[len(parts)-1]
	if m := s.subnetSemantic(cidr, o); m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["subnets"][id] = o
	return nil, nil
}

func (s *Server) subnetDelete(r *reqCtx) (any, error) {
	vnet := r.params.Str("vnet")
	const op = "delete sdn subnet object"
	if err := s.vnetPerm(r, vnet, "SDN.Allocate"); err != nil {
		return nil, err
	}
	zone, _ := s.vnetZone(vnet)
	id := subnetID(zone, r.params.Str("subnet"))
	cur := s.st.SDN.Current
	if _, ok := cur["subnets"][id]; !ok {
		return nil, plainErr("sdn subnet '%s' does not exist", id)
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	delete(cur["subnets"], id)
	return nil, nil
}

// ---- controllers ----

func (s *Server) controllerList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, o := range s.view("controllers", r.params) {
		if t := r.params.Str("type"); t != "" && o["type"] != t {
			continue
		}
		if s.st.has(r.who, "/sdn/controllers/"+fmt.Sprint(o["controller"]), []string{"SDN.Audit", "SDN.Allocate"}, true) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s *Server) controllerGet(r *reqCtx) (any, error) {
	id := r.params.Str("controller")
	return s.itemGet("controllers", id, r.params, fmt.Sprintf("sdn '%s' does not exist", id))
}

var controllerOptions = map[string]struct{ allowed, required []string }{
	"evpn":   {[]string{"asn", "peers", "fabric"}, []string{"asn"}},
	"bgp":    {[]string{"asn", "node", "peers", "ebgp", "ebgp-multihop", "loopback", "bgp-multipath-as-path-relax"}, []string{"asn", "node", "peers"}},
	"isis":   {[]string{"node", "isis-domain", "isis-ifaces", "isis-net", "loopback"}, []string{"node", "isis-domain", "isis-ifaces", "isis-net"}},
	"faucet": {nil, nil},
}

func (s *Server) controllerCheck(id string, o sdnObj) (string, error) {
	opts := controllerOptions[fmt.Sprint(o["type"])]
	for _, k := range sortedKeys(o) {
		if k != "controller" && k != "type" && !contains(opts.allowed, k) {
			return "", plainErr("unexpected property '%s'", k)
		}
	}
	for _, k := range opts.required {
		if _, ok := o[k]; !ok {
			return "", plainErr("missing value for required option '%s'", k)
		}
	}
	if o["type"] == "evpn" {
		_, p := o["peers"]
		_, f := o["fabric"]
		if p == f {
			return "", plainErr("must have exactly one of peers / fabric defined")
		}
		for cid, c := range s.st.SDN.Current["controllers"] {
			if cid != id && c["type"] == "evpn" {
				return "only 1 global evpn controller can be defined", nil
			}
		}
		if fab, ok := o["fabric"]; ok {
			if _, ok := s.st.SDN.Current["fabrics"][fmt.Sprint(fab)]; !ok {
				return fmt.Sprintf("fabric '%v' does not exist in configuration", fab), nil
			}
		}
	}
	return "", nil
}

func (s *Server) controllerCreate(r *reqCtx) (any, error) {
	id := r.params.Str("controller")
	const op = "create sdn controller object"
	o := storeParams(s.schema.Method("/cluster/sdn/controllers", "POST"), r.params)
	m, err := s.controllerCheck(id, o)
	if err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	cur := s.st.SDN.Current
	if _, ok := cur["controllers"][id]; ok {
		return nil, plainErr("%s failed: sdn controller object ID '%s' already defined", op, id)
	}
	if m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["controllers"][id] = o
	return nil, nil
}

func (s *Server) controllerUpdate(r *reqCtx) (any, error) {
	id := r.params.Str("controller")
	const op = "update sdn controller object"
	cur := s.st.SDN.Current
	old, ok := cur["controllers"][id]
	if !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	o, bad := applyUpdate(s.schema.Method("/cluster/sdn/controllers/{controller}", "PUT"), old, r.params, "controller", "type")
	if bad != "" {
		return nil, plainErr("cannot delete '%s'", bad)
	}
	m, err := s.controllerCheck(id, o)
	if err != nil {
		return nil, err
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	if err := s.checkDigest("controllers", r.params, op); err != nil {
		return nil, err
	}
	if m != "" {
		return nil, plainErr("%s failed: %s", op, m)
	}
	cur["controllers"][id] = o
	return nil, nil
}

func (s *Server) controllerDelete(r *reqCtx) (any, error) {
	id := r.params.Str("controller")
	const op = "delete sdn controller object"
	cur := s.st.SDN.Current
	if _, ok := cur["controllers"][id]; !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	if err := s.checkLockToken(r.params, op+" failed"); err != nil {
		return nil, err
	}
	for _, zid := range sortedKeys(cur["zones"]) {
		if cur["zones"][zid]["controller"] == id {
			return nil, plainErr("%s failed: controller %s is used by %s", op, id, zid)
		}
	}
	delete(cur["controllers"], id)
	return nil, nil
}

// ---- ipams / dns (not versioned) ----

func (s *Server) ipamList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, id := range sortedKeys(s.st.SDN.IPAMs) {
		if s.st.has(r.who, "/sdn/ipams/"+id, []string{"SDN.Audit", "SDN.Allocate"}, true) {
			out = append(out, s.st.SDN.IPAMs[id])
		}
	}
	return out, nil
}

func (s *Server) dnsList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, id := range sortedKeys(s.st.SDN.DNS) {
		if s.st.has(r.who, "/sdn/dns/"+id, []string{"SDN.Audit", "SDN.Allocate"}, true) {
			o := copyObj(s.st.SDN.DNS[id])
			delete(o, "key")
			out = append(out, o)
		}
	}
	return out, nil
}
