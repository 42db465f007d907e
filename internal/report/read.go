// Package report reads a substrate back (the PVE API, the DNS servers) and renders the operator's
// report: a Markdown file with a Mermaid picture of the topology and the tenant contract's checks.
// It only reads; what it shows is what the servers answered, so a missing VM or a failed check
// shows as such whatever the declaration says.
package report

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/deevnet/tenant/internal/jsonval"
	"github.com/deevnet/tenant/internal/pve"
)

// Node is a PVE cluster node.
type Node struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Fabric is a PVE 9 SDN fabric.
type Fabric struct {
	ID       string `json:"id"`
	Protocol string `json:"protocol"`
	Prefix   string `json:"ip_prefix"`
}

// FabricNode is a node's membership of a fabric: its VTEP loopback.
type FabricNode struct {
	Fabric string `json:"fabric"`
	Node   string `json:"node"`
	IP     string `json:"ip"`
}

// Controller is an SDN controller (the EVPN one).
type Controller struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	ASN  string `json:"asn"`
}

// Zone is an SDN zone (a tenant's VRF for an EVPN zone), as applied.
type Zone struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Controller string `json:"controller"`
	VRFVXLAN   string `json:"vrf_vxlan"`
}

// Subnet is an SDN subnet of a VNet.
type Subnet struct {
	ID      string `json:"id"`
	CIDR    string `json:"cidr"`
	Gateway string `json:"gateway"`
}

// VNet is an SDN VNet with its subnets, as applied.
type VNet struct {
	ID      string   `json:"id"`
	Zone    string   `json:"zone"`
	Tag     string   `json:"tag"`
	Alias   string   `json:"alias"`
	Subnets []Subnet `json:"subnets"`
}

// VM is a guest as the cluster reports it, with what its configuration says about its network.
type VM struct {
	VMID     int    `json:"vmid"`
	Name     string `json:"name"`
	Node     string `json:"node"`
	Status   string `json:"status"`
	Pool     string `json:"pool"`
	Template bool   `json:"template"`
	IPConfig string `json:"ipconfig0"`
	Bridge   string `json:"bridge"`
}

// Substrate is everything read back from the PVE API.
type Substrate struct {
	Nodes       []Node       `json:"nodes"`
	Fabrics     []Fabric     `json:"fabrics"`
	FabricNodes []FabricNode `json:"fabric_nodes"`
	Controllers []Controller `json:"controllers"`
	Zones       []Zone       `json:"zones"`
	VNets       []VNet       `json:"vnets"`
	VMs         []VM         `json:"vms"`
}

type row = map[string]any

// Read reads the substrate's running SDN configuration and its guests. It sends only GETs.
func Read(ctx context.Context, c *pve.Client) (Substrate, error) {
	var s Substrate
	get := func(path string, q url.Values) ([]row, error) {
		var rows []row
		if err := c.Get(ctx, path, q, &rows); err != nil {
			return nil, fmt.Errorf("reading back %s: %w", path, err)
		}
		return rows, nil
	}
	rows, err := get("/nodes", nil)
	if err != nil {
		return s, err
	}
	for _, r := range rows {
		s.Nodes = append(s.Nodes, Node{Name: str(r["node"]), Status: str(r["status"])})
	}
	if rows, err = get("/cluster/sdn/fabrics/fabric", nil); err != nil {
		return s, err
	}
	for _, r := range rows {
		s.Fabrics = append(s.Fabrics, Fabric{ID: str(r["id"]), Protocol: str(r["protocol"]), Prefix: str(r["ip_prefix"])})
	}
	if rows, err = get("/cluster/sdn/fabrics/node", nil); err != nil {
		return s, err
	}
	for _, r := range rows {
		s.FabricNodes = append(s.FabricNodes, FabricNode{Fabric: str(r["fabric_id"]), Node: str(r["node_id"]), IP: str(r["ip"])})
	}
	if rows, err = get("/cluster/sdn/controllers", nil); err != nil {
		return s, err
	}
	for _, r := range rows {
		s.Controllers = append(s.Controllers, Controller{ID: str(r["controller"]), Type: str(r["type"]), ASN: str(r["asn"])})
	}
	if rows, err = get("/cluster/sdn/zones", nil); err != nil {
		return s, err
	}
	for _, r := range rows {
		s.Zones = append(s.Zones, Zone{ID: str(r["zone"]), Type: str(r["type"]), Controller: str(r["controller"]), VRFVXLAN: str(r["vrf-vxlan"])})
	}
	if rows, err = get("/cluster/sdn/vnets", nil); err != nil {
		return s, err
	}
	for _, r := range rows {
		v := VNet{ID: str(r["vnet"]), Zone: str(r["zone"]), Tag: str(r["tag"]), Alias: str(r["alias"])}
		subs, err := get("/cluster/sdn/vnets/"+url.PathEscape(v.ID)+"/subnets", nil)
		if err != nil {
			return s, err
		}
		for _, sr := range subs {
			v.Subnets = append(v.Subnets, Subnet{ID: str(sr["subnet"]), CIDR: str(sr["cidr"]), Gateway: str(sr["gateway"])})
		}
		s.VNets = append(s.VNets, v)
	}
	if rows, err = get("/cluster/resources", url.Values{"type": {"vm"}}); err != nil {
		return s, err
	}
	for _, r := range rows {
		if str(r["type"]) != "qemu" {
			continue
		}
		vm := VM{VMID: atoi(r["vmid"]), Name: str(r["name"]), Node: str(r["node"]), Status: str(r["status"]),
			Pool: str(r["pool"]), Template: str(r["template"]) == "1"}
		if !vm.Template {
			var cfg row
			path := fmt.Sprintf("/nodes/%s/qemu/%d/config", url.PathEscape(vm.Node), vm.VMID)
			if err := c.Get(ctx, path, nil, &cfg); err != nil {
				return s, fmt.Errorf("reading back %s: %w", path, err)
			}
			vm.IPConfig = str(cfg["ipconfig0"])
			vm.Bridge = netField(str(cfg["net0"]), "bridge")
		}
		s.VMs = append(s.VMs, vm)
	}
	sort.Slice(s.VMs, func(i, j int) bool { return s.VMs[i].VMID < s.VMs[j].VMID })
	return s, nil
}

// str and atoi read PVE's loosely typed JSON values (internal/jsonval).
func str(v any) string { return jsonval.String(v) }

func atoi(v any) int { return jsonval.Int(v) }

// netField returns key's value in a PVE property string such as "virtio=..,bridge=tn01v0,firewall=1".
func netField(prop, key string) string {
	for _, part := range strings.Split(prop, ",") {
		if k, v, ok := strings.Cut(part, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// ipField returns key's value in an ipconfig string such as "ip=10.20.129.10/24,gw=10.20.129.1".
func ipField(ipconfig, key string) string { return netField(ipconfig, key) }
