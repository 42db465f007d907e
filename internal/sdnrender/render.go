package sdnrender

// Render returns the files node writes when cfg is applied.
func Render(cfg *Config, node Node) Files {
	ifs, w1 := renderInterfaces(cfg, node)
	frr, w2 := renderFRR(cfg, node)
	f := Files{Interfaces: ifs, FRR: frr, Warnings: append(w1, w2...)}
	for _, fab := range cfg.Fabrics {
		if _, ok := fab.Nodes[node.Name]; !ok {
			continue
		}
		switch fab.Protocol {
		case "openfabric":
			f.Fabricd = true
		case "ospf":
			f.Ospfd = true
		}
	}
	return f
}

// ManagesFRR reports whether apply regenerates FRR at all: PVE does when
// the running config has a controller or a fabric (§1).
func (c *Config) ManagesFRR() bool { return len(c.Controllers) > 0 || len(c.Fabrics) > 0 }
