package access

import (
	"context"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// parkingSim is DefaultConfig's node plus a second one, both with vmbr9, a bridge without port
// or address (what a parking bridge would be), and on the second node vmbr8 with a port.
func parkingSim(t *testing.T, templateNIC string) *pvesim.Server {
	t.Helper()
	cfg := pvesim.DefaultConfig()
	park := pvesim.IfaceConfig{Iface: "vmbr9", Type: "bridge"}
	cfg.Nodes[0].Network = append(cfg.Nodes[0].Network, park)
	cfg.Nodes = append(cfg.Nodes, pvesim.NodeConfig{Name: "dv02hyp002p03", MaxCPU: 16, MaxMem: 68719476736, Network: []pvesim.IfaceConfig{
		{Iface: "enp1s0", Type: "eth"}, {Iface: "vmbr0", Type: "bridge", BridgePorts: "enp1s0", CIDR: "10.20.10.3/24"},
		park, {Iface: "vmbr8", Type: "bridge", BridgePorts: "enp2s0"}}})
	if templateNIC != "" {
		cfg.Templates[0].Config["net0"] = templateNIC
	}
	srv, _ := pvesimtest.Start(t, cfg)
	return srv
}

// SDN.Use is granted on a node bridge only when it connects nothing on every node, read from
// GET /nodes/{node}/network; the refusal names the bridge, the node and what it connects.
func TestBridgeGrantOnlyOnABridgeThatConnectsNothing(t *testing.T) {
	srv := parkingSim(t, "")
	refused(t, srv, map[string]any{"name": "tdemo", "index": 1, "bridges": []any{"vmbr0"}},
		"bridges[0]: bridge vmbr0 on node dv02hyp002p02 has port(s) enp1s0, has address 10.20.10.2/24: refusing SDN.Use on a site network")
	refused(t, srv, map[string]any{"name": "tdemo", "index": 1, "bridges": []any{"vmbr9", "vmbr0.50"}},
		"bridges[1]: vmbr0.50 is a VLAN of vmbr0, a site network")
	refused(t, srv, map[string]any{"name": "tdemo", "index": 1, "bridges": []any{"vmbr8"}},
		"bridges[0]: bridge vmbr8 does not exist on node dv02hyp002p02")
	refused(t, srv, map[string]any{"name": "tdemo", "index": 1, "bridges": []any{"enp1s0"}},
		"bridges[0]: bridge enp1s0 on node dv02hyp002p02 is of type eth, not a bridge")
	refused(t, srv, map[string]any{"name": "tdemo", "index": 1, "bridges": []any{"vmbr0"}, "_ansible_check_mode": true}, "bridge vmbr0")

	res := run(t, srv, map[string]any{"name": "tdemo", "index": 1, "bridges": []any{"vmbr9"}})
	if res["failed"] == true {
		t.Fatalf("a bridge without ports or address on every node: %v", res)
	}
	if !hasGrant(t, srv, "/sdn/zones/localnetwork/vmbr9", "PVESDNUser") {
		t.Fatal("the parking bridge's grant is missing")
	}
}

// Onboarding refuses a template whose NIC a clone could only copy with SDN.Use on a site
// network, naming the template, the NIC and the bridge.
func TestTemplateNICOnASiteNetworkRefused(t *testing.T) {
	srv := parkingSim(t, "virtio=BC:24:11:00:90:00,bridge=vmbr0")
	refused(t, srv, map[string]any{"name": "tdemo", "index": 1},
		`template: 9000 ("debian-12-genericcloud") has net0 on bridge vmbr0, not one of bridges []; cloning it needs SDN.Use there`)

	srv = parkingSim(t, "virtio=BC:24:11:00:90:00,bridge=vmbr9,tag=50")
	refused(t, srv, map[string]any{"name": "tdemo", "index": 1, "bridges": []any{"vmbr9"}},
		`template: 9000 ("debian-12-genericcloud") has net0 on bridge vmbr9 with VLAN tag "50"`)

	srv = parkingSim(t, "virtio=BC:24:11:00:90:00,bridge=vmbr9")
	if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1, "bridges": []any{"vmbr9"}}); res["failed"] == true {
		t.Fatalf("template NIC on a parking bridge listed in bridges: %v", res)
	}
}

// hasGrant reports whether the tenant tdemo's user and token both hold role on path.
func hasGrant(t *testing.T, srv *pvesim.Server, path, role string) bool {
	t.Helper()
	n := 0
	for _, e := range acl(t, srv) {
		if e.Path == path && e.Role == role && (e.UGID == "tenant-tdemo@pve" || e.UGID == "tenant-tdemo@pve!iac") {
			n++
		}
	}
	return n == 2
}

// aclEntry is one row of GET /access/acl.
type aclEntry struct {
	Path      string `json:"path"`
	Role      string `json:"roleid"`
	Type      string `json:"type"`
	UGID      string `json:"ugid"`
	Propagate int    `json:"propagate"`
}

// acl reads every ACL entry with the root token.
func acl(t *testing.T, srv *pvesim.Server) []aclEntry {
	t.Helper()
	var out []aclEntry
	if err := rootClient(t, srv).Get(context.Background(), "/access/acl", nil, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
