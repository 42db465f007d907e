package dnsgate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/miekg/dns"
	"gopkg.in/yaml.v3"

	"github.com/deevnet/tenant/internal/dnsquota"
)

// Tenant is one file of the gateway's tenant directory, written by onboarding (role
// tenant_dns_zone, 0600): the tenant's key, its zones and its quota.
type Tenant struct {
	Tenant     string   `yaml:"tenant"`
	Key        Key      `yaml:"key"`
	Zones      []string `yaml:"zones"`
	DNSRecords int      `yaml:"dns_records"`
	DNSUpdates int      `yaml:"dns_updates"`
}

// Quota is the tenant's quota.
func (t Tenant) Quota() dnsquota.Quota {
	return dnsquota.Quota{Records: t.DNSRecords, Updates: t.DNSUpdates}
}

// Config is every tenant by key name and zone.
type Config struct {
	byKey  map[string]*Tenant // canonical key name
	byZone map[string]*Tenant // canonical zone
}

// LoadDir reads every *.yml of dir. A file that does not parse or breaks a rule fails the load,
// naming the file and the field: the gateway then keeps the configuration it had.
func LoadDir(dir string) (*Config, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	c := &Config{byKey: map[string]*Tenant{}, byZone: map[string]*Tenant{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		t, err := ParseTenant(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if err := c.add(t); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return c, nil
}

// ParseTenant reads one tenant file and checks it.
func ParseTenant(b []byte) (*Tenant, error) {
	var t Tenant
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&t); err != nil {
		// yaml's message may quote the file's text, the secret included: say where only
		return nil, errors.New("not a tenant file (tenant, key: {name, algorithm, secret}, zones, dns_records, dns_updates)")
	}
	var errs []string
	if t.Tenant == "" {
		errs = append(errs, "tenant is required")
	}
	if t.Key.Name == "" || t.Key.Secret == "" {
		errs = append(errs, "key.name and key.secret are required")
	}
	if !knownHMAC(t.Key.Algorithm) {
		errs = append(errs, fmt.Sprintf("key.algorithm %q is not an HMAC TSIG algorithm", t.Key.Algorithm))
	}
	if len(t.Zones) == 0 {
		errs = append(errs, "zones must name at least one zone")
	}
	for _, z := range t.Zones {
		if _, ok := dns.IsDomainName(z); !ok {
			errs = append(errs, fmt.Sprintf("zones: %q is not a domain name", z))
		}
	}
	if err := t.Quota().Validate("envelope"); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return &t, nil
}

func knownHMAC(alg string) bool {
	switch dns.CanonicalName(alg) {
	case dns.HmacSHA1, dns.HmacSHA224, dns.HmacSHA256, dns.HmacSHA384, dns.HmacSHA512:
		return true
	}
	return false
}

func (c *Config) add(t *Tenant) error {
	k := dns.CanonicalName(t.Key.Name)
	if o, ok := c.byKey[k]; ok {
		return fmt.Errorf("key %s is tenant %s's too", t.Key.Name, o.Tenant)
	}
	c.byKey[k] = t
	for _, z := range t.Zones {
		z = dns.CanonicalName(z)
		if o, ok := c.byZone[z]; ok {
			return fmt.Errorf("zone %s is tenant %s's too", z, o.Tenant)
		}
		c.byZone[z] = t
	}
	return nil
}

// keys is every tenant key by canonical name.
func (c *Config) keys() map[string]Key {
	m := make(map[string]Key, len(c.byKey))
	for n, t := range c.byKey {
		m[n] = t.Key
	}
	return m
}
