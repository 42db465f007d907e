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
	Quorum      *Quorum      `json:"quorum,omitempty"` // quorum.go
}

type row = map[string]any

// reader sends the GETs of one Read. The first failure ends the read: err keeps it, and each
// later call returns nothing without sending a request, so Read checks once, at the end.
type reader struct {
	ctx context.Context
	c   *pve.Client
	err error
}

// get reads path into out and reports whether it did.
func (r *reader) get(path string, q url.Values, out any) bool {
	if r.err != nil {
		return false
	}
	if err := r.c.Get(r.ctx, path, q, out); err != nil {
		r.err = fmt.Errorf("reading back %s: %w", path, err)
		return false
	}
	return true
}

// list reads the rows at path and converts each.
func list[T any](r *reader, path string, conv func(row) T) []T {
	var rows []row
	if !r.get(path, nil, &rows) {
		return nil
	}
	var out []T
	for _, x := range rows {
		out = append(out, conv(x))
	}
	return out
}

// Read reads the substrate's running SDN configuration and its guests. It sends only GETs.
func Read(ctx context.Context, c *pve.Client) (Substrate, error) {
	r := &reader{ctx: ctx, c: c}
	s := Substrate{
		Nodes:       list(r, "/nodes", asNode),
		Fabrics:     list(r, "/cluster/sdn/fabrics/fabric", asFabric),
		FabricNodes: list(r, "/cluster/sdn/fabrics/node", asFabricNode),
		Controllers: list(r, "/cluster/sdn/controllers", asController),
		Zones:       list(r, "/cluster/sdn/zones", asZone),
		VNets:       readVNets(r),
		VMs:         readVMs(r),
		Quorum:      readQuorum(r),
	}
	return s, r.err
}

// What Read keeps of the rows PVE lists.

func asNode(x row) Node { return Node{Name: str(x["node"]), Status: str(x["status"])} }

func asFabric(x row) Fabric {
	return Fabric{ID: str(x["id"]), Protocol: str(x["protocol"]), Prefix: str(x["ip_prefix"])}
}

func asFabricNode(x row) FabricNode {
	return FabricNode{Fabric: str(x["fabric_id"]), Node: str(x["node_id"]), IP: str(x["ip"])}
}

func asController(x row) Controller {
	return Controller{ID: str(x["controller"]), Type: str(x["type"]), ASN: str(x["asn"])}
}

func asZone(x row) Zone {
	return Zone{ID: str(x["zone"]), Type: str(x["type"]), Controller: str(x["controller"]), VRFVXLAN: str(x["vrf-vxlan"])}
}

func asVNet(x row) VNet {
	return VNet{ID: str(x["vnet"]), Zone: str(x["zone"]), Tag: str(x["tag"]), Alias: str(x["alias"])}
}

func asSubnet(x row) Subnet {
	return Subnet{ID: str(x["subnet"]), CIDR: str(x["cidr"]), Gateway: str(x["gateway"])}
}

// readVNets reads the VNets, each with its subnets.
func readVNets(r *reader) []VNet {
	vnets := list(r, "/cluster/sdn/vnets", asVNet)
	for i, v := range vnets {
		vnets[i].Subnets = list(r, "/cluster/sdn/vnets/"+url.PathEscape(v.ID)+"/subnets", asSubnet)
	}
	return vnets
}

// readVMs reads the QEMU guests by VMID, each but a template with its address and bridge.
func readVMs(r *reader) []VM {
	var rows []row
	if !r.get("/cluster/resources", url.Values{"type": {"vm"}}, &rows) {
		return nil
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
			if !r.get(fmt.Sprintf("/nodes/%s/qemu/%d/config", url.PathEscape(vm.Node), vm.VMID), nil, &cfg) {
				return nil
			}
			vm.IPConfig = str(cfg["ipconfig0"])
			vm.Bridge = netField(str(cfg["net0"]), "bridge")
		}
		vms = append(vms, vm)
	}
	sort.Slice(vms, func(i, j int) bool { return vms[i].VMID < vms[j].VMID })
	return vms
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
