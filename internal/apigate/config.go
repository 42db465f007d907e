package apigate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deevnet/tenant/internal/plan"
)

// Limit bounds one principal's calls: Rate a second on average, Burst at once after a quiet
// spell, and Concurrent in flight (the share of PVE's workers it may hold).
type Limit struct {
	Rate       float64 `yaml:"rate"`
	Burst      int     `yaml:"burst"`
	Concurrent int     `yaml:"concurrent"`
}

// Config is the gate's file.
type Config struct {
	Listen     string `yaml:"listen"`      // host:port the tenants' attachments point at
	Upstream   string `yaml:"upstream"`    // PVE's API, e.g. https://127.0.0.1:8006
	UpstreamCA string `yaml:"upstream_ca"` // PEM that signs the upstream's certificate
	Cert       string `yaml:"cert"`        // the gate's certificate (a node's pve-ssl.pem)
	Key        string `yaml:"key"`         // and its key
	// Tenants binds every tenant's user (tenant-<name>@pve, ADR-0013), Overrides some of them by
	// tenant name, Others every other principal PVE accepts that is not Exempt, and Unverified the
	// calls of one client address whose credential PVE has not accepted yet.
	Tenants    Limit            `yaml:"tenants"`
	Overrides  map[string]Limit `yaml:"overrides"`
	Others     Limit            `yaml:"others"`
	Unverified Limit            `yaml:"unverified"`
	Exempt     []string         `yaml:"exempt"` // users never limited: the substrate's own
}

var userName = regexp.MustCompile(`^[^\s!@:=]+@[A-Za-z][A-Za-z0-9._-]*$`)

// ParseConfig reads the gate's file. An error names the field and the rule.
func ParseConfig(b []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Config) validate() error {
	var errs []error
	for _, f := range []struct{ name, v string }{{"listen", c.Listen}, {"upstream", c.Upstream}, {"cert", c.Cert}, {"key", c.Key}} {
		if strings.TrimSpace(f.v) == "" {
			errs = append(errs, fmt.Errorf("%s: is required", f.name))
		}
	}
	if c.Upstream != "" {
		if u, err := url.Parse(c.Upstream); err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			errs = append(errs, fmt.Errorf("upstream: %q is not https://host:port (PVE's API root, without a path)", c.Upstream))
		}
	}
	errs = append(errs, c.Tenants.check("tenants"), c.Others.check("others"), c.Unverified.check("unverified"))
	names := make([]string, 0, len(c.Overrides))
	for n := range c.Overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !plan.ValidTenantName(n) {
			errs = append(errs, fmt.Errorf("overrides.%s: is not a tenant name (2..20 of a-z, 0-9 and -, a letter first)", n))
			continue
		}
		errs = append(errs, c.Overrides[n].check("overrides."+n))
	}
	for i, u := range c.Exempt {
		if !userName.MatchString(u) {
			errs = append(errs, fmt.Errorf("exempt[%d]: %q is not user@realm", i, u))
		}
	}
	return errors.Join(errs...)
}

func (l Limit) check(field string) error {
	var errs []error
	if !(l.Rate > 0) || math.IsInf(l.Rate, 1) {
		errs = append(errs, fmt.Errorf("%s.rate: %v is not a finite number above 0 (calls a second; 0 would refuse every call)", field, l.Rate))
	}
	if l.Burst < 1 {
		errs = append(errs, fmt.Errorf("%s.burst: %d is below 1", field, l.Burst))
	}
	if l.Concurrent < 1 {
		errs = append(errs, fmt.Errorf("%s.concurrent: %d is below 1", field, l.Concurrent))
	}
	return errors.Join(errs...)
}

// limitFor is the principal's key for user, the limit binding it, and whether it is bound at all.
func (c *Config) limitFor(user string) (string, Limit, bool) {
	for _, e := range c.Exempt {
		if e == user {
			return "", Limit{}, false
		}
	}
	if name, ok := tenantOf(user); ok {
		if l, ok := c.Overrides[name]; ok {
			return "tenant " + name, l, true
		}
		return "tenant " + name, c.Tenants, true
	}
	return "user " + user, c.Others, true
}

// tenantOf is the tenant whose user is user: tenant-<name>@pve (ADR-0013).
func tenantOf(user string) (string, bool) {
	rest, ok := strings.CutPrefix(user, "tenant-")
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, "@pve")
	return name, ok && plan.ValidTenantName(name)
}
