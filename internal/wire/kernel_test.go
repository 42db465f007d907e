package wire

// The table in a real kernel (the lab's, Debian 13's 6.12, in the QEMU guest of make test-wire:
// test/guest/run.sh). A node namespace holds two tenant VNet bridges; each VM is a namespace
// plugged as qemu-server plugs a NIC (a port named tap<vmid>i<n> on the VNet bridge). Every probe
// is counted by an observer table hooked after the guard's (prerouting priority 0: what reaches
// it has passed the guard and will be bridged, learnt and routed), and runs twice: with the
// guard's table, where it must count nothing, and with the table removed (the control), where it
// must count, so each verdict is seen failing with its cause removed.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

const nodeNS = "dvtw-node"

type kvm struct {
	ns, tap, bridge string
	vmid            int
	mac             string
	cidr, gw        string
	pool            string
}

var kvms = []kvm{
	{ns: "dvtw-a1", tap: "tap10101i0", bridge: "tn01v0", vmid: 10101, mac: "bc:24:11:00:01:01", cidr: "10.20.129.11/25", gw: "10.20.129.1", pool: "tenant-tdemo"},
	{ns: "dvtw-a2", tap: "tap10102i0", bridge: "tn01v0", vmid: 10102, mac: "bc:24:11:00:01:02", cidr: "10.20.129.12/25", gw: "10.20.129.1", pool: "tenant-tdemo"},
	{ns: "dvtw-b1", tap: "tap10201i0", bridge: "tn02v0", vmid: 10201, mac: "bc:24:11:00:02:01", cidr: "10.20.130.11/24", gw: "10.20.130.1", pool: "tenant-tother"},
	// the operator's own VM on a site bridge: no tenant's, never touched by the table
	{ns: "dvtw-op", tap: "tap500i0", bridge: "vmbr0", vmid: 500, mac: "bc:24:11:00:05:00", cidr: "10.20.10.50/24", gw: "10.20.10.2"},
}

// kernelBandwidth is tdemo's rate in the kernel test, Mbit/s: low enough that a TCG guest's veth
// carries several times it unpoliced (the control).
const kernelBandwidth = 8

func kernelTenants() []Tenant {
	return []Tenant{{Name: "tdemo", Pool: "tenant-tdemo", Bandwidth: kernelBandwidth, Broadcast: 50}, {Name: "tother", Pool: "tenant-tother"}}
}

func kernelVNets() []VNet {
	return []VNet{
		{ID: "tn01v0", Alias: "tenant-tdemo", Subnets: []netip.Prefix{netip.MustParsePrefix("10.20.129.0/25")}},
		{ID: "tn01v1", Alias: "tenant-tdemo", Subnets: []netip.Prefix{netip.MustParsePrefix("10.20.129.128/25")}},
		{ID: "tn02v0", Alias: "tenant-tother", Subnets: []netip.Prefix{netip.MustParsePrefix("10.20.130.0/24")}},
	}
}

// kernelGuests are the VMs' configurations as PVE holds them (net0 and ipconfig0 of each).
func kernelGuests() []Guest {
	var guests []Guest
	for _, v := range kvms {
		guests = append(guests, Guest{VMID: v.vmid, Pool: v.pool, Config: map[string]any{
			"net0": "virtio=" + strings.ToUpper(v.mac) + ",bridge=" + v.bridge, "ipconfig0": "ip=" + v.cidr + ",gw=" + v.gw}})
	}
	return guests
}

func kernelPlan() Plan { return Build(kernelTenants(), kernelVNets(), kernelGuests()) }

func sh(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func nftIn(t *testing.T, ns, script string) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft -f in %s: %v: %s\n%s", ns, err, out, script)
	}
}

func plug(t *testing.T, v kvm) {
	t.Helper()
	sh(t, "ip", "netns", "add", v.ns)
	sh(t, "ip", "-n", v.ns, "link", "set", "lo", "up")
	sh(t, "ip", "link", "add", v.tap, "netns", nodeNS, "type", "veth", "peer", "name", "eth0", "netns", v.ns)
	sh(t, "ip", "-n", nodeNS, "link", "set", v.tap, "master", v.bridge, "up")
	sh(t, "ip", "-n", v.ns, "link", "set", "eth0", "address", v.mac, "up")
	sh(t, "ip", "-n", v.ns, "addr", "add", v.cidr, "dev", "eth0")
	sh(t, "ip", "-n", v.ns, "route", "add", "default", "via", v.gw)
}

