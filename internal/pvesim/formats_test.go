package pvesim

import (
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pveschema"
)

func TestPropertyStringAliases(t *testing.T) {
	s, err := pveschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	net := s.Method("/nodes/{node}/qemu/{vmid}/config", "POST").Parameters.Lookup("net31")
	if net == nil || s.Method("/nodes/{node}/qemu/{vmid}/config", "POST").Parameters.Lookup("net32") != nil {
		t.Fatal("net[n] must cover net0..net31 only")
	}
	for in, want := range map[string]string{
		"virtio=bc:24:11:aa:bb:cc,bridge=tenA1,firewall=on":  "virtio=BC:24:11:AA:BB:CC,bridge=tenA1,firewall=1",
		"model=e1000,bridge=vmbr0,macaddr=BC:24:11:00:00:02": "e1000=BC:24:11:00:00:02,bridge=vmbr0",
		"bridge=vmbr0,virtio=BC:24:11:00:00:03,tag=5":        "virtio=BC:24:11:00:00:03,bridge=vmbr0,tag=5",
	} {
		f, err := s.ParsePropertyString("net0", net.FormatObject(), in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		srv := &Server{cfg: Config{MACPrefix: "BC:24:11"}}
		if got := srv.normalizeNet(f); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	if _, err := s.ParsePropertyString("net0", net.FormatObject(), "virtio,e1000=BC:24:11:00:00:01"); err == nil {
		t.Error("two models accepted")
	}
	if _, err := s.ParsePropertyString("net0", net.FormatObject(), "bridge=vmbr0"); err == nil || !strings.Contains(err.Error(), "net0.model: property is missing") {
		t.Errorf("missing model: %v", err)
	}
}
