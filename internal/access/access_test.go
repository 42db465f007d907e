package access

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

func startSim(t *testing.T) *pvesim.Server {
	t.Helper()
	srv, _ := pvesimtest.Start(t, pvesim.DefaultConfig())
	return srv
}

// run executes the module once as Ansible would, with the root token, and returns the result.
func run(t *testing.T, srv *pvesim.Server, args map[string]any) map[string]any {
	t.Helper()
	res, _ := runAsRoot(t, srv, Module(), args)
	return res
}

// runAsRoot executes mod once with the root token and returns its result and exit code.
func runAsRoot(t testing.TB, srv *pvesim.Server, mod module.Entry, args map[string]any) (map[string]any, int) {
	t.Helper()
	_, secret := srv.RootToken()
	all := map[string]any{
		"api_host": srv.Host(), "api_port": srv.Port(), "api_user": "root@pam",
		"api_token_id": "sim", "api_token_secret": secret, "ca_path": srv.CAFile(),
	}
	for k, v := range args {
		all[k] = v
	}
	return moduletest.Execute(t, mod, all)
}

// twoNodeConfig is pvesim's default cluster with a second node, dv02hyp002p03, and the template
// on shared storage, as the lab's (PVE clones a template on local storage to its own node only).
func twoNodeConfig() pvesim.Config {
	cfg := pvesim.DefaultConfig()
	second := cfg.Nodes[0]
	second.Name = "dv02hyp002p03"
	cfg.Nodes = append(cfg.Nodes, second)
	cfg.Storages = append(cfg.Storages, pvesim.StorageConfig{ID: "shared", Type: "rbd", Content: []string{"images"}, Shared: true, Clone: true})
	cfg.Templates[0].Config["scsi0"] = "shared:base-9000-disk-0,size=3G"
	cfg.Templates[0].Config["ide2"] = "shared:vm-9000-cloudinit,media=cdrom"
	return cfg
}

func writes(srv *pvesim.Server) int { return srv.Stats().Writes }

// runWithoutWrites runs the module as what (check mode, a second run), which must succeed with
// changed as given, send no write and return no token secret: only a run that creates the token
// has one to return.
func runWithoutWrites(t *testing.T, srv *pvesim.Server, what string, changed bool, args map[string]any) map[string]any {
	t.Helper()
	w := writes(srv)
	res := run(t, srv, args)
	if res["failed"] == true || res["changed"] != changed {
		t.Fatalf("%s: want changed=%v, got %v", what, changed, res)
	}
	if got := writes(srv) - w; got != 0 {
		t.Fatalf("%s sent %d write(s)", what, got)
	}
	if _, ok := res["token_secret"]; ok {
		t.Fatalf("%s returned a token secret", what)
	}
	return res
}

