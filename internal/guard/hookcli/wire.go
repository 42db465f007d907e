package hookcli

// The wire (docs/adr/0016-tenant-wire.md): what each tenant VM's ports may send on this node,
// loaded into the kernel as internal/wire's nftables table.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deevnet/tenant/internal/guard"
	"github.com/deevnet/tenant/internal/wire"
)

// WireFile is where the guard keeps the table it last loaded on the node (tmpfs: gone at boot,
// with the kernel's table, when the node network's skeleton takes over).
const WireFile = "/run/deevnet-envelope-guard/wire.nft"

type sdnVNet struct {
	VNet  string `json:"vnet"`
	Alias string `json:"alias"`
}

type sdnSubnet struct {
	CIDR string `json:"cidr"`
}

// wirePlan reads what the table is made of: the tenants of the envelope file, the applied VNets of
// the tenants (their owner marks and subnets) and the configuration every tenant VM running on node
// runs with.
//
// started are VMs whose ports just appeared here (the watch's events): they run here whatever
// /cluster/resources says yet (its status lags the start by pvestatd's cycle), with their
// configuration read where PVE keeps it (a live migration's target runs before the config moves).
// marks (check mode's plan of a takeover, -joining-vnets): the alias a VNet without one gets in this run.
func wirePlan(f guard.File, res []guard.Resource, node string, started []int, marks map[string]string) (wire.Plan, error) {
	var tenants []wire.Tenant
	for name, t := range f.Tenants {
		tenants = append(tenants, wire.Tenant{Name: name, Pool: t.Pool, Bandwidth: t.Envelope.Bandwidth, Broadcast: t.Envelope.Broadcast})
	}
	var list []sdnVNet
	// running=1: what the last SDN apply put on the nodes, the bridges the VMs' taps are on
	if err := pvesh(&list, "/cluster/sdn/vnets", "--running", "1"); err != nil {
		return wire.Plan{}, err
	}
	var vnets []wire.VNet
	for _, v := range list {
		if a, ok := marks[v.VNet]; ok && v.Alias == "" {
			v.Alias = a
		}
		if !strings.HasPrefix(v.VNet, wire.VNetPrefix) || !strings.HasPrefix(v.Alias, guard.TenantPoolPrefix) {
			continue
		}
		var subnets []sdnSubnet
		if err := pvesh(&subnets, "/cluster/sdn/vnets/"+v.VNet+"/subnets", "--running", "1"); err != nil {
			return wire.Plan{}, err
		}
		vn := wire.VNet{ID: v.VNet, Alias: v.Alias}
		for _, s := range subnets {
			p, err := netip.ParsePrefix(s.CIDR)
			if err != nil {
				return wire.Plan{}, fmt.Errorf("VNet %s: subnet cidr %q: %w", v.VNet, s.CIDR, err)
			}
			vn.Subnets = append(vn.Subnets, p)
		}
		vnets = append(vnets, vn)
	}
	var guests []wire.Guest
	for _, r := range res {
		here := r.Node == node && r.Status == "running" || slices.Contains(started, r.VMID)
		if r.Type != "qemu" || r.Template == 1 || !here {
			continue
		}
		if _, ok := tenantPools(f)[r.Pool]; !ok {
			continue
		}
		var c map[string]any
		if err := pvesh(&c, fmt.Sprintf("/nodes/%s/qemu/%d/config", r.Node, r.VMID), "--current", "1"); err != nil {
			return wire.Plan{}, err
		}
		guests = append(guests, wire.Guest{VMID: r.VMID, Pool: r.Pool, Config: c})
	}
	return wire.Build(tenants, vnets, guests), nil
}

func tenantPools(f guard.File) map[string]string {
	pools := map[string]string{}
	for name, t := range f.Tenants {
		pools[t.Pool] = name
	}
	return pools
}

// summary is one line per admitted port and per tenant's rate, the table's content in words; it
// travels in the loaded file's comments, so the next run says what changed.
func summary(p wire.Plan) []string {
	var lines []string
	for _, t := range p.Tenants {
		rate := "no rate"
		if t.Bandwidth > 0 {
			rate = fmt.Sprintf("%d Mbit/s", t.Bandwidth)
		}
		if t.Broadcast > 0 {
			rate += fmt.Sprintf(", %d broadcast frames/s", t.Broadcast)
		}
		lines = append(lines, fmt.Sprintf("tenant %s: %s", t.Name, rate))
	}
	for _, port := range p.Ports {
		lines = append(lines, fmt.Sprintf("tenant %s: VM %d %s on %s (%s, %s) sends as %s %s only",
			port.Tenant, port.VMID, port.Net, port.VNet, port.Tap(), port.FirewallPeer(), port.MAC, port.IP))
	}
	return lines
}

