package access

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
	"github.com/deevnet/tenant/internal/sdn"
)

// runInfo executes tenant_index_info with the root token and reports the writes it sent.
func runInfo(t *testing.T, srv *pvesim.Server, check bool) map[string]any {
	t.Helper()
	_, secret := srv.RootToken()
	srv.ResetStats()
	res, _ := moduletest.Execute(t, InfoModule(), map[string]any{
		"api_host": srv.Host(), "api_port": srv.Port(), "api_user": "root@pam",
		"api_token_id": "sim", "api_token_secret": secret, "ca_path": srv.CAFile(), "_ansible_check_mode": check,
	})
	if w := srv.Stats().Writes; w != 0 {
		t.Fatalf("tenant_index_info sent %d write(s)", w)
	}
	return res
}

// Every kind of object that holds an index is read: the pool and user comments, the marks on a
// staged (unapplied) VRF's VNets, and a guest of a tenant's pool in an index's vmid range.
func TestIndexInfoReadsEveryClaim(t *testing.T) {
	cfg := pvesim.DefaultConfig()
	// tvm has no access objects and no VRF: only its guest in index 5's range says it holds 5.
	cfg.Templates = append(cfg.Templates, pvesim.TemplateConfig{VMID: 10501, Node: "dv02hyp002p02", Name: "tvm-1",
		Pool: "tenant-tvm", Config: map[string]string{"memory": "512"}})
	srv, c := pvesimtest.Start(t, cfg)
	for _, args := range []map[string]any{{"name": "tdemo", "index": 1}, {"name": "tother", "index": 3}} {
		if res := run(t, srv, args); res["failed"] == true {
			t.Fatalf("onboard %v: %v", args, res)
		}
	}
	runOther(t, srv, sdn.FabricModule(), map[string]any{
		"nodes": []any{map[string]any{"name": "dv02hyp002p02", "interfaces": []any{"vmbr0.51"}}}, "apply": true})
	// tstaged: a VRF staged, never applied, no access objects.
	runOther(t, srv, sdn.VRFModule(), map[string]any{"name": "tstaged", "index": 2})

	for _, check := range []bool{false, true} {
		res := runInfo(t, srv, check)
		if res["failed"] == true || res["changed"] == true {
			t.Fatalf("check=%v: %v", check, res)
		}
		want := map[string]any{"tdemo": 1, "tstaged": 2, "tother": 3, "tvm": 5}
		if fmt.Sprint(res["tenants"]) != fmt.Sprint(want) {
			t.Fatalf("check=%v: tenants %v, want %v", check, res["tenants"], want)
		}
	}
	// The objects behind the answer, in index order.
	claims, err := ReadClaims(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var objs []string
	for _, cl := range claims {
		objs = append(objs, cl.Object)
	}
	want := []string{"pool tenant-tdemo", "user tenant-tdemo@pve", "vnet tn02v0 of zone tn02", "pool tenant-tother",
		"user tenant-tother@pve", "vm 10501 (tvm-1)"}
	if !reflect.DeepEqual(objs, want) {
		t.Fatalf("claims %v, want %v", objs, want)
	}
}

// Objects that disagree are refused, naming both: one tenant with two indexes, one index with
// two tenants. Nothing built on them would be more than a guess.
func TestIndexInfoRefusesDisagreement(t *testing.T) {
	cases := []struct {
		name string
		pool map[string]any // a pool made after tdemo's onboarding, nil for none
		vm   *pvesim.TemplateConfig
		want []string
	}{
		{"tdemo's guest in index 4's range", nil, &pvesim.TemplateConfig{VMID: 10401, Node: "dv02hyp002p02", Name: "tdemo-9",
			Pool: "tenant-tdemo", Config: map[string]string{"memory": "512"}},
			[]string{"tenant tdemo", "pool tenant-tdemo says index 1", "vm 10401 (tdemo-9) says index 4"}},
		{"tx's pool says index 1", map[string]any{"poolid": "tenant-tx", "comment": "deevnet.tenant tx (index 1)"}, nil,
			[]string{"index 1", "pool tenant-tdemo says tenant tdemo", "pool tenant-tx says tenant tx"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := pvesim.DefaultConfig()
			if tc.vm != nil {
				cfg.Templates = append(cfg.Templates, *tc.vm)
			}
			srv, c := pvesimtest.Start(t, cfg)
			if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1}); res["failed"] == true {
				t.Fatalf("onboard tdemo: %v", res)
			}
			if tc.pool != nil {
				if err := c.Post(context.Background(), "/pools", tc.pool, nil); err != nil {
					t.Fatal(err)
				}
			}
			res := runInfo(t, srv, false)
			msg, _ := res["msg"].(string)
			if res["failed"] != true {
				t.Fatalf("accepted: %v", res)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("msg %q does not name %q", msg, w)
				}
			}
		})
	}
}
