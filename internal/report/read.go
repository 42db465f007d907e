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

// reader sends the GETs of one Read.
type reader struct {
	ctx context.Context
	c   *pve.Client
}

func (r reader) get(path string, q url.Values, out any) error {
	if err := r.c.Get(r.ctx, path, q, out); err != nil {
		return fmt.Errorf("reading back %s: %w", path, err)
	}
	return nil
}

// list reads the rows at path and converts each.
func list[T any](r reader, path string, q url.Values, conv func(row) T) ([]T, error) {
	var rows []row
	if err := r.get(path, q, &rows); err != nil {
		return nil, err
	}
	var out []T
	for _, x := range rows {
		out = append(out, conv(x))
	}
	return out, nil
}

// Read reads the substrate's running SDN configuration and its guests. It sends only GETs.
func Read(ctx context.Context, c *pve.Client) (Substrate, error) {
	var s Substrate
	r := reader{ctx: ctx, c: c}
	var err error
	if s.Nodes, err = list(r, "/nodes", nil, func(x row) Node {
		return Node{Name: str(x["node"]), Status: str(x["status"])}
	}); err != nil {
		return s, err
	}
	if s.Fabrics, err = list(r, "/cluster/sdn/fabrics/fabric", nil, func(x row) Fabric {
		return Fabric{ID: str(x["id"]), Protocol: str(x["protocol"]), Prefix: str(x["ip_prefix"])}
	}); err != nil {
		return s, err
	}
	if s.FabricNodes, err = list(r, "/cluster/sdn/fabrics/node", nil, func(x row) FabricNode {
		return FabricNode{Fabric: str(x["fabric_id"]), Node: str(x["node_id"]), IP: str(x["ip"])}
	}); err != nil {
		return s, err
	}
	if s.Controllers, err = list(r, "/cluster/sdn/controllers", nil, func(x row) Controller {
		return Controller{ID: str(x["controller"]), Type: str(x["type"]), ASN: str(x["asn"])}
	}); err != nil {
		return s, err
	}
	if s.Zones, err = list(r, "/cluster/sdn/zones", nil, func(x row) Zone {
		return Zone{ID: str(x["zone"]), Type: str(x["type"]), Controller: str(x["controller"]), VRFVXLAN: str(x["vrf-vxlan"])}
	}); err != nil {
		return s, err
	}
	if s.VNets, err = readVNets(r); err != nil {
		return s, err
	}
	if s.VMs, err = readVMs(r); err != nil {
		return s, err
	}
	return s, nil
}

// readVNets reads the VNets, each with its subnets.
func readVNets(r reader) ([]VNet, error) {
	vnets, err := list(r, "/cluster/sdn/vnets", nil, func(x row) VNet {
		return VNet{ID: str(x["vnet"]), Zone: str(x["zone"]), Tag: str(x["tag"]), Alias: str(x["alias"])}
	})
	if err != nil {
		return nil, err
	}
	for i, v := range vnets {
		if vnets[i].Subnets, err = list(r, "/cluster/sdn/vnets/"+url.PathEscape(v.ID)+"/subnets", nil, func(x row) Subnet {
			return Subnet{ID: str(x["subnet"]), CIDR: str(x["cidr"]), Gateway: str(x["gateway"])}
		}); err != nil {
			return nil, err
		}
	}
	return vnets, nil
}

// readVMs reads the QEMU guests by VMID, each but a template with its address and bridge.
func readVMs(r reader) ([]VM, error) {
	var rows []row
	if err := r.get("/cluster/resources", url.Values{"type": {"vm"}}, &rows); err != nil {
		return nil, err
	}
	var vms []VM
	for _, x := range rows {
		if str(x["type"]) != "qemu" {
			continue
		}
		vm := VM{VMID: atoi(x["vmid"]), Name: str(x["name"]), Node: str(x["node"]), Status: str(x["status"]),
			Pool: str(x["pool"]), Template: str(x["template"]) == "1"}
		if !vm.Template {
			var cfg row
			if err := r.get(fmt.Sprintf("/nodes/%s/qemu/%d/config", url.PathEscape(vm.Node), vm.VMID), nil, &cfg); err != nil {
				return nil, err
			}
			vm.IPConfig = str(cfg["ipconfig0"])
			vm.Bridge = netField(str(cfg["net0"]), "bridge")
		}
		vms = append(vms, vm)
	}
	sort.Slice(vms, func(i, j int) bool { return vms[i].VMID < vms[j].VMID })
	return vms, nil
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
