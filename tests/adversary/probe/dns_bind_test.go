package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/dnslab"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/testenv"
)

// The DNS probes of make test-adversary against BIND (DNS_LAB_BIND): the site lab of
// scripts/dns-lab.sh with BIND, tenants tdemo and tother, probed with tdemo's key as the lab
// hands it out (a TSIG key made by PowerDNS's API, as onboarding makes it, granted its two zones).
func TestDNSProbesAgainstBIND(t *testing.T) {
	testenv.Require(t, "site lab servers with BIND", dnslab.SiteMissing(true) == nil)
	dir := t.TempDir()
	lab := map[string]string{"DNS_LAB_DIR": dir, "DNS_LAB_BIND": "1", "DNS_LAB_TENANTS": "tdemo:1 tother:2"}
	var stdout, stderr bytes.Buffer
	if rc := dnslab.Main([]string{"up"}, func(k string) (string, bool) { v, ok := lab[k]; return v, ok }, &stdout, &stderr); rc != 0 {
		t.Fatalf("dns-lab up: rc %d\n%s", rc, stderr.String())
	}
	t.Cleanup(func() { dnslab.SiteDown(dir, nil) })
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		vars[k] = v
	}
	port, err := strconv.Atoi(vars["DNS_LAB_BIND_PORT"])
	if err != nil {
		t.Fatalf("DNS_LAB_BIND_PORT %q", vars["DNS_LAB_BIND_PORT"])
	}
	site := plan.DefaultSite()
	if site.Zone != vars["DNS_LAB_SITE_ZONE"] {
		t.Fatalf("the lab's site zone %q is not the plan's %q", vars["DNS_LAB_SITE_ZONE"], site.Zone)
	}
	e := &env{site: site}
	if e.own, err = site.Tenant("tdemo", 1, 2, 1); err != nil {
		t.Fatal(err)
	}
	if e.other, err = site.Tenant("tother", 2, 2, 1); err != nil {
		t.Fatal(err)
	}
	e.att.DNS.Server, e.att.DNS.Port = "127.0.0.1", port
	e.att.DNS.KeyName, e.att.DNS.Algorithm, e.att.DNS.Secret = "tenant-tdemo", vars["DNS_LAB_KEY_ALGORITHM"], vars["DNS_LAB_KEY_TENANT_TDEMO"]
	for _, p := range atBIND(dnsProbes(e)) {
		out, err := e.runDNS(context.Background(), p)
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		if strings.Contains(out, e.att.DNS.Secret) {
			t.Fatalf("%s: the key's secret in the outcome", p.name)
		}
		t.Logf("ok   %s: %s", p.name, out)
	}
}
