package sdnrender

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

// fixture is a testdata case: the node's facts, and the SDN objects as PVE's API lists them
// (sections at the top level, PVE's property names) at version; pending, when given, is the
// staged config whose subnets exit nodes read.
type fixture struct {
	Node    Node                                 `yaml:"node"`
	Version int                                  `yaml:"version"`
	Objects map[string]map[string]map[string]any `yaml:",inline"`
	Pending map[string]map[string]map[string]any `yaml:"pending"`
}

// loadFixture reads the case input.yaml and converts its objects as pvesim does at apply.
func loadFixture(t *testing.T, path string) (*Config, Node) {
	t.Helper()
	var fx fixture
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &fx); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return FromObjects(fx.Objects, fx.Pending, fx.Version), fx.Node
}

// TestGold renders each testdata case and compares byte for byte with the
// expected files (facts from pve-network src/test/zones/evpn and
// proxmox-ve-rs fabric snapshots; see testdata/README.md).
func TestGold(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, in := range dirs {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := Render(loadFixture(t, in))
			for name, text := range map[string]string{"interfaces": got.Interfaces, "frr.conf": got.FRR, "daemons": got.Daemons()} {
				want, err := os.ReadFile(filepath.Join(dir, name))
				if os.IsNotExist(err) && name == "daemons" {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if text != string(want) {
					t.Errorf("%s differs:\n%s", name, lineDiff(string(want), text))
				}
			}
		})
	}
}

// A node outside the controller's fabric gets no EVPN config; PVE only warns.
func TestNotInFabricWarns(t *testing.T) {
	w := Render(loadFixture(t, "testdata/own_not_in_fabric/input.yaml")).Warnings
	if len(w) != 2 || w[0] != "zone evpn : vnet vnet0 : could not configure EVPN controller ctrl: node 'stranger' does not exist in fabric 'test'" {
		t.Fatalf("warnings %q", w)
	}
}