func kernelLab(t *testing.T) {
	if os.Getenv("DEEVNET_GUEST") == "" {
		t.Skip("runs inside the QEMU guest of make test-wire (test/guest/run.sh, Debian 13's kernel): it loads a bridge-family " +
			"table matching meta ibrname, which needs nft_meta_bridge, and makes bridges and namespaces")
	}
	for _, ns := range []string{nodeNS, "dvtw-a1", "dvtw-a2", "dvtw-b1", "dvtw-op", "dvtw-a1b"} {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	sh(t, "ip", "netns", "add", nodeNS)
	t.Cleanup(func() {
		for _, ns := range []string{"dvtw-a1", "dvtw-a2", "dvtw-b1", "dvtw-op", "dvtw-a1b", nodeNS} {
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	sh(t, "ip", "-n", nodeNS, "link", "set", "lo", "up")
	for _, br := range []struct{ name, gw string }{{"tn01v0", "10.20.129.1/25"}, {"tn01v1", "10.20.129.129/25"}, {"tn02v0", "10.20.130.1/24"}, {"vmbr0", "10.20.10.2/24"}} {
		sh(t, "ip", "-n", nodeNS, "link", "add", br.name, "type", "bridge")
		sh(t, "ip", "-n", nodeNS, "link", "set", br.name, "up")
		sh(t, "ip", "-n", nodeNS, "addr", "add", br.gw, "dev", br.name)
	}
	for _, v := range kvms {
		plug(t, v)
	}
	nftIn(t, nodeNS, kernelPlan().Render())
	// the observer: what passed the guard, by probe
	nftIn(t, nodeNS, `table bridge observe {
	counter seen_v6 {}
	counter seen_vlan {}
	counter seen_forged_ip {}
	counter seen_forged_mac {}
	counter seen_forged_arp {}
	counter seen_flood {}
	counter seen_hotplug {}
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		iifname "tap10101i0" ether type ip6 counter name "seen_v6"
		iifname "tap10101i0" ether type 8021q counter name "seen_vlan"
		iifname "tap10101i0" ether type ip ip saddr != 10.20.129.11 counter name "seen_forged_ip"
		iifname "tap10101i0" ether saddr 02:00:00:00:00:00/8 counter name "seen_flood"
		iifname "tap10101i0" ether saddr != { bc:24:11:00:01:01, 02:00:00:00:00:00/8 } counter name "seen_forged_mac"
		iifname "tap10101i0" ether type arp arp saddr ip != { 10.20.129.11, 0.0.0.0 } counter name "seen_forged_arp"
		iifname "tap10101i1" counter name "seen_hotplug"
	}
}
`)
}

// counter reads a named nftables counter's packets in the node namespace.
func counter(t *testing.T, table, name string) int {
	t.Helper()
	out := sh(t, "ip", "netns", "exec", nodeNS, "nft", "-j", "list", "counter", "bridge", table, name)
	var doc struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("nft -j list counter %s: %v: %s", name, err, out)
	}
	for _, o := range doc.Nftables {
		if c, ok := o["counter"]; ok {
			var v struct{ Packets int }
			_ = json.Unmarshal(c, &v)
			return v.Packets
		}
	}
	t.Fatalf("no counter %s in %s", name, out)
	return 0
}

// observed is what the observer counted for a probe: what passed the guard.
func observed(t *testing.T, probe string) int { return counter(t, "observe", "seen_"+probe) }

func resetObserver(t *testing.T) {
	sh(t, "ip", "netns", "exec", nodeNS, "nft", "reset", "counters", "table", "bridge", "observe")
}

func withoutGuard(t *testing.T) {
	t.Helper()
	sh(t, "ip", "netns", "exec", nodeNS, "nft", "delete", "table", "bridge", Table)
	t.Cleanup(func() { nftIn(t, nodeNS, kernelPlan().Render()) })
}

// inNS runs f on a thread switched into the named namespace (a socket keeps the namespace it was
// made in).
func inNS(t *testing.T, name string, f func() error) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = netns.Set(orig); _ = orig.Close() }()
	h, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Close() }()
	if err := netns.Set(h); err != nil {
		t.Fatal(err)
	}
	if err := f(); err != nil {
		t.Fatal(err)
	}
}

