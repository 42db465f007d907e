package route

import (
	"strings"
	"testing"
)

// FuzzParseDest: no panic; anything accepted is canonical and round-trips.
func FuzzParseDest(f *testing.F) {
	for _, s := range []string{"default", "default6", "10.20.129.0/24", "10.20.129.5", "::/0", "2001:db8::/32", "fe80::1%eth0", "1.2.3.4/33", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseDest(s)
		if err != nil {
			return
		}
		if p.Masked() != p || p.Addr().Zone() != "" {
			t.Fatalf("ParseDest(%q) = %v: not canonical", s, p)
		}
		q, err := ParseDest(p.String())
		if err != nil || q != p {
			t.Fatalf("round trip of %q: %v, %v", s, q, err)
		}
	})
}

// FuzzRenderHook: whatever passes validation renders to a hook whose value lines carry no
// shell syntax beyond what the template itself writes.
func FuzzRenderHook(f *testing.F) {
	f.Add("default", "100.64.0.1", "tr0", "vrf_tn01", 0, "tr0")
	f.Add("10.20.129.0/24", "", "vrf_tn01", "main", 5, "vmbr0.50")
	f.Add("::/0", "2001:db8::1", "a;b", "1001", 1, "$(x)")
	f.Fuzz(func(t *testing.T, dest, gw, dev, table string, metric int, fwd string) {
		d, err := ParseDest(dest)
		if err != nil {
			return
		}
		g, err := ParseGateway(gw)
		if err != nil {
			return
		}
		cfg := Config{State: Present, Routes: []Route{{Dest: d, Gateway: g, Device: dev, Table: table, Metric: metric}}, Forwarding: []string{fwd}}
		s, err := RenderHook(cfg)
		if err != nil {
			return
		}
		safe := func(v string) bool {
			for _, c := range v {
				alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
				if !alnum && !strings.ContainsRune("_.@-:/| ", c) {
					return false
				}
			}
			return true
		}
		for _, l := range strings.Split(s, "\n") {
			var body string
			switch {
			case strings.HasPrefix(l, "$IP "):
				body = strings.TrimSuffix(strings.TrimPrefix(l, "$IP "), " 2>/dev/null || rc=1")
			case strings.HasPrefix(l, "echo 1 > "):
				body = strings.TrimSuffix(strings.TrimPrefix(l, "echo 1 > "), " 2>/dev/null || rc=1")
			case strings.HasPrefix(l, "  --all"):
				body = strings.TrimSuffix(strings.TrimPrefix(l, "  "), ") ;;")
				if strings.Contains(body, " ") {
					t.Fatalf("case pattern with a space: %q", l)
				}
			default:
				continue
			}
			if !safe(body) {
				t.Fatalf("unsafe hook line %q", l)
			}
		}
	})
}
