package pvesim

import (
	"github.com/deevnet/tenant/internal/pveschema"
	"net/http"
	"strings"
	"testing"
)

// FuzzPropertyString feeds net0/ipconfig0 property strings to the parser and
// the full validator: no panic, and an accepted net0 normalises to a value
// the parser accepts again (what PVE stores must re-parse).
func FuzzPropertyString(f *testing.F) {
	for _, s := range []string{"virtio,bridge=vmbr0", "virtio=BC:24:11:00:00:01,bridge=tn01v0,firewall=1", "model=e1000,tag=5",
		"ip=10.20.129.10/24,gw=10.20.129.1", "gw=1.2.3.4", "virtio,virtio=x", ",,=,", "bridge=a,bridge=b", "ip6=auto,gw6=fe80::1"} {
		f.Add(s)
	}
	sch, err := pveschema.Load()
	if err != nil {
		f.Fatal(err)
	}
	mi := sch.Method("/nodes/{node}/qemu/{vmid}/config", "POST")
	net := mi.Parameters.Lookup("net0")
	srv := &Server{schema: sch, cfg: Config{MACPrefix: "BC:24:11"}}
	srv.resetLocked()
	f.Fuzz(func(t *testing.T, v string) {
		_ = sch.Validate(mi.Parameters, Params{"ipconfig0": v, "net0": v, "nameserver": v, "tags": v})
		fields, err := sch.ParsePropertyString("net0", net.FormatObject(), v)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "format error\n") && !strings.Contains(err.Error(), "duplicate key") && !strings.Contains(err.Error(), "default key") {
				t.Fatalf("unexpected error shape %q", err)
			}
			return
		}
		norm := srv.normalizeNet(fields)
		if _, err := sch.ParsePropertyString("net0", net.FormatObject(), norm); err != nil {
			t.Fatalf("normalised %q (from %q) does not re-parse: %v", norm, v, err)
		}
	})
}

// FuzzRequestParams fuzzes the form/query decoder plus schema validation of a
// zone create: no panic, and every refusal carries a message.
func FuzzRequestParams(f *testing.F) {
	for _, s := range []string{"zone=tn01&type=evpn&controller=c&vrf-vxlan=10001", "zone=&type=simple", "a=1&a=2", "mtu=%ZZ", "zone=tn01+x&type=vlan&bridge=vmbr0", "nodes=a,b;c"} {
		f.Add(s)
	}
	sch, err := pveschema.Load()
	if err != nil {
		f.Fatal(err)
	}
	mi := sch.Method("/cluster/sdn/zones", "POST")
	f.Fuzz(func(t *testing.T, body string) {
		req, err := http.NewRequest("POST", "/x", strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		p, err := parseParams(req)
		if err != nil {
			return
		}
		for k, msg := range sch.Validate(mi.Parameters, p) {
			if msg == "" {
				t.Fatalf("empty error entry %q:%q for %q", k, msg, body)
			}
		}
	})
}