// sendFrames writes raw Ethernet frames out of eth0 in ns.
func sendFrames(t *testing.T, ns string, frames [][]byte) {
	t.Helper()
	inNS(t, ns, func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err != nil {
			return fmt.Errorf("AF_PACKET socket: %w", err)
		}
		defer func() { _ = unix.Close(fd) }()
		ifi, err := net.InterfaceByName("eth0")
		if err != nil {
			return err
		}
		sa := &unix.SockaddrLinklayer{Ifindex: ifi.Index, Halen: 6}
		for _, f := range frames {
			if err := unix.Sendto(fd, f, 0, sa); err != nil {
				return fmt.Errorf("sendto: %w", err)
			}
		}
		return nil
	})
}

func mac(s string) net.HardwareAddr { m, _ := net.ParseMAC(s); return m }

func ether(dst, src net.HardwareAddr, typ uint16, payload []byte) []byte {
	f := append(append(append([]byte{}, dst...), src...), byte(typ>>8), byte(typ))
	return append(f, payload...)
}

// ipv4 is a minimal IPv4/UDP datagram from src to dst (checksummed: the bridge hands it on).
func ipv4(src, dst netip.Addr) []byte {
	h := make([]byte, 28)
	h[0], h[8], h[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(h[2:], 28)
	s, d := src.As4(), dst.As4()
	copy(h[12:], s[:])
	copy(h[16:], d[:])
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	binary.BigEndian.PutUint16(h[10:], ^uint16(sum+sum>>16))
	binary.BigEndian.PutUint16(h[20:], 9999)
	binary.BigEndian.PutUint16(h[22:], 9)
	binary.BigEndian.PutUint16(h[24:], 8)
	return h
}

func arpReply(sha net.HardwareAddr, spa, tpa netip.Addr) []byte {
	p := []byte{0, 1, 8, 0, 6, 4, 0, 2}
	s, d := spa.As4(), tpa.As4()
	p = append(append(append(p, sha...), s[:]...), make([]byte, 6)...)
	return append(p, d[:]...)
}

var (
	a1MAC  = mac("bc:24:11:00:01:01")
	a1IP   = netip.MustParseAddr("10.20.129.11")
	gwIP   = netip.MustParseAddr("10.20.129.1")
	bcast  = mac("ff:ff:ff:ff:ff:ff")
	toGW   = mac("02:00:00:00:99:01") // the bridge learns nothing from a destination
	forged = netip.MustParseAddr("10.20.130.11")
)

// fdbLearnt counts the dynamic (learnt) FDB entries of a bridge in the node namespace.
func fdbLearnt(t *testing.T, bridge string) int {
	t.Helper()
	n := 0
	inNS(t, nodeNS, func() error {
		br, err := netlink.LinkByName(bridge)
		if err != nil {
			return err
		}
		entries, err := netlink.NeighList(0, unix.AF_BRIDGE)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.MasterIndex == br.Attrs().Index && e.State&netlink.NUD_PERMANENT == 0 && e.State&netlink.NUD_NOARP == 0 {
				n++
			}
		}
		return nil
	})
	return n
}

var pingSummary = regexp.MustCompile(`(\d+) packets transmitted, (\d+) (packets )?received`)

// ping runs ping in ns and returns what it sent and what was answered.
func ping(ns, dst string, count int, interval string) (sent, received int, out string) {
	b, _ := exec.Command("ip", "netns", "exec", ns, "ping", "-n", "-q", "-c", strconv.Itoa(count), "-i", interval, "-W", "1", dst).CombinedOutput()
	if m := pingSummary.FindStringSubmatch(string(b)); m != nil {
		sent, _ = strconv.Atoi(m[1])
		received, _ = strconv.Atoi(m[2])
	}
	return sent, received, string(b)
}

