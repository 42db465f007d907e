package pvesim

import (
	"context"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"
)

// TestGoProxmoxClient drives the simulator with the go-proxmox client that
// internal/pve wraps, TLS verified against the CA file it wrote.
func TestGoProxmoxClient(t *testing.T) {
	s := startSim(t)
	id, secret := s.RootToken()
	hc := httpClientFor(t, s)
	c := proxmox.NewClient(s.URL()+"/api2/json", proxmox.WithAPIToken(id, secret), proxmox.WithHTTPClient(hc))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	v, err := c.Version(ctx)
	if err != nil || !strings.HasPrefix(v.Version, "9.") {
		t.Fatalf("version %v %v", v, err)
	}
	cl, err := c.Cluster(ctx)
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	if err := cl.NewSDNController(ctx, &proxmox.SDNControllerOptions{Controller: "evpnctl", Type: "evpn", ASN: 65020, Peers: "10.20.255.1"}); err != nil {
		t.Fatalf("controller: %v", err)
	}
	if err := cl.NewSDNZone(ctx, &proxmox.SDNZoneOptions{Name: "tn01", Type: "evpn", Controller: "evpnctl", VRFVXLAN: 10001, MTU: 1450}); err != nil {
		t.Fatalf("zone: %v", err)
	}
	if err := cl.NewSDNVNet(ctx, &proxmox.VNetOptions{Name: "tn01v0", Zone: "tn01", Tag: 20016}); err != nil {
		t.Fatalf("vnet: %v", err)
	}
	if err := c.Post(ctx, "/cluster/sdn/vnets/tn01v0/subnets", map[string]any{"subnet": "10.20.129.0/24", "type": "subnet", "gateway": "10.20.129.1"}, nil); err != nil {
		t.Fatalf("subnet: %v", err)
	}
	zones, err := cl.SDNZones(ctx)
	if err != nil || len(zones) != 1 || zones[0].Name != "tn01" {
		t.Fatalf("zones %v %v", zones, err)
	}
	subnets, err := cl.SDNSubnets(ctx, "tn01v0")
	if err != nil || len(subnets) != 1 || subnets[0].ID != "tn01-10.20.129.0-24" {
		t.Fatalf("subnets %+v %v", subnets, err)
	}
	tok, err := cl.SDNLock(ctx, true)
	if err != nil || tok == "" {
		t.Fatalf("lock %q %v", tok, err)
	}
	if err := cl.SDNReleaseLock(ctx, tok, false); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	task, err := cl.SDNApply(ctx)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if err := task.Wait(ctx, 10*time.Millisecond, 5*time.Second); err != nil || !task.IsSuccessful {
		t.Fatalf("apply task %+v %v", task, err)
	}

	n, err := c.Node(ctx, node)
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	tmpl, err := n.VirtualMachine(ctx, 9000)
	if err != nil {
		t.Fatalf("template: %v", err)
	}
	newid, task, err := tmpl.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 10101, Name: "tdemo-1"})
	if err != nil || newid != 10101 {
		t.Fatalf("clone %d %v", newid, err)
	}
	if err := task.Wait(ctx, 10*time.Millisecond, 5*time.Second); err != nil || !task.IsSuccessful {
		t.Fatalf("clone task %+v %v", task, err)
	}
	vm, err := n.VirtualMachine(ctx, 10101)
	if err != nil || vm.Name != "tdemo-1" {
		t.Fatalf("vm %v %v", vm, err)
	}
	task, err = vm.Config(ctx, proxmox.VirtualMachineOption{Name: "net0", Value: "virtio,bridge=tn01v0"},
		proxmox.VirtualMachineOption{Name: "ipconfig0", Value: "ip=10.20.129.10/24,gw=10.20.129.1"},
		proxmox.VirtualMachineOption{Name: "cores", Value: 4})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if err := task.Wait(ctx, 10*time.Millisecond, 5*time.Second); err != nil || !task.IsSuccessful {
		t.Fatalf("config task %+v %v", task, err)
	}
	if err := vm.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	var cfg map[string]any
	if err := c.Get(ctx, "/nodes/"+node+"/qemu/10101/config", &cfg); err != nil {
		t.Fatalf("config get: %v", err)
	}
	if cfg["cores"] != float64(4) || !strings.Contains(cfg["net0"].(string), "bridge=tn01v0") {
		t.Fatalf("config after update: %v", cfg)
	}
	// errors carry PVE's reason phrase
	err = cl.NewSDNVNet(ctx, &proxmox.VNetOptions{Name: "tn01v1", Zone: "tn01", Tag: 20016})
	if err == nil || !strings.Contains(err.Error(), "create sdn vnet object failed") {
		t.Fatalf("duplicate tag error: %v", err)
	}
}
