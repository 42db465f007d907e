package vm

import (
	"strings"

	"github.com/deevnet/tenant/internal/pveprop"
)

// Props is a parsed PVE property string (internal/pveprop).
type Props = pveprop.Props

// ParseProps splits a PVE property string (internal/pveprop).
func ParseProps(s string) Props { return pveprop.ParseProps(s) }

// NIC is the part of a netN value the module owns, plus the MAC it must keep.
type NIC struct {
	Model  string
	MAC    string
	Bridge string
	Other  Props // firewall, tag, mtu, ...: kept as found
}

// nicModels are the PVE NIC models that can appear as the key of the MAC ("virtio=<mac>").
var nicModels = map[string]bool{
	"virtio": true, "e1000": true, "e1000e": true, "vmxnet3": true, "rtl8139": true,
	"e1000-82540em": true, "e1000-82544gc": true, "e1000-82545em": true, "i82551": true,
	"i82557b": true, "i82559er": true, "ne2k_isa": true, "ne2k_pci": true, "pcnet": true,
}

// ParseNIC reads any of PVE's accepted net spellings: "virtio,bridge=x",
// "model=virtio,bridge=x,macaddr=..." or the stored "virtio=<MAC>,bridge=x".
func ParseNIC(s string) NIC {
	n := NIC{Other: Props{}}
	// In the order written, so that a repeated or conflicting key resolves the same way every time.
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, hasValue := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !hasValue, k == "model":
			if !hasValue {
				v = k
			}
			n.Model = v
		case k == "macaddr":
			n.MAC = strings.ToUpper(v)
		case k == "bridge":
			n.Bridge = v
		case nicModels[k]:
			n.Model = k
			n.MAC = strings.ToUpper(v)
		default:
			n.Other[k] = v
		}
	}
	return n
}

// String renders the NIC in PVE's stored form; without a MAC PVE generates one.
func (n NIC) String() string {
	p := Props{}
	for k, v := range n.Other {
		p[k] = v
	}
	head := n.Model
	if n.MAC != "" {
		head += "=" + n.MAC
	}
	if n.Bridge != "" {
		p["bridge"] = n.Bridge
	}
	rest := p.Format("bridge")
	if rest == "" {
		return head
	}
	return head + "," + rest
}