func TestKernelOwnTrafficPasses(t *testing.T) {
	kernelLab(t)
	for _, c := range [][2]string{{"dvtw-a1", "10.20.129.12"}, {"dvtw-a1", "10.20.129.1"}, {"dvtw-b1", "10.20.130.1"}, {"dvtw-op", "10.20.10.2"}} {
		if s, r, out := ping(c[0], c[1], 3, "0.2"); r != s || s == 0 {
			t.Errorf("%s -> %s: %d of %d answered through the guard's table:\n%s", c[0], c[1], r, s, out)
		}
	}
}

// Each forged frame class: counted by the observer only without the guard.
func TestKernelForgedFramesAreDroppedBeforeTheBridge(t *testing.T) {
	kernelLab(t)
	other := mac("bc:24:11:00:02:01") // tother's VM's MAC
	probes := []struct {
		name, counter string
		frames        [][]byte
	}{
		{"another tenant's source address", "forged_ip", [][]byte{ether(toGW, a1MAC, 0x0800, ipv4(forged, gwIP))}},
		{"an address of its own subnet that is not its NIC's", "forged_ip", [][]byte{ether(toGW, a1MAC, 0x0800, ipv4(netip.MustParseAddr("10.20.129.50"), gwIP))}},
		{"another VM's MAC", "forged_mac", [][]byte{ether(toGW, other, 0x0800, ipv4(a1IP, gwIP))}},
		{"ARP claiming a peer's address", "forged_arp", [][]byte{ether(bcast, a1MAC, 0x0806, arpReply(a1MAC, netip.MustParseAddr("10.20.129.12"), gwIP))}},
		{"IPv6", "v6", [][]byte{ether(mac("33:33:00:00:00:01"), a1MAC, 0x86dd, make([]byte, 40))}},
		{"an 802.1Q tagged frame", "vlan", [][]byte{ether(toGW, a1MAC, 0x8100, append([]byte{0, 51, 8, 0}, ipv4(a1IP, gwIP)...))}},
	}
	run := func(t *testing.T, guarded bool) {
		for _, p := range probes {
			resetObserver(t)
			sendFrames(t, "dvtw-a1", p.frames)
			time.Sleep(50 * time.Millisecond)
			got := observed(t, p.counter)
			switch {
			case guarded && got != 0:
				t.Errorf("%s: %d frame(s) passed the guard's table", p.name, got)
			case !guarded && got == 0:
				t.Errorf("control: %s: the observer counted nothing without the guard's table, so the probe proves nothing", p.name)
			}
		}
	}
	t.Run("guarded", func(t *testing.T) { run(t, true) })
	t.Run("control without the table", func(t *testing.T) { withoutGuard(t); run(t, false) })
}

// A flood of source MACs leaves the VNet bridge's FDB as it was: the frames are dropped before
// the bridge learns their source, so nothing reaches zebra and bgpd either.
func TestKernelMACFloodLeavesTheFDBAlone(t *testing.T) {
	kernelLab(t)
	const n = 10000
	frames := make([][]byte, n)
	for i := range frames {
		src := net.HardwareAddr{0x02, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)}
		frames[i] = ether(toGW, src, 0x0800, ipv4(a1IP, gwIP))
	}
	ping("dvtw-a1", "10.20.129.12", 1, "0.2") // the ports' own MACs learnt
	before := fdbLearnt(t, "tn01v0")
	sendFrames(t, "dvtw-a1", frames)
	time.Sleep(100 * time.Millisecond)
	after := fdbLearnt(t, "tn01v0")
	t.Logf("tn01v0 learnt FDB entries: %d before, %d after %d frames from new source MACs (guarded)", before, after, n)
	if after > before || after > 2 {
		t.Errorf("guarded: the FDB grew from %d to %d entries (bound: the 2 admitted ports)", before, after)
	}
	t.Run("control without the table", func(t *testing.T) {
		withoutGuard(t)
		sendFrames(t, "dvtw-a1", frames)
		time.Sleep(100 * time.Millisecond)
		grown := fdbLearnt(t, "tn01v0")
		t.Logf("tn01v0 learnt FDB entries without the guard's table: %d", grown)
		if grown < before+n/2 {
			t.Errorf("control: the FDB grew only to %d without the guard: the flood proves nothing", grown)
		}
	})
}