func tenantClient(t *testing.T, srv *pvesim.Server, user, secret string) *pve.Client {
	t.Helper()
	c, err := pve.New(pve.Config{Host: srv.Host(), Port: srv.Port(), User: user, TokenID: "iac",
		TokenSecret: secret, ValidateCerts: true, CAPath: srv.CAFile(), Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConvergeIdempotentAndScoped(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()

	// Check mode on a fresh cluster: reports the changes, writes nothing.
	res := runWithoutWrites(t, srv, "check mode", true, map[string]any{"name": "tdemo", "index": 1, "_ansible_check_mode": true, "_ansible_diff": true})
	// The custom role comes first, in the changes and in the diff (ADR-0013).
	if ch := toStrings(res["changes"]); len(ch) == 0 || !strings.HasPrefix(ch[0], "create role DeevnetTenantVM (VM.Allocate,VM.Audit,") {
		t.Fatalf("check mode: the custom role is not created first: %q", ch)
	}
	if b, _ := json.Marshal(res["diff"]); !strings.Contains(string(b), `"roles":[{"id":"DeevnetTenantVM","privs":["VM.Allocate",`) {
		t.Fatalf("check mode diff does not show the custom role: %s", b)
	}

	// First run creates everything and returns the token secret once.
	res = run(t, srv, map[string]any{"name": "tdemo", "index": 1, "_ansible_diff": true})
	if res["failed"] == true || res["changed"] != true {
		t.Fatalf("first run: %v", res)
	}
	secret, _ := res["token_secret"].(string)
	if secret == "" {
		t.Fatalf("first run returned no token_secret: %v", res)
	}
	if res["token_id"] != "tenant-tdemo@pve!iac" || res["pool"] != "tenant-tdemo" {
		t.Fatalf("unexpected ids: %v %v", res["token_id"], res["pool"])
	}
	// The secret is a value for the attachment file, never part of msg or diff.
	for _, k := range []string{"msg", "diff", "changes"} {
		b, _ := json.Marshal(res[k])
		if strings.Contains(string(b), secret) {
			t.Fatalf("token secret leaked into %s: %s", k, b)
		}
	}

	// Second run: changed=false and zero writes.
	runWithoutWrites(t, srv, "second run", false, map[string]any{"name": "tdemo", "index": 1})

	// A second tenant; then tdemo's token works on its own pool and is refused on tother's.
	if res := run(t, srv, map[string]any{"name": "tother", "index": 2}); res["failed"] == true {
		t.Fatalf("tother: %v", res)
	}
	c := tenantClient(t, srv, "tenant-tdemo@pve", secret)
	if err := c.Get(ctx, "/pools/tenant-tdemo", nil, nil); err != nil {
		t.Fatalf("tdemo token on its own pool: %v", err)
	}
	var ae *pve.APIError
	if err := c.Get(ctx, "/pools/tenant-tother", nil, nil); !errors.As(err, &ae) || ae.Status != 403 {
		t.Fatalf("tdemo token on tother's pool: want 403, got %v", err)
	}
	if err := c.Put(ctx, "/pools", map[string]any{"poolid": "tenant-tother", "comment": "x"}, nil); !errors.As(err, &ae) || ae.Status != 403 {
		t.Fatalf("tdemo token writing tother's pool: want 403, got %v", err)
	}
	if err := c.Put(ctx, "/access/acl", map[string]any{"path": "/pool/tenant-tother", "roles": "PVEVMAdmin", "tokens": "tenant-tdemo@pve!iac"}, nil); !errors.As(err, &ae) || ae.Status != 403 {
		t.Fatalf("tdemo token granting itself tother's pool: want 403, got %v", err)
	}

	// A foreign ACL added to the tenant's user is revoked (the module owns the principal).
	root := rootClient(t, srv)
	if err := root.Put(ctx, "/access/acl", map[string]any{"path": "/pool/tenant-tother", "roles": "PVEAuditor", "users": "tenant-tdemo@pve"}, nil); err != nil {
		t.Fatal(err)
	}
	res = run(t, srv, map[string]any{"name": "tdemo", "index": 1})
	if res["changed"] != true || !strings.Contains(strings.Join(toStrings(res["changes"]), "\n"), "revoke PVEAuditor on /pool/tenant-tother") {
		t.Fatalf("foreign grant not revoked: %v", res)
	}

	// Regenerate: a new secret, the old one stops working.
	res = run(t, srv, map[string]any{"name": "tdemo", "index": 1, "regenerate_token": true})
	newSecret, _ := res["token_secret"].(string)
	if res["failed"] == true || newSecret == "" || newSecret == secret {
		t.Fatalf("regenerate: %v", res)
	}
	if err := c.Get(ctx, "/pools/tenant-tdemo", nil, nil); !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("old token after regenerate: want 401, got %v", err)
	}
	if err := tenantClient(t, srv, "tenant-tdemo@pve", newSecret).Get(ctx, "/pools/tenant-tdemo", nil, nil); err != nil {
		t.Fatalf("new token: %v", err)
	}

	// Absent removes everything of tdemo and nothing of tother; a second absent is a no-op. The
	// custom role, shared with tother, stays, and the diff says so.
	res = run(t, srv, map[string]any{"name": "tdemo", "index": 1, "state": "absent", "_ansible_diff": true})
	if res["failed"] == true || res["changed"] != true {
		t.Fatalf("absent: %v", res)
	}
	if d, _ := json.Marshal(res["diff"]); !strings.Contains(string(d), `"after":{"acl":{"token":[],"user":[]},"roles":[{"id":"DeevnetTenantVM"`) {
		t.Fatalf("absent's diff does not keep the shared role: %s", d)
	}
	if err := root.Get(ctx, "/access/roles/DeevnetTenantVM", nil, nil); err != nil {
		t.Fatalf("the shared role was removed with tdemo: %v", err)
	}
	w2 := writes(srv)
	res = run(t, srv, map[string]any{"name": "tdemo", "index": 1, "state": "absent"})
	if res["failed"] == true || res["changed"] != false || writes(srv) != w2 {
		t.Fatalf("second absent: %v (writes %d)", res, writes(srv)-w2)
	}
	if err := root.Get(ctx, "/access/users/tenant-tdemo@pve", nil, nil); err == nil {
		t.Fatalf("user tenant-tdemo@pve still exists")
	}
	if err := root.Get(ctx, "/pools/tenant-tother", nil, nil); err != nil {
		t.Fatalf("tother's pool was touched: %v", err)
	}
	var acl []map[string]any
	if err := root.Get(ctx, "/access/acl", nil, &acl); err != nil {
		t.Fatal(err)
	}
	for _, e := range acl {
		if strings.Contains(e["ugid"].(string), "tenant-tdemo") {
			t.Fatalf("ACL of tdemo left: %v", e)
		}
	}
}

func rootClient(t *testing.T, srv *pvesim.Server) *pve.Client {
	t.Helper()
	_, secret := srv.RootToken()
	c, err := pve.New(pve.Config{Host: srv.Host(), Port: srv.Port(), User: "root@pam", TokenID: "sim",
		TokenSecret: secret, ValidateCerts: true, CAPath: srv.CAFile(), Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func TestRejectsReservedIndexAndBadName(t *testing.T) {
	srv := startSim(t)
	w0 := writes(srv)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"name": "example", "index": 0}, "index: 0 is reserved"},
		{map[string]any{"name": "tdemo", "index": 64}, "index: 64"},
		{map[string]any{"name": "Bad_Name", "index": 3}, "name"},
	} {
		res := run(t, srv, tc.args)
		if res["failed"] != true || !strings.Contains(res["msg"].(string), tc.want) {
			t.Errorf("%v: want failure mentioning %q, got %v", tc.args, tc.want, res)
		}
	}
	if writes(srv) != w0 {
		t.Fatalf("a rejected declaration sent writes")
	}
}

func TestPlanAbsentRefusesPoolWithMembers(t *testing.T) {
	d := Desired{Pool: "tenant-tdemo", User: "tenant-tdemo@pve", TokenID: "iac"}
	_, err := PlanAbsent(d, Observed{PoolExists: true, PoolMembers: []string{"qemu/10101"}})
	if err == nil || !strings.Contains(err.Error(), "pool tenant-tdemo still has members (qemu/10101)") {
		t.Fatalf("want a refusal naming the pool and member, got %v", err)
	}
}

func TestPlanPresentOrderAndGrants(t *testing.T) {
	d := Desired{Pool: "tenant-a", PoolComment: "c", User: "tenant-a@pve", UserComment: "c", TokenID: "iac", Privsep: true,
		Grants: []Grant{{Path: "/pool/tenant-a", Role: "PVEVMAdmin", Propagate: true}}}
	ops := PlanPresent(d, Observed{UserACL: map[string]Grant{}, TokenACL: map[string]Grant{}}, false)
	var got []string
	for _, op := range ops {
		got = append(got, op.Describe)
	}
	want := []string{
		"create pool tenant-a", "create user tenant-a@pve", "create token tenant-a@pve!iac",
		"grant PVEVMAdmin on /pool/tenant-a to tenant-a@pve (propagate=1)",
		"grant PVEVMAdmin on /pool/tenant-a to tenant-a@pve!iac (propagate=1)",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("ops:\n got %q\nwant %q", got, want)
	}
	// A wrong propagate flag is re-granted; an equal one is left alone.
	o := Observed{PoolExists: true, PoolComment: "c", UserExists: true, UserComment: "c", TokenExists: true, TokenPrivsep: true,
		UserACL:  map[string]Grant{d.Grants[0].key(): {Path: "/pool/tenant-a", Role: "PVEVMAdmin", Propagate: false}},
		TokenACL: map[string]Grant{d.Grants[0].key(): d.Grants[0]}}
	ops = PlanPresent(d, o, false)
	if len(ops) != 1 || !strings.HasPrefix(ops[0].Describe, "grant PVEVMAdmin on /pool/tenant-a to tenant-a@pve ") {
		t.Fatalf("want one re-grant for the user, got %+v", ops)
	}
}

func FuzzFlexBool(f *testing.F) {
	for _, s := range []string{`1`, `0`, `true`, `false`, `"1"`, `null`, `2`, `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b flexBool
		if err := b.UnmarshalJSON([]byte(s)); err == nil {
			switch strings.Trim(s, `"`) {
			case "1", "true":
				if !b {
					t.Fatalf("%s read as false", s)
				}
			default:
				if b {
					t.Fatalf("%s read as true", s)
				}
			}
		}
	})
}
