package pvesim

// PVE's own regression cases, run against pvesim through its REST API (make test-pvesim). The
// cases are data (testdata/conformance/*.json): each config is built as root through the API,
// then each case is asked through the API. Cases the API cannot express carry not_expressible and
// are counted, not run. The counts per source file are the fidelity table in docs/pvesim.md, which
// TestFidelityTableInStep keeps in step.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// confACL is one acl line of a user.cfg.
type confACL struct {
	Line       int      `json:"line"`
	Propagate  bool     `json:"propagate"`
	Path       string   `json:"path"`
	UGIDs      []string `json:"ugids"`
	Roles      []string `json:"roles"`
	APIRefuses string   `json:"api_refuses"`
}

type confToken struct {
	ID      string `json:"id"`
	Privsep bool   `json:"privsep"`
}

type confPool struct {
	ID      string   `json:"id"`
	Comment string   `json:"comment"`
	VMs     []int    `json:"vms"`
	Storage []string `json:"storage"`
}

// confConfig is one user.cfg of PVE's tests.
type confConfig struct {
	Users  []string            `json:"users"`
	Tokens []confToken         `json:"tokens"`
	Groups map[string][]string `json:"groups"`
	Roles  map[string][]string `json:"roles"`
	ACLs   []confACL           `json:"acls"`
	Pools  []confPool          `json:"pools"`
}

// confCase is one check of PVE's tests.
type confCase struct {
	Name           string                    `json:"name"`
	Config         string                    `json:"config"`
	Kind           string                    `json:"kind"` // roles, permissions, dump
	User           string                    `json:"user"`
	Path           string                    `json:"path"`
	Expect         []string                  `json:"expect"`
	Privs          []string                  `json:"privs"`
	UserID         string                    `json:"userid"`
	ShouldFail     bool                      `json:"should_fail"`
	Dump           map[string]map[string]int `json:"dump"`
	NotExpressible string                    `json:"not_expressible"`
}

type confData struct {
	Configs map[string]confConfig `json:"configs"`
	Cases   []confCase            `json:"cases"`
}

// confPassword is every user's password, for the ticket logins of the cases run as the user.
const confPassword = "conformance-pw"

func loadConfData(t *testing.T, file string) confData {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "conformance", file))
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	var d confData
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	return d
}

// confTally is one source file's counts.
type confTally struct{ cases, expressible, pass int }

// confSim is one config built in a fresh simulator: a client per user (ticket) and token (secret).
type confSim struct {
	root    *client
	callers map[string]*client
	// loadErrs are the API's refusals while building the config that PVE's API would not give.
	loadErrs []string
}

var confVMPath = regexp.MustCompile(`^/vms/([1-9][0-9]{2,})$`)

