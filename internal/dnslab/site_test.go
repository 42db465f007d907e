package dnslab

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/testenv"
	"github.com/miekg/dns"
)

func envLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// DNS_LAB_TENANTS unset means the two seed tenants; set but empty means none (onboarding makes them).
func TestSiteConfigFromEnv(t *testing.T) {
	c, err := SiteConfigFromEnv(envLookup(map[string]string{"DNS_LAB_PDNS_PORT": "5300"}))
	if err != nil || len(c.Tenants) != 2 || c.Tenants[1] != (SiteTenant{"tother", 2}) || c.PDNSPort != 5300 ||
		c.Dir != "/tmp/dvt-dns-lab" || c.Site != DefaultSite {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = SiteConfigFromEnv(envLookup(map[string]string{"DNS_LAB_TENANTS": ""}))
	if err != nil || len(c.Tenants) != 0 {
		t.Fatalf("empty tenants: %+v %v", c, err)
	}
	if _, err := SiteConfigFromEnv(envLookup(map[string]string{"DNS_LAB_TENANTS": "tdemo"})); err == nil {
		t.Fatal("tenant without index accepted")
	}
	if got := (SiteTenant{"tdemo", 1}).Zones("s.example"); strings.Join(got, " ") != "tdemo.s.example 129.20.10.in-addr.arpa" {
		t.Fatalf("zones: %v", got)
	}
}

// up starts detached servers that answer for the tenant's zones (through Unbound too), the tenant
// key updates its zone on PowerDNS and BIND and nobody else's, the secrets stay out of what up
// prints, and down stops exactly the PIDs up recorded.
func TestSiteLabUpDown(t *testing.T) {
	testenv.Require(t, "site lab servers", SiteMissing(true) == nil)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	env := map[string]string{"DNS_LAB_DIR": dir, "DNS_LAB_BIND": "1", "DNS_LAB_TENANTS": "tdemo:1 tother:2"}
	if rc := Main([]string{"up"}, envLookup(env), &stdout, &stderr); rc != 0 {
		t.Fatalf("up: rc %d\n%s", rc, stderr.String())
	}
	t.Cleanup(func() { SiteDown(dir, nil) })
	vars := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		vars[k] = v
	}
	secret := vars["DNS_LAB_KEY_TENANT_TDEMO"]
	if secret == "" || vars["DNS_LAB_KEY_SUBSTRATE"] == "" || strings.Contains(stdout.String(), secret) ||
		!strings.Contains(stdout.String(), "DNS_LAB_KEY_TENANT_TDEMO=<secret") {
		t.Fatalf("env %v; printed:\n%s", vars, stdout.String())
	}
	if st, err := os.Stat(filepath.Join(dir, "env")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("env file mode: %v %v", st, err)
	}
	key := map[string]string{"tenant-tdemo.": secret}
	for _, port := range []string{vars["DNS_LAB_PDNS_PORT"], vars["DNS_LAB_BIND_PORT"]} {
		if rc := update(t, port, key, "tdemo.mobile.deevnet.net"); rc != dns.RcodeSuccess {
			t.Fatalf("tdemo's update on port %s: %s", port, dns.RcodeToString[rc])
		}
		if rc := update(t, port, key, "tother.mobile.deevnet.net"); rc != dns.RcodeRefused && rc != dns.RcodeNotAuth {
			t.Fatalf("tdemo's update of tother on port %s: %s, want REFUSED", port, dns.RcodeToString[rc])
		}
	}
	// BIND holds the tenant's key to the contract's types: a delegation is refused
	if rc := updateRR(t, vars["DNS_LAB_BIND_PORT"], key, "tdemo.mobile.deevnet.net", "sub.tdemo.mobile.deevnet.net. 60 IN NS ns.example."); rc != dns.RcodeRefused {
		t.Fatalf("tdemo's delegation on BIND: %s, want REFUSED", dns.RcodeToString[rc])
	}
	m := new(dns.Msg)
	m.SetQuestion("lab.tdemo.mobile.deevnet.net.", dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, "127.0.0.1:"+vars["DNS_LAB_UNBOUND_PORT"])
	if err != nil || len(r.Answer) != 1 {
		t.Fatalf("through Unbound: %v %v", r, err)
	}
	var pids []int
	for _, s := range []string{"pdns", "unbound", "bind"} {
		pid, err := readPID(filepath.Join(dir, s, "pid"))
		if err != nil || !alive(pid) {
			t.Fatalf("%s: pid %d %v", s, pid, err)
		}
		pids = append(pids, pid)
	}
	stdout.Reset()
	if rc := Main([]string{"status"}, envLookup(env), &stdout, &stderr); rc != 0 {
		t.Fatalf("status: %d %s", rc, stdout.String())
	}
	if rc := Main([]string{"down"}, envLookup(env), &stdout, &stderr); rc != 0 {
		t.Fatalf("down: %d", rc)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("pid %d still runs after down", pid)
		}
	}
}

// update adds lab.<zone> A with the key and returns the rcode.
func update(t *testing.T, port string, key map[string]string, zone string) int {
	t.Helper()
	return updateRR(t, port, key, zone, "lab."+zone+". 60 IN A 10.20.129.9")
}

// updateRR adds the record rr to zone with the key and returns the rcode.
func updateRR(t *testing.T, port string, key map[string]string, zone, record string) int {
	t.Helper()
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	rr, err := dns.NewRR(record)
	if err != nil {
		t.Fatal(err)
	}
	m.Insert([]dns.RR{rr})
	for name := range key {
		m.SetTsig(name, dns.HmacSHA256, 300, time.Now().Unix())
	}
	c := &dns.Client{Net: "tcp", Timeout: 2 * time.Second, TsigSecret: key}
	r, _, err := c.Exchange(m, "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("update %s on %s: %v", zone, port, err)
	}
	return r.Rcode
}
