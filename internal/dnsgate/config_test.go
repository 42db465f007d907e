package dnsgate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const goodTenant = "tenant: tdemo\nkey: {name: tenant-tdemo, algorithm: hmac-sha256, secret: c2VjcmV0LXNlY3JldC0x}\n" +
	"zones: [tdemo.mobile.deevnet.net, 129.20.10.in-addr.arpa]\ndns_records: 1000\ndns_updates: 60\n"

func TestParseTenantRules(t *testing.T) {
	if _, err := ParseTenant([]byte(goodTenant)); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		strings.Replace(goodTenant, "dns_records: 1000", "dns_records: 0", 1): "envelope.dns_records 0 must be at least 1",
		strings.Replace(goodTenant, "dns_updates: 60", "dns_updates: 0", 1):   "envelope.dns_updates 0 must be at least 1",
		strings.Replace(goodTenant, "hmac-sha256", "hmac-md4", 1):             `key.algorithm "hmac-md4" is not an HMAC TSIG algorithm`,
		strings.Replace(goodTenant, "zones: [", "zones: [bad..name, ", 1):     `zones: "bad..name" is not a domain name`,
		goodTenant + "extra: 1\n": "not a tenant file",
	}
	for in, want := range cases {
		_, err := ParseTenant([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

func TestLoadDirRefusesSharedZones(t *testing.T) {
	dir := t.TempDir()
	other := strings.NewReplacer("tenant: tdemo", "tenant: tother", "tenant-tdemo", "tenant-tother").Replace(goodTenant)
	for n, c := range map[string]string{"tdemo.yml": goodTenant, "tother.yml": other} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "is tenant tdemo's too") {
		t.Errorf("two tenants on one zone: %v", err)
	}
}

// FuzzParseTenant: no input panics the parser, and no error quotes the input's secret.
func FuzzParseTenant(f *testing.F) {
	f.Add([]byte(goodTenant))
	f.Add([]byte("key: {secret: [c2VjcmV0LXNlY3JldC0x]}\n"))
	f.Add([]byte("tenant: [c2VjcmV0LXNlY3JldC0x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := ParseTenant(b)
		if err != nil && strings.Contains(err.Error(), "c2VjcmV0LXNlY3JldC0x") && strings.Contains(string(b), "secret") {
			t.Fatalf("error quotes the secret: %v", err)
		}
	})
}

func TestParseKeys(t *testing.T) {
	k, err := parseKeys([]byte("hmac-sha256:dnsgate:c2VjcmV0LXNlY3JldC0x\n\nhmac-sha512:substrate:c2VjcmV0LXNlY3JldC0y\n"))
	if err != nil || len(k) != 2 || k["dnsgate"].Secret != "c2VjcmV0LXNlY3JldC0x" || k["substrate"].Algorithm != "hmac-sha512" {
		t.Fatalf("%v %v", k, err)
	}
	_, err = parseKeys([]byte("hmac-sha256:dnsgate:c2VjcmV0LXNlY3JldC0x\nmd5:x:c2VjcmV0LXNlY3JldC0y\n"))
	if err == nil || err.Error() != "line 2: not algorithm:name:secret with an HMAC algorithm" {
		t.Fatalf("bad line: %v", err)
	}
}

// FuzzParseKeys: no input panics the keys parser, and an error is only ever the line's number
// (so it quotes nothing of a secret).
func FuzzParseKeys(f *testing.F) {
	f.Add([]byte("hmac-sha256:dnsgate:c2VjcmV0LXNlY3JldC0x\n"))
	f.Add([]byte("bogus:c2VjcmV0LXNlY3JldC0x\n"))
	only := regexp.MustCompile(`^line [0-9]+: not algorithm:name:secret with an HMAC algorithm$`)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := parseKeys(b); err != nil && !only.MatchString(err.Error()) {
			t.Fatalf("error says more than the line: %v", err)
		}
	})
}