// buildConfig builds cfg through the REST API as root: roles, groups, users (with their groups and
// a password), tokens, the VMs and storages the config and its cases name, pools, then the ACL
// lines in order. A line PVE's API refuses must be refused with PVE's answer.
func buildConfig(t *testing.T, cfg confConfig, cases []confCase) *confSim {
	t.Helper()
	s := startSim(t, func(c *Config) { c.TaskDuration = 0; c.Latency = 0 })
	cs := &confSim{root: rootClient(t, s), callers: map[string]*client{}}
	try := func(what string, r resp) bool {
		if r.Status != 200 {
			cs.loadErrs = append(cs.loadErrs, fmt.Sprintf("%s: %d %q %v", what, r.Status, r.Message, r.Errors))
			return false
		}
		return true
	}
	for _, id := range sortedKeys(cfg.Roles) {
		try("role "+id, cs.root.do("POST", "/access/roles", vals("roleid", id, "privs", strings.Join(cfg.Roles[id], ","))))
	}
	for _, g := range sortedKeys(cfg.Groups) {
		try("group "+g, cs.root.do("POST", "/access/groups", vals("groupid", g)))
	}
	for _, u := range cfg.Users {
		var groups []string
		for _, g := range sortedKeys(cfg.Groups) {
			if slices.Contains(cfg.Groups[g], u) {
				groups = append(groups, g)
			}
		}
		p := vals("userid", u, "password", confPassword)
		if len(groups) > 0 {
			p.Set("groups", strings.Join(groups, ","))
		}
		if !try("user "+u, cs.root.do("POST", "/access/users", p)) {
			continue
		}
		c := anonClient(t, s)
		r := c.do("POST", "/access/ticket", vals("username", u, "password", confPassword))
		if try("ticket login of "+u, r) {
			var tk struct {
				Ticket string `json:"ticket"`
				CSRF   string `json:"CSRFPreventionToken"`
			}
			_ = json.Unmarshal(r.Data, &tk)
			c.ticket, c.csrf = tk.Ticket, tk.CSRF
			cs.callers[u] = c
		}
	}
	for _, tk := range cfg.Tokens {
		user, tid, _ := strings.Cut(tk.ID, "!")
		r := cs.root.do("POST", "/access/users/"+user+"/token/"+tid, vals("privsep", fmt.Sprint(boolInt(tk.Privsep))))
		if try("token "+tk.ID, r) {
			var out struct {
				Value string `json:"value"`
			}
			_ = json.Unmarshal(r.Data, &out)
			cs.callers[tk.ID] = tokenClient(t, s, tk.ID, out.Value)
		}
	}
	// every VM a pool holds or a case asks about, so that its one-privilege call has a target
	vms, stores := map[string]bool{}, map[string]bool{}
	for _, p := range cfg.Pools {
		for _, v := range p.VMs {
			vms[fmt.Sprint(v)] = true
		}
		for _, sid := range p.Storage {
			stores[sid] = true
		}
	}
	for _, c := range cases {
		if m := confVMPath.FindStringSubmatch(c.Path); m != nil {
			vms[m[1]] = true
		}
		if sid, ok := strings.CutPrefix(c.Path, "/storage/"); ok && !strings.Contains(sid, "/") {
			stores[sid] = true
		}
	}
	for _, v := range sortedKeys(vms) {
		if _, exit := cs.root.task("POST", "/nodes/"+node+"/qemu", vals("vmid", v)); exit != "OK" {
			cs.loadErrs = append(cs.loadErrs, "vm "+v+": "+exit)
		}
	}
	for _, sid := range sortedKeys(stores) {
		// disabled: a directory storage that is never activated needs no file system behind it
		try("storage "+sid, cs.root.do("POST", "/storage", vals("storage", sid, "type", "dir", "path", "/srv/"+sid, "disable", "1")))
	}
	for _, p := range cfg.Pools {
		if !try("pool "+p.ID, cs.root.do("POST", "/pools", vals("poolid", p.ID, "comment", p.Comment))) {
			continue
		}
		// PUT /pools with poolid a parameter: /pools/{poolid} cannot name a nested pool (a/b)
		up := vals("poolid", p.ID)
		for _, v := range p.VMs {
			up.Add("vms", fmt.Sprint(v))
		}
		if len(p.Storage) > 0 {
			up.Set("storage", strings.Join(p.Storage, ","))
		}
		if vs := up["vms"]; len(vs) > 0 {
			up.Set("vms", strings.Join(vs, ","))
		}
		try("pool "+p.ID+" members", cs.root.do("PUT", "/pools", up))
	}
	for _, a := range cfg.ACLs {
		p := vals("path", a.Path, "roles", strings.Join(a.Roles, ","), "propagate", fmt.Sprint(boolInt(a.Propagate)))
		for _, ug := range a.UGIDs {
			switch {
			case strings.HasPrefix(ug, "@"):
				p.Add("groups", ug[1:])
			case strings.Contains(ug, "!"):
				p.Add("tokens", ug)
			default:
				p.Add("users", ug)
			}
		}
		for _, k := range []string{"groups", "tokens", "users"} {
			if l := p[k]; len(l) > 0 {
				p.Set(k, strings.Join(l, ","))
			}
		}
		r := cs.root.do("PUT", "/access/acl", p)
		what := fmt.Sprintf("acl line %d (%s)", a.Line, a.Path)
		if a.APIRefuses != "" {
			if r.Status != 400 || r.Errors["path"] != a.APIRefuses {
				cs.loadErrs = append(cs.loadErrs, fmt.Sprintf("%s: want 400 path %q, got %d %v", what, a.APIRefuses, r.Status, r.Errors))
			}
			continue
		}
		try(what, r)
	}
	return cs
}

// privKeys is the sorted privileges of one path's dump.
func privKeys(m map[string]int) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// onePrivCall is a read that needs exactly one privilege on path, or "" when none is used for it.
func onePrivCall(path string) (method, call, priv string) {
	if m := confVMPath.FindStringSubmatch(path); m != nil {
		return "GET", "/nodes/" + node + "/qemu/" + m[1] + "/config", "VM.Audit"
	}
	if sid, ok := strings.CutPrefix(path, "/storage/"); ok && sid != "" && !strings.Contains(sid, "/") {
		return "GET", "/storage/" + sid, "Datastore.Allocate"
	}
	if pool, ok := strings.CutPrefix(path, "/pool/"); ok && pool != "" {
		// the list filtered to one pool: it shows the pool to a caller with Pool.Audit on it (a
		// nested pool has no /pools/{poolid} path)
		return "GET", "/pools?poolid=" + url.QueryEscape(pool), "Pool.Audit"
	}
	return "", "", ""
}