// A NIC hotplugged into a running VM (a new tap on the VNet) passes no frame until the guard
// admits it, then passes.
func TestKernelHotpluggedNICIsDroppedUntilAdmitted(t *testing.T) {
	kernelLab(t)
	hot := kvm{ns: "dvtw-a1b", tap: "tap10101i1", bridge: "tn01v1", vmid: 10101, mac: "bc:24:11:00:01:11", cidr: "10.20.129.140/25", gw: "10.20.129.129"}
	plug(t, hot)
	resetObserver(t)
	if _, r, _ := ping(hot.ns, hot.gw, 3, "0.2"); r != 0 {
		t.Errorf("the hotplugged NIC's pings were answered before the guard admitted it (%d)", r)
	}
	if got := observed(t, "hotplug"); got != 0 {
		t.Errorf("%d frames of the hotplugged NIC passed before it was admitted", got)
	}
	// the VM's config now has net1 (PVE wrote it at the hotplug): the guard's next run admits it
	guests := kernelGuests()
	guests[0].Config["net1"] = "virtio=BC:24:11:00:01:11,bridge=tn01v1"
	guests[0].Config["ipconfig1"] = "ip=10.20.129.140/25,gw=10.20.129.129"
	nftIn(t, nodeNS, Build(kernelTenants(), kernelVNets(), guests).Render())
	if s, r, out := ping(hot.ns, hot.gw, 3, "0.2"); r != s || s == 0 {
		t.Errorf("admitted, the hotplugged NIC's pings: %d of %d answered:\n%s", r, s, out)
	}
}

// receiveRate blasts UDP from a1 to a2 for d and returns what a2 received after the first
// warm seconds, in Mbit/s: the kernel's byte bucket starts full with one second of the rate
// (nft_limit_init), which a blast spends first.
func receiveRate(t *testing.T, d, warm time.Duration) float64 {
	t.Helper()
	var conn *net.UDPConn
	inNS(t, "dvtw-a2", func() error {
		var err error
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(10, 20, 129, 12), Port: 5001})
		return err
	})
	defer func() { _ = conn.Close() }()
	start := time.Now()
	got := make(chan int64)
	go func() {
		var n int64
		buf := make([]byte, 2048)
		for {
			_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			k, err := conn.Read(buf)
			if err != nil {
				got <- n
				return
			}
			if since := time.Since(start); since > warm && since <= d {
				n += int64(k)
			}
		}
	}()
	payload := make([]byte, 1400)
	inNS(t, "dvtw-a1", func() error {
		c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(10, 20, 129, 12), Port: 5001})
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		for time.Since(start) < d {
			_, _ = c.Write(payload) // ENOBUFS under a full queue: the blast goes on
		}
		return nil
	})
	n := <-got
	return float64(n*8) / (d - warm).Seconds() / 1e6
}

// A tenant's bulk traffic is held at its bandwidth on the node while the other tenant loses no
// ping; without the table it goes well past the rate (the control).
func TestKernelBandwidthHeldAtTheTenantsRate(t *testing.T) {
	kernelLab(t)
	ping("dvtw-a1", "10.20.129.12", 1, "0.2")
	type pingResult struct{ sent, received int }
	done := make(chan pingResult)
	go func() {
		s, r, _ := ping("dvtw-b1", "10.20.130.1", 40, "0.1")
		done <- pingResult{s, r}
	}()
	rate := receiveRate(t, 5*time.Second, 2*time.Second)
	pr := <-done
	t.Logf("tdemo's blast received at %.1f Mbit/s under its %d Mbit/s; tother's ping %d/%d", rate, kernelBandwidth, pr.received, pr.sent)
	// the bucket's burst (a tenth of a second) on top of the rate, and a margin for TCG's clock
	if rate > kernelBandwidth*1.25 || rate < kernelBandwidth*0.6 {
		t.Errorf("tdemo's blast received at %.1f Mbit/s, not held at its %d Mbit/s (25%% over at most, 40%% under at most)", rate, kernelBandwidth)
	}
	if pr.sent == 0 || pr.received != pr.sent {
		t.Errorf("tother lost pings during tdemo's blast: %d of %d", pr.received, pr.sent)
	}
	t.Run("control without the table", func(t *testing.T) {
		withoutGuard(t)
		free := receiveRate(t, 5*time.Second, 2*time.Second)
		t.Logf("unpoliced: %.1f Mbit/s", free)
		if free < kernelBandwidth*2 {
			t.Errorf("control: unpoliced the blast reached only %.1f Mbit/s, so the cap proves nothing", free)
		}
	})
}

