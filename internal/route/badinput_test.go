package route

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Every refused input fails naming its field and changes no route, in a throw-away namespace
// with one transit link tr0 (100.64.0.2/24): a valid first route next to a bad second one
// must not be added either.
func TestBadInputChangesNoRoute(t *testing.T) {
	n := newTestNS(t)
	h := n.H
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "tr0"}, PeerName: "tr0p"}); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"tr0", "tr0p"} {
		link, err := h.LinkByName(l)
		if err != nil {
			t.Fatal(err)
		}
		if l == "tr0" {
			if err := h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: net.ParseIP("100.64.0.2"), Mask: net.CIDRMask(24, 32)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.LinkSetUp(link); err != nil {
			t.Fatal(err)
		}
	}
	mod := ModuleWith(n.Mgr)
	routes := func() string {
		rs, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, 0, len(rs))
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%d %v %v %d", r.Table, r.Dst, r.Gw, r.LinkIndex))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	good := map[string]any{"dest": "198.51.100.0/24", "gateway": "100.64.0.1"}
	two := func(bad map[string]any) map[string]any { return map[string]any{"routes": []any{good, bad}} }
	cases := []struct {
		name  string
		args  map[string]any
		field string
	}{
		{"missing VRF", two(map[string]any{"dest": "default", "gateway": "100.64.0.1", "table": "vrf_tn07"}), "routes[1].table"},
		{"table is not a VRF", two(map[string]any{"dest": "default", "gateway": "100.64.0.1", "table": "tr0"}), "routes[1].table"},
		{"reserved table", two(map[string]any{"dest": "default", "device": "tr0", "table": "255"}), "routes[1].table"},
		{"missing device", two(map[string]any{"dest": "default", "device": "vmbr0.50"}), "routes[1].device"},
		{"gateway unreachable", two(map[string]any{"dest": "default", "gateway": "203.0.113.1"}), "routes[1].gateway"},
		{"gateway not an address", two(map[string]any{"dest": "default", "gateway": "100.64.0"}), "routes[1].gateway"},
		{"gateway IPv6 for IPv4", two(map[string]any{"dest": "default", "gateway": "fe80::1", "device": "tr0"}), "routes[1]"},
		{"dest host bits", two(map[string]any{"dest": "10.20.129.5/24", "device": "tr0"}), "routes[1].dest"},
		{"dest not a prefix", two(map[string]any{"dest": "ten/8", "device": "tr0"}), "routes[1].dest"},
		{"no gateway nor device", two(map[string]any{"dest": "default"}), "routes[1]"},
		{"no dest", two(map[string]any{"device": "tr0"}), "dest"},
		{"metric not a number", two(map[string]any{"dest": "default", "device": "tr0", "metric": "low"}), "metric"},
		{"forwarding on a missing interface", map[string]any{"routes": []any{good}, "forwarding": []any{"nope0"}}, "forwarding[0]"},
		{"forwarding path escape", map[string]any{"routes": []any{good}, "forwarding": []any{"../../all"}}, "forwarding[0]"},
		{"state unknown", map[string]any{"routes": []any{good}, "state": "gone"}, "state"},
		{"exclusive with absent", map[string]any{"routes": []any{good}, "state": "absent", "exclusive": true}, "exclusive"},
		{"routes not a list of dicts", map[string]any{"routes": []any{"default via 100.64.0.1"}}, "routes"},
		{"unknown option", map[string]any{"routes": []any{good}, "table": "main"}, "table"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := routes()
			res, code := moduletest.Execute(t, mod, c.args)
			msg, _ := res["msg"].(string)
			if code == 0 || res["failed"] != true {
				t.Fatalf("%v accepted: %v", c.args, res)
			}
			if !strings.Contains(msg, c.field) {
				t.Fatalf("msg %q does not name %q", msg, c.field)
			}
			if after := routes(); after != before {
				t.Fatalf("routes changed on a refusal (%q):\nbefore:\n%s\nafter:\n%s", msg, before, after)
			}
		})
	}
	// The good route alone is accepted: the refusals above were about the bad input.
	if res, code := moduletest.Execute(t, mod, map[string]any{"routes": []any{good}}); code != 0 {
		t.Fatalf("good route: %v", res)
	}
}
