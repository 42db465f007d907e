package sdn

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func dryRun(t *testing.T, e *env, node string) (frr, ifaces *string) {
	t.Helper()
	var out map[string]*string
	if err := e.client().Get(t.Context(), "/cluster/sdn/dry-run", url.Values{"node": {node}}, &out); err != nil {
		t.Fatal(err)
	}
	return out["frr-diff"], out["interfaces-diff"]
}

// A VNet that tenant_vrf stages shows in the node's dry-run interfaces diff
// (diff -b -N -u against the running file, PVE's header lines); with
// nothing pending both diffs are null.
func TestDryRunShowsStagedVNet(t *testing.T) {
	e := newEnv(t)
	setup(t, e)
	must(t, e.vrf(map[string]any{"name": "tdemo", "index": 1, "apply": true}, false), true)
	if frr, ifs := dryRun(t, e, node1); frr != nil || ifs != nil {
		t.Fatalf("nothing pending: want null diffs, got frr %v interfaces %v", deref(frr), deref(ifs))
	}
	r := e.vrf(map[string]any{"name": "tdemo", "index": 1, "vnet_count": 2}, false)
	must(t, r, true)
	frr, ifs := dryRun(t, e, node1)
	if frr != nil {
		t.Errorf("a vnet changes no FRR line, got:\n%s", *frr)
	}
	if ifs == nil {
		t.Fatal("interfaces-diff is null after staging a vnet")
	}
	d := *ifs
	head := regexp.MustCompile(`^--- /etc/network/interfaces\.d/sdn\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} [+-]\d{4}\n\+\+\+ /proc/\d+/fd/\d+\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} [+-]\d{4}\n@@ `)
	if !head.MatchString(d) {
		t.Errorf("header lines:\n%s", d)
	}
	for _, want := range []string{"\n+auto tn01v1\n+iface tn01v1\n", "\n+auto vxlan_tn01v1\n+iface vxlan_tn01v1\n", "\n+\tvrf vrf_tn01\n"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