// The skeleton the node network loads at boot and at every ifreload: over a table the guard loaded
// it keeps every admitted port (a reload drops nobody's traffic); alone (a node just booted, the
// guard not run yet) it drops every tenant port and leaves the operator's VM alone.
func TestKernelSkeletonKeepsAdmittedPortsAndAloneDropsEveryTenantPort(t *testing.T) {
	kernelLab(t)
	nftIn(t, nodeNS, Skeleton())
	for _, c := range [][2]string{{"dvtw-a1", "10.20.129.12"}, {"dvtw-b1", "10.20.130.1"}, {"dvtw-op", "10.20.10.2"}} {
		if s, r, out := ping(c[0], c[1], 3, "0.2"); r != s || s == 0 {
			t.Errorf("skeleton over the guard's table: %s -> %s: %d of %d answered:\n%s", c[0], c[1], r, s, out)
		}
	}
	resetObserver(t)
	sendFrames(t, "dvtw-a1", [][]byte{ether(toGW, a1MAC, 0x0800, ipv4(forged, gwIP))})
	if got := observed(t, "forged_ip"); got != 0 {
		t.Errorf("skeleton over the guard's table: a forged source passed (%d)", got)
	}
	sh(t, "ip", "netns", "exec", nodeNS, "nft", "delete", "table", "bridge", Table)
	nftIn(t, nodeNS, Skeleton())
	t.Cleanup(func() { nftIn(t, nodeNS, kernelPlan().Render()) })
	for _, c := range [][2]string{{"dvtw-a1", "10.20.129.12"}, {"dvtw-b1", "10.20.130.1"}} {
		if _, r, _ := ping(c[0], c[1], 2, "0.2"); r != 0 {
			t.Errorf("skeleton alone: %s -> %s answered (%d): a port no guard admitted passed", c[0], c[1], r)
		}
	}
	if s, r, out := ping("dvtw-op", "10.20.10.2", 3, "0.2"); r != s || s == 0 {
		t.Errorf("skeleton alone: the operator's VM on vmbr0 lost pings (%d of %d):\n%s", r, s, out)
	}
	// the guard's run then replaces it whole, admitting the ports
	nftIn(t, nodeNS, kernelPlan().Render())
	if s, r, out := ping("dvtw-a1", "10.20.129.12", 3, "0.2"); r != s || s == 0 {
		t.Errorf("after the guard's load: %d of %d answered:\n%s", r, s, out)
	}
}

// Broadcast frames of a tenant beyond its broadcast rate are dropped before the bridge floods
// them (over VXLAN, to every member).
func TestKernelBroadcastHeldAtTheTenantsRate(t *testing.T) {
	kernelLab(t)
	const n = 2000
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = ether(bcast, a1MAC, 0x0806, arpReply(a1MAC, a1IP, gwIP))
	}
	start := time.Now()
	sendFrames(t, "dvtw-a1", frames)
	took := time.Since(start)
	dropped := counter(t, Table, CounterBroadcast)
	passed := n - dropped
	allowed := 50*took.Seconds() + 50 // the rate over the blast's time, and the burst
	t.Logf("%d broadcast ARP frames in %v: %d passed, %d dropped over the rate (50/s, burst 50)", n, took, passed, dropped)
	if float64(passed) > allowed*1.2 {
		t.Errorf("%d broadcast frames passed in %v, over the tenant's 50/s (at most %.0f)", passed, took, allowed)
	}
}
