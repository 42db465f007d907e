package modules

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// The requests a play over many tenants sends (issue #29): tenant_vrf and tenant_vm each once
// with tenants, as tests/bench/tenant_bench.py's scale case runs them. A no-op must read no more
// than it must: per tenant its subnets and each VM's pending config (1 + 3 with three VMs), plus
// the lists every tenant shares, each read once (zones, VNets, nodes, resources). The minimum is
// 4N+4; the target is at most 1.2 times that for 63 tenants (the apply's check of each node's
// zones and the second module's /nodes are the constant above it), and the exact count keeps it
// from creeping up.
func TestManyTenantsNoOpRequests(t *testing.T) {
	for _, n := range []int{1, 10, 63} {
		t.Run(fmt.Sprintf("%d tenants", n), func(t *testing.T) {
			if n > 10 && testing.Short() {
				t.Skip("-short: the 63-tenant case clones 189 VMs in the simulator")
			}
			srv, root := pvesimtest.Start(t, pvesim.DefaultConfig())
			id, secret := srv.RootToken()
			conn := map[string]any{"api_host": srv.Host(), "api_port": srv.Port(), "api_user": "root@pam",
				"api_token_id": strings.SplitN(id, "!", 2)[1], "api_token_secret": secret, "ca_path": srv.CAFile()}
			call := func(mod string, args map[string]any) map[string]any {
				t.Helper()
				e, ok := Lookup(mod)
				if !ok {
					t.Fatalf("no module %s", mod)
				}
				all := map[string]any{}
				for _, m := range []map[string]any{conn, args} {
					for k, v := range m {
						all[k] = v
					}
				}
				res, code := moduletest.Execute(t, e, all)
				if code != 0 {
					t.Fatalf("%s: %v", mod, res["msg"])
				}
				return res
			}
			call("pve_sdn_fabric", map[string]any{"nodes": []any{map[string]any{"name": "dv02hyp002p02", "interfaces": []any{"vmbr0.51"}}}, "apply": true})
			var tenants []any
			for i := 1; i <= n; i++ {
				name := fmt.Sprintf("t%02d", i)
				if err := root.Post(context.Background(), "/pools", map[string]any{"poolid": "tenant-" + name}, nil); err != nil {
					t.Fatal(err)
				}
				tenants = append(tenants, map[string]any{"name": name, "index": i})
			}
			vms := func() []any {
				out := make([]any, n)
				for i, tn := range tenants {
					out[i] = map[string]any{"name": tn.(map[string]any)["name"], "index": tn.(map[string]any)["index"], "count": 3}
				}
				return out
			}()
			play := func() (changed bool) {
				a := call("tenant_vrf", map[string]any{"tenants": tenants, "apply": true})
				b := call("tenant_vm", map[string]any{"tenants": vms, "template": "9000", "cores": 2, "memory": 1024})
				return a["changed"] == true || b["changed"] == true
			}
			if !play() {
				t.Fatal("first run changed nothing")
			}
			srv.ResetStats()
			if play() {
				t.Fatal("second run changed something")
			}
			s := srv.Stats()
			total := 0
			for _, c := range s.Requests {
				total += c
			}
			// tenant_vrf: /nodes, zones, VNets, each tenant's subnets, the node's zones (apply=true: a
			// node whose reload failed is applied again); tenant_vm: /nodes, resources, each VM's
			// pending config
			if want := 4*n + 6; total != want || s.Writes != 0 {
				t.Errorf("no-op: %d requests (want %d = 4N+6), %d writes: %v", total, want, s.Writes, s.Requests)
			}
			if limit := 1.2 * float64(4*n+4); n >= 10 && float64(total) > limit {
				t.Errorf("no-op: %d requests, more than 1.2 x the minimum 4N+4 (%.0f)", total, limit)
			}
		})
	}
}
