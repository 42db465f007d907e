package access

// No tenant privilege reaches a site network (ADR-0013). A tenant's token holds SDN.Use on a
// node bridge only when the bridge connects nothing: no port, no address, no VLAN of the site.
// The node's own view of its interfaces, GET /nodes/{node}/network, is the only source: the
// inventory's idea of a bridge is not what a tenant's NIC would be plugged into.

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/deevnet/tenant/internal/sdn"
	"github.com/deevnet/tenant/internal/vm"
)

// nodeIface is the part of one GET /nodes/{node}/network entry that says what an interface connects.
type nodeIface struct {
	Iface       string `json:"iface"`
	Type        string `json:"type"`
	BridgePorts string `json:"bridge_ports"`
	CIDR        string `json:"cidr"`
	CIDR6       string `json:"cidr6"`
	Address     string `json:"address"`
	Address6    string `json:"address6"`
}

// ports is the bridge's ports as the interfaces file lists them ("none" is none).
func (i nodeIface) ports() []string {
	var out []string
	for _, p := range strings.Fields(i.BridgePorts) {
		if p != "none" {
			out = append(out, p)
		}
	}
	return out
}

// connects says what makes the interface part of a network, "" when nothing does.
func (i nodeIface) connects() string {
	var why []string
	if i.Type != "bridge" && i.Type != "OVSBridge" {
		why = append(why, "is of type "+i.Type+", not a bridge")
	}
	if p := i.ports(); len(p) > 0 {
		why = append(why, "has port(s) "+strings.Join(p, " "))
	}
	for _, a := range []string{i.CIDR, i.Address, i.CIDR6, i.Address6} {
		if a != "" {
			why = append(why, "has address "+a)
			break
		}
	}
	return strings.Join(why, ", ")
}

// nodeNetworks is every node's interfaces by name.
type nodeNetworks map[string]map[string]nodeIface

// readNetworks reads GET /nodes/{node}/network of each node.
func (a Access) readNetworks(ctx context.Context, nodes map[string]bool) (nodeNetworks, error) {
	out := nodeNetworks{}
	for node := range nodes {
		var list []nodeIface
		if err := a.C.Get(ctx, "/nodes/"+url.PathEscape(node)+"/network", nil, &list); err != nil {
			return nil, fmt.Errorf("read the network of node %s: %w", node, err)
		}
		out[node] = map[string]nodeIface{}
		for _, i := range list {
			out[node][i.Iface] = i
		}
	}
	return out, nil
}

// vlanSuffix is a VLAN interface's name on its device: vmbr0.50.
var vlanSuffix = regexp.MustCompile(`\.[0-9]+$`)

// checkBridges refuses, naming the bridge, a grant of SDN.Use on a bridge that is missing on a
// node, or that connects anything there (ports, an address, a VLAN of the site).
func checkBridges(bridges []string, nets nodeNetworks) error {
	for i, b := range bridges {
		if vlanSuffix.MatchString(b) {
			return fmt.Errorf("bridges[%d]: %s is a VLAN of %s, a site network; refusing SDN.Use on it (ADR-0013)", i, b, vlanSuffix.ReplaceAllString(b, ""))
		}
		for _, node := range slices.Sorted(maps.Keys(nets)) {
			f, ok := nets[node][b]
			if !ok {
				return fmt.Errorf("bridges[%d]: bridge %s does not exist on node %s; a clone's NIC there would not start", i, b, node)
			}
			if why := f.connects(); why != "" {
				return fmt.Errorf("bridges[%d]: bridge %s on node %s %s: refusing SDN.Use on a site network to a tenant (only a bridge that connects nothing, ADR-0013)", i, b, node, why)
			}
		}
	}
	return nil
}

// checkTemplateNICs refuses a template whose NICs a clone could only copy with SDN.Use on a
// site network: a bridge that is not one of bridges (so checked to connect nothing), a VLAN tag
// or trunk on it, or a VNet (another zone's, never granted here).
func (a Access) checkTemplateNICs(ctx context.Context, g vm.Observed, bridges []string, vnets []sdn.Observed) error {
	var cfg map[string]any
	if err := a.C.Get(ctx, fmt.Sprintf("/nodes/%s/qemu/%d/config", url.PathEscape(g.Node), g.VMID), nil, &cfg); err != nil {
		return fmt.Errorf("template: read the config of %d: %w", g.VMID, err)
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		if netKey.MatchString(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		nic := vm.ParseNIC(fmt.Sprint(cfg[k]))
		refuse := func(why string) error {
			return fmt.Errorf("template: %d (%q) has %s on bridge %s%s; cloning it needs SDN.Use there, which a tenant must not hold: "+
				"remove the NIC from the template (qm set %d --delete %s) or put it on a bridge that connects nothing, listed in bridges (ADR-0013)",
				g.VMID, g.Name, k, nic.Bridge, why, g.VMID, k)
		}
		for _, v := range vnets {
			if v.Exists() && v.ID == nic.Bridge {
				return refuse(fmt.Sprintf(", a VNet of zone %v", v.Props["zone"]))
			}
		}
		switch {
		case !slices.Contains(bridges, nic.Bridge):
			return refuse(", not one of bridges " + fmt.Sprint(bridges))
		case nic.Other["tag"] != "" || nic.Other["trunks"] != "":
			return refuse(fmt.Sprintf(" with VLAN tag %q trunks %q", nic.Other["tag"], nic.Other["trunks"]))
		}
	}
	return nil
}

var netKey = regexp.MustCompile(`^net[0-9]+$`)