// runCase asks one case through the API; it returns what differs from PVE's answer.
func (cs *confSim) runCase(c confCase) []string {
	var bad []string
	caller := cs.callers[c.User]
	if caller == nil {
		return []string{"no client for " + c.User}
	}
	if c.Kind == "dump" {
		q := url.Values{}
		if c.UserID != "" {
			q.Set("userid", c.UserID)
		}
		r := caller.do("GET", "/access/permissions", q)
		switch {
		case c.ShouldFail && r.Status != 403:
			bad = append(bad, fmt.Sprintf("want a refusal, got %d %s", r.Status, r.Data))
		case !c.ShouldFail:
			var got map[string]map[string]int
			_ = json.Unmarshal(r.Data, &got)
			if r.Status != 200 || !reflect.DeepEqual(got, c.Dump) {
				bad = append(bad, fmt.Sprintf("dump: want %v, got %d %v", c.Dump, r.Status, got))
			}
		}
		return bad
	}
	want := c.Privs
	if want == nil {
		want = []string{}
	}
	// as root for the user, then as the user itself
	for _, who := range []struct {
		name string
		c    *client
		q    url.Values
	}{{"root for it", cs.root, vals("userid", c.User, "path", c.Path)}, {"itself", caller, vals("path", c.Path)}} {
		var got map[string]map[string]int
		r := who.c.do("GET", "/access/permissions", who.q)
		_ = json.Unmarshal(r.Data, &got)
		pm, ok := got[c.Path]
		if r.Status != 200 || !ok || len(got) != 1 || !slices.Equal(privKeys(pm), want) {
			bad = append(bad, fmt.Sprintf("permissions (%s): want {%s: %v}, got %d %v", who.name, c.Path, want, r.Status, got))
		}
	}
	if method, call, priv := onePrivCall(c.Path); call != "" {
		path, query, _ := strings.Cut(call, "?")
		q, _ := url.ParseQuery(query)
		r := caller.do(method, path, q)
		has := slices.Contains(want, priv)
		denied := fmt.Sprintf("Permission check failed (%s, %s)\n", c.Path, priv)
		if query != "" { // a filtered list: the entry shows, or not
			var l []any
			_ = json.Unmarshal(r.Data, &l)
			denied, r.Message = "", ""
			if r.Status == 200 && len(l) == 0 {
				r.Status = 403
			}
		}
		if has && r.Status != 200 || !has && (r.Status != 403 || r.Message != denied) {
			bad = append(bad, fmt.Sprintf("%s %s (needs %s): holds=%v, got %d %q", method, call, priv, has, r.Status, r.Message))
		}
	}
	return bad
}

// runConformance builds each config and runs its cases, returning the counts per source file.
func runConformance(t *testing.T, file string) map[string]*confTally {
	d := loadConfData(t, file)
	tally := map[string]*confTally{}
	byConfig := map[string][]confCase{}
	for _, c := range d.Cases {
		byConfig[c.Config] = append(byConfig[c.Config], c)
	}
	for _, name := range sortedKeys(byConfig) {
		cases := byConfig[name]
		cfg, ok := d.Configs[name]
		if !ok {
			t.Fatalf("%s: cases name config %s, which the data lacks", file, name)
		}
		cs := buildConfig(t, cfg, cases)
		for _, e := range cs.loadErrs {
			t.Errorf("%s: building it through the API: %s", name, e)
		}
		for _, c := range cases {
			src, _, _ := strings.Cut(c.Name, ":")
			if tally[src] == nil {
				tally[src] = &confTally{}
			}
			tl := tally[src]
			tl.cases++
			if c.NotExpressible != "" {
				continue
			}
			tl.expressible++
			if bad := cs.runCase(c); len(bad) > 0 {
				t.Errorf("%s %s %s %q: %s", c.Name, c.Kind, c.User, c.Path, strings.Join(bad, "; "))
				continue
			}
			tl.pass++
		}
	}
	for _, src := range sortedKeys(tally) {
		tl := tally[src]
		t.Logf("%-32s cases %3d  expressible %3d  pass %3d", src, tl.cases, tl.expressible, tl.pass)
	}
	return tally
}

// TestPVEConformanceAccess runs pve-access-control's permission tests (perm-test*.pl with their
// test*.cfg, api-get-permissions-test.pl) against pvesim.
func TestPVEConformanceAccess(t *testing.T) {
	start := time.Now()
	tally := runConformance(t, "pve-access-control.json")
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
	checkFidelityTable(t, filepath.Join("..", "..", "docs", "pvesim.md"), tally)
}

var fidelityRow = regexp.MustCompile("src/test/([A-Za-z0-9_.-]+\\.pl)`[^|]*\\|\\s*([0-9-]+)\\s*\\|\\s*([0-9-]+)\\s*\\|\\s*([0-9-]+)\\s*\\|")

// checkFidelityTable asserts that the fidelity table in doc has a row for every source file run,
// with the counts measured.
func checkFidelityTable(t *testing.T, doc string, tally map[string]*confTally) {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatalf("read the fidelity table: %v", err)
	}
	_, table, ok := strings.Cut(string(b), "<!-- fidelity:begin -->")
	table, _, ok2 := strings.Cut(table, "<!-- fidelity:end -->")
	if !ok || !ok2 {
		t.Fatalf("%s: no <!-- fidelity:begin/end --> table", doc)
	}
	rows := map[string]string{}
	for _, m := range fidelityRow.FindAllStringSubmatch(table, -1) {
		rows[m[1]] = m[2] + " " + m[3] + " " + m[4]
	}
	for _, src := range sortedKeys(tally) {
		tl := tally[src]
		want := fmt.Sprintf("%d %d %d", tl.cases, tl.expressible, tl.pass)
		if rows[src] != want {
			t.Errorf("%s: the fidelity table says cases/expressible/pass %q for %s, measured %q", doc, rows[src], src, want)
		}
	}
}
