package sdn

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
	"gopkg.in/yaml.v3"
)

// demoFabric returns the fabric members the demo converges: the tenant_fabric
// role's default members where the role still has them, else the hypervisors
// of the shipped substrate inventory (examples/substrate), each on
// <bridge>.<underlay_vlan> with its loopback's number, as playbooks/fabric.yml
// derives them.
func demoFabric(t *testing.T) (string, []map[string]any) {
	t.Helper()
	var defaults struct {
		Protocol string           `yaml:"tenant_fabric_protocol"`
		Nodes    []map[string]any `yaml:"tenant_fabric_nodes"`
	}
	readYAML(t, "roles/tenant_fabric/defaults/main.yml", &defaults)
	if len(defaults.Nodes) > 0 {
		return defaults.Protocol, defaults.Nodes
	}
	const inv = "examples/substrate/inventory/"
	var hosts struct {
		All struct {
			Children struct {
				Hypervisors struct {
					Hosts yaml.Node `yaml:"hosts"`
				} `yaml:"hypervisors"`
			} `yaml:"children"`
		} `yaml:"all"`
	}
	readYAML(t, inv+"hosts.yml", &hosts)
	var site struct {
		Site struct {
			Bridge       string `yaml:"bridge"`
			UnderlayVLAN int    `yaml:"underlay_vlan"`
			Loopbacks    string `yaml:"loopbacks"`
		} `yaml:"substrate_site"`
	}
	readYAML(t, inv+"group_vars/all/site.yml", &site)
	base, err := netip.ParsePrefix(site.Site.Loopbacks)
	if err != nil {
		t.Fatalf("substrate_site.loopbacks: %v", err)
	}
	var members []map[string]any
	h := hosts.All.Children.Hypervisors.Hosts
	for i := 0; i+1 < len(h.Content); i += 2 { // mapping keys, in inventory order
		name := h.Content[i].Value
		var hv struct {
			Node struct {
				Loopback string `yaml:"loopback"`
			} `yaml:"substrate_node"`
		}
		readYAML(t, inv+"host_vars/"+name+".yml", &hv)
		lo, err := netip.ParseAddr(hv.Node.Loopback)
		if err != nil {
			t.Fatalf("%s: substrate_node.loopback: %v", name, err)
		}
		b, l := base.Addr().As4(), lo.As4()
		members = append(members, map[string]any{"name": name, "number": int(l[3]) - int(b[3]),
			"interfaces": []any{fmt.Sprintf("%s.%d", site.Site.Bridge, site.Site.UnderlayVLAN)}})
	}
	if len(members) == 0 {
		t.Fatal("no fabric members: neither tenant_fabric's defaults nor the substrate inventory's hypervisors")
	}
	return defaults.Protocol, members
}

// readYAML reads a shipped YAML file of the collection (roles, scenario files).
func readYAML(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// TestRenderDemoState converges what `make demo` and the isolation scenario
// converge - the tenant_fabric role's default members, tdemo (index 1) and
// tother (index 2) from the scenario files - through the modules against
// pvesim with a render dir, and checks every node rendered and reloaded.
// With DVT_RENDER_OUT set the files land there, for tests/render/check.sh
// to check with the real ifupdown2 and FRR.
func TestRenderDemoState(t *testing.T) {
	protocol, members := demoFabric(t)
	type tenantFile struct {
		Tenant struct {
			Name  string `yaml:"name"`
			Index int    `yaml:"index"`
			VNets int    `yaml:"vnets"`
		} `yaml:"tenant"`
	}
	var tenants []tenantFile
	for _, f := range []string{"tdemo.yml", "tother.yml"} {
		var tf tenantFile
		readYAML(t, "extensions/molecule/shared/"+f, &tf)
		tenants = append(tenants, tf)
	}
	out := os.Getenv("DVT_RENDER_OUT")
	if out == "" {
		out = t.TempDir()
	}
	cfg := pvesim.DefaultConfig()
	cfg.Nodes = nil
	for _, m := range members {
		cfg.Nodes = append(cfg.Nodes, pvesim.NodeConfig{Name: m["name"].(string), MaxCPU: 16, MaxMem: 1 << 36})
	}
	cfg.RenderDir = out
	srv, _ := pvesimtest.Start(t, cfg)
	e := &env{t: t, srv: srv}

	nodes := make([]any, 0, len(members))
	for _, n := range members {
		nodes = append(nodes, n)
	}
	must(t, e.fabric(map[string]any{"protocol": protocol, "nodes": nodes, "apply": true}, false), true)
	for _, tf := range tenants {
		// the site's nodes are the fabric's members (the substrate role derives them from the
		// hypervisors group the same way)
		names := make([]any, 0, len(members))
		for _, m := range members {
			names = append(names, m["name"])
		}
		args := map[string]any{"name": tf.Tenant.Name, "index": tf.Tenant.Index, "apply": true, "site": map[string]any{"nodes": names}}
		if tf.Tenant.VNets > 0 {
			args["vnet_count"] = tf.Tenant.VNets
		}
		must(t, e.vrf(args, false), true)
	}
	for _, n := range cfg.Nodes {
		for _, z := range []string{"tn01", "tn02"} {
			if st := zoneStatusOn(t, e, n.Name, z); st != "available" {
				t.Errorf("%s: zone %s status %q, want available", n.Name, z, st)
			}
		}
		sdn, err := os.ReadFile(filepath.Join(out, n.Name, "etc/network/interfaces.d/sdn"))
		if err != nil {
			t.Fatal(err)
		}
		frr, err := os.ReadFile(filepath.Join(out, n.Name, "etc/frr/frr.conf"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"\nauto vrf_tn01\n", "\nauto vrf_tn02\n", "\nauto tn01v0\n", "\nauto tn02v0\n", "\nauto dummy_"} {
			if !strings.Contains(string(sdn), want) {
				t.Errorf("%s: interfaces.d/sdn lacks %q:\n%s", n.Name, want, sdn)
			}
		}
		for _, want := range []string{"\nrouter bgp ", " vrf vrf_tn01\n", " vrf vrf_tn02\n", "\nrouter openfabric "} {
			if !strings.Contains(string(frr), want) {
				t.Errorf("%s: frr.conf lacks %q:\n%s", n.Name, want, frr)
			}
		}
	}
}
