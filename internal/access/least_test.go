package access

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
	"github.com/deevnet/tenant/internal/sdn"
	"github.com/deevnet/tenant/internal/vm"
)

// leastEnv is a cluster with tdemo onboarded by the module and its VRF applied by the substrate:
// what the tenant's repository finds when it runs its own automation.
type leastEnv struct {
	t      *testing.T
	srv    *pvesim.Server
	secret string // tdemo's token secret, as onboarding returned it for the attachment
}

// It has two fabric members, the template on shared storage (as the lab's) on the first, and the
// tenant's own storage on both, as onboarding registers it: the automation's VM lives on the
// second node, so its clone is made on the first and migrated (tenant_vm's applier.clone).
func newLeastEnv(t *testing.T) *leastEnv {
	t.Helper()
	srv, _ := pvesimtest.Start(t, twoNodeConfig())
	size, used := int64(64<<30), int64(0)
	for _, n := range []string{node, leastNode} {
		if err := srv.SetDisks(n, pvesim.DiskRequest{VG: "pve", ThinPool: "tenant-tdemo", Size: &size, Used: &used}); err != nil {
			t.Fatal(err)
		}
	}
	runOther(t, srv, sdn.FabricModule(), map[string]any{
		"nodes": []any{map[string]any{"name": node, "interfaces": []any{"vmbr0.51"}}, map[string]any{"name": leastNode, "interfaces": []any{"vmbr0.51"}}}, "apply": true})
	runOther(t, srv, sdn.VRFModule(), map[string]any{"name": "tdemo", "index": 1, "apply": true})
	res := run(t, srv, leastOnboarding)
	secret, _ := res["token_secret"].(string)
	if res["failed"] == true || secret == "" {
		t.Fatalf("onboard: %v", res["msg"])
	}
	return &leastEnv{t: t, srv: srv, secret: secret}
}

// leastNode is the second fabric member, where the automation's VM lives.
const leastNode = "dv02hyp002p03" // twoNodeConfig's second node

// leastOnboarding is onboarding's arguments (playbooks/tasks/onboard.yml): no shared storage, the
// tenant's own on both members.
var leastOnboarding = map[string]any{"name": "tdemo", "index": 1, "storages": []any{},
	"tenant_storage": map[string]any{"nodes": []any{node, leastNode}}}

// onOwnStorage is where the tenant role puts a VM: a full clone onto its own storage.
var onOwnStorage = map[string]any{"node": leastNode, "full": true, "storage": "tenant-tdemo"}