const summaryMark = "# admitted: "

func withSummary(p wire.Plan) string {
	var b strings.Builder
	for _, l := range summary(p) {
		b.WriteString(summaryMark + l + "\n")
	}
	b.WriteString(p.Render())
	return b.String()
}

func readSummary(script []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(script))
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), summaryMark); ok {
			lines = append(lines, l)
		}
	}
	return lines
}

// wireCmd loads this node's table when it differs from the one loaded last, or is not in the
// kernel (a boot, a flush): one line per change on stdout (with -check: what would change, and
// nothing is loaded), one line per NIC not admitted on stderr. With an empty -nft it only writes
// the file (a lab whose nodes are directories).
func wireCmd(o options) error { return wireRun(o, nil) }

func wireRun(o options, started []int) error {
	f, res, node, err := nodeState(o)
	if err != nil {
		return err
	}
	marks := map[string]string{}
	if o.joiningVNets != "" {
		if !o.check {
			return errors.New("-joining-vnets: only with -check (a real run reads the VNets as they are)")
		}
		for _, e := range strings.FieldsFunc(o.joiningVNets, func(c rune) bool { return c == ',' }) {
			id, alias, ok := strings.Cut(e, "=")
			if !ok || id == "" || alias == "" {
				return fmt.Errorf("-joining-vnets %q: want VNET=POOL, comma-separated", e)
			}
			marks[id] = alias
		}
	}
	p, err := wirePlan(f, res, node, started, marks)
	if err != nil {
		return fmt.Errorf("wire on %s: %w", node, err)
	}
	for _, r := range p.Refused {
		_, _ = fmt.Fprintln(o.stderr, r)
	}
	script := withSummary(p)
	old, err := os.ReadFile(o.wireFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("wire on %s: %w", node, err)
	}
	loaded := o.nft == "" || tableLoaded(o.nft)
	if string(old) == script && loaded {
		return nil
	}
	was, now := readSummary(old), summary(p)
	var changes []string
	for _, l := range now {
		if !slices.Contains(was, l) {
			changes = append(changes, "+ "+l)
		}
	}
	for _, l := range was {
		if !slices.Contains(now, l) {
			changes = append(changes, "- "+l)
		}
	}
	if !loaded && len(changes) == 0 {
		changes = append(changes, fmt.Sprintf("table bridge %s not in the kernel: loaded again", wire.Table))
	}
	if len(changes) == 0 {
		// the rules differ with no port's line changed (the node's first table, a new release's
		// rules): said, so check mode names the write too
		was := "different"
		if len(old) == 0 {
			was = "absent"
		}
		changes = append(changes, fmt.Sprintf("table %s rewritten (it was %s)", o.wireFile, was))
	}
	if !o.check {
		if err := loadWire(o, script); err != nil {
			return fmt.Errorf("wire on %s: %w", node, err)
		}
	}
	for _, c := range changes {
		_, _ = fmt.Fprintf(o.stdout, "wire on %s: %s\n", node, c)
	}
	return nil
}

// loadWire loads script (one nft transaction: the old table stays whole if it fails), then keeps
// it as the file the next run compares with.
func loadWire(o options, script string) error {
	if err := os.MkdirAll(filepath.Dir(o.wireFile), 0o755); err != nil {
		return err
	}
	tmp := o.wireFile + ".new"
	if err := os.WriteFile(tmp, []byte(script), 0o644); err != nil {
		return err
	}
	if o.nft != "" {
		out, err := exec.Command(o.nft, "-f", tmp).CombinedOutput()
		if err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("%s -f %s: %w: %s", o.nft, tmp, err, strings.TrimSpace(string(out)))
		}
	}
	return os.Rename(tmp, o.wireFile)
}

func tableLoaded(nft string) bool {
	return exec.Command(nft, "list", "table", "bridge", wire.Table).Run() == nil
}

// nodeState is state and this node's name, what contain and wire start from.
func nodeState(o options) (guard.File, []guard.Resource, string, error) {
	f, res, err := state(o)
	if err != nil {
		return guard.File{}, nil, "", err
	}
	if o.joining != "" {
		// check mode's plan of a takeover, as for the sweep: the VMs this run puts into a pool
		if !o.check {
			return guard.File{}, nil, "", errors.New("-joining: only with -check (a real run reads the pools as they are)")
		}
		if err := joinPools(res, o.joining); err != nil {
			return guard.File{}, nil, "", err
		}
	}
	node, err := nodeName(o)
	return f, res, node, err
}

// nodeName is -node, or the host name up to its first dot (PVE's nodename).
func nodeName(o options) (string, error) {
	if o.node != "" {
		return o.node, nil
	}
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("-node not given and no host name: %w", err)
	}
	node, _, _ := strings.Cut(h, ".")
	return node, nil
}
