package wire

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
)

func fixture() ([]Tenant, []VNet) {
	tenants := []Tenant{
		{Name: "tdemo", Pool: "tenant-tdemo", Bandwidth: 20, Broadcast: 100},
		{Name: "tother", Pool: "tenant-tother"},
	}
	vnets := []VNet{
		{ID: "tn01v0", Alias: "tenant-tdemo", Subnets: []netip.Prefix{netip.MustParsePrefix("10.20.129.0/25")}},
		{ID: "tn01v1", Alias: "tenant-tdemo", Subnets: []netip.Prefix{netip.MustParsePrefix("10.20.129.128/25")}},
		{ID: "tn02v0", Alias: "tenant-tother", Subnets: []netip.Prefix{netip.MustParsePrefix("10.20.130.0/24")}},
	}
	return tenants, vnets
}

func vm(id int, pool string, kv ...string) Guest {
	c := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i]] = kv[i+1]
	}
	return Guest{VMID: id, Pool: pool, Config: c}
}

func TestBuildAdmitsEachNICWithItsMACAndAddress(t *testing.T) {
	tenants, vnets := fixture()
	p := Build(tenants, vnets, []Guest{
		vm(10101, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:01,bridge=tn01v0,firewall=0", "ipconfig0", "ip=10.20.129.11/25,gw=10.20.129.1",
			"net1", "virtio=BC:24:11:00:01:02,bridge=tn01v1", "ipconfig1", "ip=10.20.129.140/25"),
		vm(10201, "tenant-tother", "net0", "e1000=bc:24:11:00:02:01,bridge=tn02v0", "ipconfig0", "ip=10.20.130.11/24,gw=10.20.130.1"),
		vm(500, "", "net0", "virtio=BC:24:11:00:05:00,bridge=vmbr0"), // the operator's own VM: not this table's
	})
	if len(p.Refused) != 0 {
		t.Fatalf("refused: %v", p.Refused)
	}
	var got []string
	for _, port := range p.Ports {
		got = append(got, port.Tenant+" "+port.Tap()+" "+port.FirewallPeer()+" "+port.VNet+" "+port.MAC.String()+" "+port.IP.String())
	}
	want := []string{
		"tdemo tap10101i0 fwpr10101p0 tn01v0 bc:24:11:00:01:01 10.20.129.11",
		"tdemo tap10101i1 fwpr10101p1 tn01v1 bc:24:11:00:01:02 10.20.129.140",
		"tother tap10201i0 fwpr10201p0 tn02v0 bc:24:11:00:02:01 10.20.130.11",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(p.Tenants) != 2 || p.Tenants[0].Name != "tdemo" || p.Tenants[1].Name != "tother" {
		t.Fatalf("tenants here: %+v", p.Tenants)
	}
	if macs, ips := p.Bound("tdemo"); macs != 2 || ips != 2 {
		t.Fatalf("tdemo's bound: %d MACs, %d addresses; want 2, 2", macs, ips)
	}
}

// Every way a tenant's token can make a NIC claim what is not its own is refused, and the refusal
// names the VM, the NIC and the rule.
func TestBuildRefusesWhatTheTokenCanSetButMayNotClaim(t *testing.T) {
	tenants, vnets := fixture()
	cases := []struct {
		name  string
		guest Guest
		want  string
	}{
		{"the other tenant's VNet", vm(10102, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:03,bridge=tn02v0", "ipconfig0", "ip=10.20.130.50/24"),
			"VM 10102 net0: bridge tn02v0 is not one of the tenant's VNets"},
		{"a site bridge", vm(10103, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:04,bridge=vmbr0", "ipconfig0", "ip=10.20.10.50/24"),
			"VM 10103 net0: bridge vmbr0 is not one of the tenant's VNets"},
		{"an address outside the VNet's subnets", vm(10104, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:05,bridge=tn01v0", "ipconfig0", "ip=10.20.130.10/24"),
			"VM 10104 net0: ipconfig0 address 10.20.130.10 is in none of VNet tn01v0's subnets (10.20.129.0/25)"},
		{"dhcp", vm(10105, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:06,bridge=tn01v0", "ipconfig0", "ip=dhcp"),
			"VM 10105 net0: ipconfig0 ip=dhcp is not a static IPv4 address/prefix (dhcp is not admitted)"},
		{"no ipconfig", vm(10106, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:07,bridge=tn01v0"),
			"VM 10106 net0: no ipconfig0: a NIC without a static IPv4 address may send nothing"},
		{"a group MAC", vm(10107, "tenant-tdemo", "net0", "virtio=01:00:5E:00:00:01,bridge=tn01v0", "ipconfig0", "ip=10.20.129.30/25"),
			"VM 10107 net0: MAC 01:00:5e:00:00:01 is a group address"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Build(tenants, vnets, []Guest{c.guest})
			if len(p.Ports) != 0 || len(p.Refused) != 1 || !strings.Contains(p.Refused[0], c.want) || !strings.HasSuffix(p.Refused[0], "its frames are dropped") {
				t.Fatalf("ports %v, refused %q; want one refusal containing %q", p.Ports, p.Refused, c.want)
			}
		})
	}
}

// The bound: one NIC per VNet per VM and one address per tenant, whatever the token adds.
func TestBuildBoundsWhatOneTenantCanMakeTheNodeLearn(t *testing.T) {
	tenants, vnets := fixture()
	g := vm(10101, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:01,bridge=tn01v0", "ipconfig0", "ip=10.20.129.11/25")
	for i := 1; i <= 31; i++ { // every NIC qemu-server allows, all on the same VNet
		g.Config["net"+itoa(i)] = "virtio=BC:24:11:00:02:" + hex2(i) + ",bridge=tn01v0"
		g.Config["ipconfig"+itoa(i)] = "ip=10.20.129." + itoa(20+i) + "/25"
	}
	twin := vm(10102, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:09,bridge=tn01v0", "ipconfig0", "ip=10.20.129.11/25")
	p := Build(tenants, vnets, []Guest{twin, g})
	if macs, ips := p.Bound("tdemo"); macs != 1 || ips != 1 {
		t.Fatalf("bound %d MACs, %d addresses; want 1, 1 (refused: %v)", macs, ips, p.Refused)
	}
	if len(p.Refused) != 32 {
		t.Fatalf("%d refused, want 31 second NICs and the twin address: %v", len(p.Refused), p.Refused)
	}
	if !strings.Contains(p.Refused[0], "VM 10101 net1: a second NIC on VNet tn01v0 (net0 is on it already)") {
		t.Fatalf("first refusal %q", p.Refused[0])
	}
	if !strings.Contains(p.Refused[31], "VM 10102 net0: address 10.20.129.11 is VM 10101 net0's already") {
		t.Fatalf("last refusal %q", p.Refused[31])
	}
}

func TestBuildSkipsALinkDownNIC(t *testing.T) {
	tenants, vnets := fixture()
	p := Build(tenants, vnets, []Guest{vm(10101, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:01,bridge=tn01v0,link_down=1", "ipconfig0", "ip=10.20.129.11/25")})
	if len(p.Ports) != 0 || len(p.Refused) != 0 {
		t.Fatalf("ports %v refused %v", p.Ports, p.Refused)
	}
}

func TestRenderHasEachPortUnderBothNamesAndEachTenantsLimits(t *testing.T) {
	tenants, vnets := fixture()
	p := Build(tenants, vnets, []Guest{
		vm(10101, "tenant-tdemo", "net0", "virtio=BC:24:11:00:01:01,bridge=tn01v0", "ipconfig0", "ip=10.20.129.11/25"),
		vm(10201, "tenant-tother", "net0", "virtio=BC:24:11:00:02:01,bridge=tn02v0", "ipconfig0", "ip=10.20.130.11/24"),
	})
	s := p.Render()
	for _, want := range []string{
		"table bridge deevnet_wire\ndelete table bridge deevnet_wire\ntable bridge deevnet_wire {",
		`"tap10101i0" . bc:24:11:00:01:01 . 10.20.129.11`,
		`"fwpr10101p0" . bc:24:11:00:01:01 . 0.0.0.0`,
		`"tap10201i0" . 10.20.130.11`,
		`"tap10101i0" : goto tenant_tdemo`,
		`"tap10201i0" : goto tenant_tother`,
		"limit tdemo_rate {\n\t\trate over 2500000 bytes/second\n\t}",
		"limit tdemo_broadcast {\n\t\trate over 100/second burst 100 packets\n\t}",
		"type filter hook prerouting priority -300; policy accept;",
		`meta ibrname != "tn*" accept`,
		`iifname . ether saddr != @ports_mac counter name "forged" drop`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("rendered table lacks %q:\n%s", want, s)
		}
	}
	// tother has no rate: its chain accepts what passed the source checks
	if !strings.Contains(s, "chain tenant_tother {\n\t\taccept\n\t}") || strings.Contains(s, "tother_rate") {
		t.Errorf("tother's chain:\n%s", s)
	}
	if Build(tenants, vnets, nil).Render() == "" {
		t.Fatal("an empty plan renders no table: the node must still drop what no port admits")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func hex2(i int) string { return fmt.Sprintf("%02X", i) }

// The node network role ships the skeleton as a file (roles/proxmox_node_network/files): it must be
// exactly what this package renders (regenerate: bin/envelope_guard skeleton > that file).
func TestShippedSkeletonIsTheRenderedOne(t *testing.T) {
	const shipped = "../../roles/proxmox_node_network/files/deevnet-wire.nft"
	if os.Getenv("DEEVNET_GUEST") != "" {
		t.Skip("the guest holds the test binary, not the repository: `go test ./internal/wire` on the host compares the file")
	}
	b, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != Skeleton() {
		t.Fatalf("%s differs from wire.Skeleton(): regenerate it with `go run ./cmd/envelope_guard skeleton > %s`", shipped, strings.TrimPrefix(shipped, "../../"))
	}
}