// automationSteps is the tenant's own automation, tenant_vm with its token from the attachment:
// create a VM (clone, disk, cloud-init, net0 on its VNet, start), change it, stop it, destroy it.
var automationSteps = []struct {
	name string
	args map[string]any
}{
	{"create", map[string]any{"count": 1, "cores": 2, "memory": 1024, "disk": "8G", "ciuser": "debian",
		"sshkeys": []any{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuBgRI8GCpQ1Li2FMavVoVf+RzPLi477unNJvv4IwTL ops@deevnet"}}},
	{"change", map[string]any{"count": 1, "cores": 4, "memory": 2048, "disk": "8G", "ciuser": "debian"}},
	{"stop", map[string]any{"count": 1, "cores": 4, "memory": 2048, "disk": "8G", "ciuser": "debian", "state": "stopped"}},
	{"destroy", map[string]any{"count": 1, "state": "absent"}},
}

// automation runs the steps with the tenant's token; it returns the step that failed and its
// message ("", "" when all passed).
func (e *leastEnv) automation() (step, msg string) {
	e.t.Helper()
	for _, s := range automationSteps {
		all := map[string]any{"api_host": e.srv.Host(), "api_port": e.srv.Port(), "api_user": "tenant-tdemo@pve",
			"api_token_id": "iac", "api_token_secret": e.secret, "ca_path": e.srv.CAFile(),
			"name": "tdemo", "index": 1, "template": 9000}
		for k, v := range s.args {
			all[k] = v
		}
		for k, v := range onOwnStorage {
			all[k] = v
		}
		if res, code := moduletest.Execute(e.t, vm.Module(), all); code != 0 {
			return s.name, fmt.Sprint(res["msg"])
		}
	}
	return "", ""
}

// restore removes what a failed run left (with the substrate's token) and runs onboarding again,
// which must put back what the test took away.
func (e *leastEnv) restore() {
	e.t.Helper()
	for _, n := range []string{node, leastNode} { // a clone whose migration was refused stays on the first
		runOther(e.t, e.srv, vm.Module(), map[string]any{"name": "tdemo", "index": 1, "count": 1, "state": "absent", "node": n})
	}
	if res := run(e.t, e.srv, leastOnboarding); res["failed"] == true || res["changed"] != true {
		e.t.Fatalf("onboarding did not restore what was removed: %v", res["msg"])
	}
	if step, msg := e.automation(); step != "" {
		e.t.Fatalf("after onboarding restored it, step %s failed: %s", step, msg)
	}
}

// refusal matches a Refusal text, whose {placeholders} stand for any one path part.
func refusal(text string) *regexp.Regexp {
	q := regexp.QuoteMeta(text)
	q = regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(q, `[^ ,/)]+`)
	return regexp.MustCompile(q)
}

// Every grant onboarding writes is needed: removed in turn (from the user and the token, as
// pvesim holds them), the tenant's own automation fails at the call the grant is for, with the
// 403 naming its path and privilege; onboarding then restores it.
func TestEachGrantIsNeeded(t *testing.T) {
	e := newLeastEnv(t)
	if step, msg := e.automation(); step != "" {
		t.Fatalf("with every grant, step %s failed: %s", step, msg)
	}
	tpl := 9000
	tn, err := plan.DefaultSite().Tenant("tdemo", 1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Grant{}
	for _, g := range append(desired(tn, 1, tpl, nil, nil, true).Grants, storageGrant(tn, tpl)) {
		want[g.key()] = g
	}
	var held []aclEntry
	for _, a := range acl(t, e.srv) {
		if a.UGID == "tenant-tdemo@pve!iac" {
			held = append(held, a)
		}
	}
	if len(held) != len(want) {
		t.Fatalf("onboarding wrote %d grants to the token, the table has %d: %v", len(held), len(want), held)
	}
	for _, h := range held {
		g, ok := want[Grant{Path: h.Path, Role: h.Role}.key()]
		if !ok {
			t.Fatalf("grant %s %s is not in the table", h.Path, h.Role)
		}
		root := rootClient(t, e.srv)
		for _, who := range []string{"users", "tokens"} {
			id := map[string]string{"users": "tenant-tdemo@pve", "tokens": "tenant-tdemo@pve!iac"}[who]
			if err := root.Put(context.Background(), "/access/acl", map[string]any{"path": h.Path, "roles": h.Role, who: id, "delete": 1}, nil); err != nil {
				t.Fatal(err)
			}
		}
		step, msg := e.automation()
		if step == "" || !refusal(g.Refusal).MatchString(msg) {
			t.Errorf("without %s on %s: want %q to fail with %q, got step %q: %s", h.Role, h.Path, g.NeededBy, g.Refusal, step, msg)
		} else {
			t.Logf("without %s on %s: step %s fails: %s", h.Role, h.Path, step, firstLine(msg))
		}
		e.restore()
	}
}

// Every privilege of the custom role is needed: removed in turn from the role, the automation
// fails with a 403 naming exactly that privilege; onboarding sets the role back.
func TestEachPrivilegeOfTheTenantRoleIsNeeded(t *testing.T) {
	e := newLeastEnv(t)
	root := rootClient(t, e.srv)
	for _, p := range TenantPrivs {
		var rest []string
		for _, q := range TenantPrivs {
			if q.Name != p.Name {
				rest = append(rest, q.Name)
			}
		}
		if err := root.Put(context.Background(), "/access/roles/"+TenantRole, map[string]any{"privs": strings.Join(rest, ",")}, nil); err != nil {
			t.Fatal(err)
		}
		step, msg := e.automation()
		if step == "" || !refusal(p.Refusal).MatchString(msg) {
			t.Errorf("without %s: want %q to fail with %q, got step %q: %s", p.Name, p.NeededBy, p.Refusal, step, msg)
		} else {
			t.Logf("without %s: step %s fails: %s", p.Name, step, firstLine(msg))
		}
		e.restore()
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
