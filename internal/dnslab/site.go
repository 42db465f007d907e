package dnslab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The site lab is what scripts/dns-lab.sh (cmd/dnslab) starts for playbooks, molecule, the
// demo and the hardware lab: the same servers as the test lab above, but detached (they outlive
// the command, tracked by PID files in the lab directory) and set up the way onboarding sets up a
// site: per tenant its forward and reverse zone and its key, plus the key "substrate" for every
// zone. The environment interface is documented in scripts/dns-lab.sh.

// SiteTenant is a tenant whose zones the site lab creates.
type SiteTenant struct {
	Name  string
	Index int
}

// Zones are the tenant's forward zone under site and its reverse zone (ADR-0002 numbering).
func (t SiteTenant) Zones(site string) []string {
	return []string{t.Name + "." + site, strconv.Itoa(128+t.Index) + ".20.10.in-addr.arpa"}
}

// SiteConfig is the site lab to start. A zero port is a free one.
type SiteConfig struct {
	Dir                     string
	Site                    string
	Tenants                 []SiteTenant
	PDNSPort, APIPort       int
	UnboundPort             int
	BIND                    bool
	BINDPort, BINDStatsPort int
	// Gateway starts the DNS gateway (internal/dnsgate, docs/adr/0017-dns-quota.md) in front of
	// PowerDNS, run as `<this binary> gate`: onboarding then configures each tenant for it.
	Gateway  bool
	GatePort int
	// UnboundInclude is a directory whose *.conf Unbound reads too (made when missing): the
	// snippets onboarding writes (substrate_unbound_conf_dir); SIGHUP to its pid reloads them.
	UnboundInclude string
	Log            io.Writer // progress lines; nil: none
}

// Site lab constants the env file reports.
const (
	siteAPIKey    = "dvt-lab-api-key"
	siteAlgorithm = "hmac-sha256"
	substrateKey  = "substrate"
)

// SiteConfigFromEnv reads the DNS_LAB_* variables scripts/dns-lab.sh documents.
func SiteConfigFromEnv(lookup func(string) (string, bool)) (SiteConfig, error) {
	get := func(k string) string { v, _ := lookup(k); return v }
	c := SiteConfig{Dir: get("DNS_LAB_DIR"), Site: get("DNS_LAB_SITE_ZONE"), BIND: get("DNS_LAB_BIND") == "1", Gateway: get("DNS_LAB_GATEWAY") == "1",
		UnboundInclude: get("DNS_LAB_UNBOUND_INCLUDE")}
	if c.Dir == "" {
		c.Dir = "/tmp/dvt-dns-lab"
	}
	c.Site = siteOrDefault(c.Site)
	tenants, set := lookup("DNS_LAB_TENANTS")
	if !set {
		tenants = "tdemo:1 tother:2"
	}
	for _, f := range strings.Fields(tenants) {
		name, idx, ok := strings.Cut(f, ":")
		i, err := strconv.Atoi(idx)
		if !ok || name == "" || err != nil {
			return c, fmt.Errorf("DNS_LAB_TENANTS: %q is not name:index", f)
		}
		c.Tenants = append(c.Tenants, SiteTenant{Name: name, Index: i})
	}
	for _, p := range []struct {
		env string
		dst *int
	}{
		{"DNS_LAB_PDNS_PORT", &c.PDNSPort}, {"DNS_LAB_API_PORT", &c.APIPort}, {"DNS_LAB_UNBOUND_PORT", &c.UnboundPort},
		{"DNS_LAB_BIND_PORT", &c.BINDPort}, {"DNS_LAB_BIND_STATS_PORT", &c.BINDStatsPort}, {"DNS_LAB_GATE_PORT", &c.GatePort},
	} {
		if v := get(p.env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return c, fmt.Errorf("%s: %q is not a port", p.env, v)
			}
			*p.dst = n
		}
	}
	return c, nil
}

// siteRun is one `up` in progress.
type siteRun struct {
	SiteConfig
	t0       time.Time
	zones    []string // every zone created, forward and reverse
	keys     []Key    // every key, sorted by name
	pdns     *PowerDNS
	unb      *Unbound
	bind     *BIND
	gate     *proc
	gatePort int
	gateDir  string // the gateway's tenant directory
}

func (r *siteRun) say(format string, a ...any) {
	if r.Log != nil {
		_, _ = fmt.Fprintf(r.Log, "dns-lab: %s (+%d ms)\n", fmt.Sprintf(format, a...), time.Since(r.t0).Milliseconds())
	}
}

// SiteMissing names the binaries the site lab needs and lacks, with the packages to install.
func SiteMissing(withBIND bool) error {
	if m := Have("pdns_server", "pdnsutil", "sqlite3", "unbound"); len(m) > 0 {
		return fmt.Errorf("missing %s (apt-get install %s %s)", strings.Join(m, ", "), PDNSPackages, UnboundPackages)
	}
	if m := Have("named", "named-checkconf"); withBIND && len(m) > 0 {
		return fmt.Errorf("missing %s (apt-get install %s)", strings.Join(m, ", "), BINDPackages)
	}
	return nil
}

// SiteUp stops a previous lab in c.Dir, starts PowerDNS, Unbound and (c.BIND) BIND detached,
// creates the zones and keys and writes c.Dir/env (0600). It returns the env file's lines. On an
// error it stops what it started.
func SiteUp(c SiteConfig) ([]string, error) {
	if err := SiteMissing(c.BIND); err != nil {
		return nil, err
	}
	c.Site = siteOrDefault(c.Site)
	SiteDown(c.Dir, c.Log)
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("lab directory: %w", err)
	}
	if err := os.Remove(filepath.Join(c.Dir, "env")); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("old env file: %w", err)
	}
	r := &siteRun{SiteConfig: c, t0: time.Now()}
	env, err := r.up()
	if err != nil {
		SiteDown(c.Dir, c.Log)
		return nil, err
	}
	return env, nil
}

func (r *siteRun) up() ([]string, error) {
	if err := r.pdnsUp(); err != nil {
		return nil, err
	}
	if r.Gateway {
		if err := r.gateUp(); err != nil {
			return nil, err
		}
	}
	if err := r.unboundUp(); err != nil {
		return nil, err
	}
	if r.BIND {
		if err := r.bindUp(); err != nil {
			return nil, err
		}
	}
	return r.writeEnv()
}

// serverDir creates the server's directory below the lab directory.
func (r *siteRun) serverDir(name string) (string, error) {
	d := filepath.Join(r.Dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("%s directory: %w", name, err)
	}
	return d, nil
}

// writePID records a started server for down and status.
func writePID(dir string, p *proc) error {
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(p.PID())+"\n"), 0o644); err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	return nil
}

func (r *siteRun) pdnsUp() error {
	d, err := r.serverDir("pdns")
	if err != nil {
		return err
	}
	r.pdns, err = startPowerDNS(d, pdnsOptions{Port: r.PDNSPort, APIPort: r.APIPort, APIKey: siteAPIKey, Site: r.Site})
	if err != nil {
		return err
	}
	if err := writePID(d, r.pdns.proc); err != nil {
		return err
	}
	r.say("pdns_server started, pid %d", r.pdns.PID())
	if err := r.pdnsZonesAndKeys(); err != nil {
		return err
	}
	r.say("PowerDNS serves %s on %s", strings.Join(r.zones, " "), r.pdns.Addr())
	return nil
}

// pdnsZonesAndKeys creates the key "substrate", and per tenant its key tenant-NAME and its two
// zones, each updatable and transferable by the tenant's key and the substrate's.
func (r *siteRun) pdnsZonesAndKeys() error {
	sub, err := r.pdns.CreateKey(substrateKey, siteAlgorithm)
	if err != nil {
		return err
	}
	r.keys = append(r.keys, sub)
	for _, t := range r.Tenants {
		k, err := r.pdns.CreateKey("tenant-"+t.Name, siteAlgorithm)
		if err != nil {
			return err
		}
		r.keys = append(r.keys, k)
		for _, z := range t.Zones(r.Site) {
			if err := r.pdnsZone(z, k.Name); err != nil {
				return err
			}
		}
	}
	sort.Slice(r.keys, func(i, j int) bool { return r.keys[i].Name < r.keys[j].Name })
	r.say("zones and keys created")
	return nil
}

func (r *siteRun) pdnsZone(zone, key string) error {
	if err := r.pdns.CreateZone(zone); err != nil {
		return err
	}
	if err := r.pdns.AllowUpdate(zone, key, substrateKey); err != nil {
		return err
	}
	if err := r.pdns.AllowAXFR(zone, key, substrateKey); err != nil {
		return err
	}
	r.zones = append(r.zones, zone)
	return waitZone(r.pdns.proc, r.pdns.Port, zone)
}

func (r *siteRun) unboundUp() error {
	d, err := r.serverDir("unbound")
	if err != nil {
		return err
	}
	// the site and the tenants' reverse zones forwarded to PowerDNS (never a referral followed to
	// a tenant's address, docs/adr/0017-dns-quota.md), "." too: nothing is ever asked off this machine
	stubs := []Stub{{Zone: r.Site, Port: r.pdns.Port, Forward: true}, {Zone: "20.10.in-addr.arpa", Port: r.pdns.Port, Forward: true}}
	var includes []string
	if r.UnboundInclude != "" {
		if err := os.MkdirAll(r.UnboundInclude, 0o755); err != nil {
			return fmt.Errorf("unbound include directory: %w", err)
		}
		includes = append(includes, filepath.Join(r.UnboundInclude, "*.conf"))
	}
	r.unb, err = startUnbound(d, r.UnboundPort, stubs, r.pdns.Port, includes...)
	if err != nil {
		return err
	}
	if err := writePID(d, r.unb.proc); err != nil {
		return err
	}
	for _, z := range r.zones {
		if err := waitResolve(r.unb.proc, r.unb.Port, z); err != nil {
			return err
		}
	}
	r.say("Unbound resolves on %s, pid %d", r.unb.Addr(), r.unb.proc.PID())
	return nil
}

// bindUp starts BIND with the same zones, keys and secrets as PowerDNS, so one env file serves both,
// and the site zone, which only the substrate's key may update or transfer (what a tenant's key is
// refused on: tests/adversary probes it).
func (r *siteRun) bindUp() error {
	d, err := r.serverDir("bind")
	if err != nil {
		return err
	}
	zones := []BINDZone{{Name: r.Site, Grants: []string{"grant " + substrateKey + " zonesub ANY;"}, AllowTransfer: "key " + substrateKey + ";"}}
	for _, t := range r.Tenants {
		for i, z := range t.Zones(r.Site) {
			// what BIND can hold a tenant's key to (docs/adr/0017-dns-quota.md): the contract's types,
			// and the default quota as max-records (counting the zone file's SOA and NS)
			types := "A AAAA CNAME TXT MX SRV"
			if i == 1 {
				types = "PTR"
			}
			zones = append(zones, BINDZone{
				Name:          z,
				Grants:        []string{"grant tenant-" + t.Name + " zonesub " + types + ";", "grant " + substrateKey + " zonesub ANY;"},
				AllowTransfer: "key tenant-" + t.Name + "; key " + substrateKey + ";",
				Options:       fmt.Sprintf("max-records %d;", bindMaxRecords),
			})
		}
	}
	r.bind, err = startBIND(d, bindOptions{Port: r.BINDPort, StatsPort: r.BINDStatsPort, Site: r.Site}, r.keys, zones)
	if err != nil {
		return err
	}
	if err := writePID(d, r.bind.proc); err != nil {
		return err
	}
	r.say("BIND serves on %s, pid %d", r.bind.Addr(), r.bind.proc.PID())
	return nil
}

// KeyVar is the env variable of a key's secret: DNS_LAB_KEY_TENANT_TDEMO for tenant-tdemo.
func KeyVar(name string) string {
	return "DNS_LAB_KEY_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// writeEnv writes c.Dir/keys ("algorithm:name:secret" lines) and c.Dir/env, both 0600.
func (r *siteRun) writeEnv() ([]string, error) {
	var keys strings.Builder
	for _, k := range r.keys {
		fmt.Fprintf(&keys, "%s:%s:%s\n", k.Algorithm, k.Name, k.Secret)
	}
	if err := writeFileAtomic(filepath.Join(r.Dir, "keys"), keys.String()); err != nil {
		return nil, err
	}
	gatePort, gateDir := "", ""
	if r.gate != nil {
		gatePort, gateDir = strconv.Itoa(r.gatePort), r.gateDir
	}
	bindPort, bindStats := "", ""
	if r.bind != nil {
		bindPort = strconv.Itoa(r.bind.Port)
		bindStats = "http://127.0.0.1:" + strconv.Itoa(r.bind.StatsPort)
	}
	env := []string{
		"DNS_LAB_DIR=" + r.Dir,
		"DNS_LAB_SERVER=127.0.0.1",
		"DNS_LAB_PDNS_PORT=" + strconv.Itoa(r.pdns.Port),
		"DNS_LAB_API_PORT=" + strconv.Itoa(r.pdns.APIPort),
		"DNS_LAB_API_URL=http://127.0.0.1:" + strconv.Itoa(r.pdns.APIPort) + "/api/v1/servers/localhost",
		"DNS_LAB_API_KEY=" + r.pdns.APIKey,
		"DNS_LAB_UNBOUND_PORT=" + strconv.Itoa(r.unb.Port),
		"DNS_LAB_BIND_PORT=" + bindPort,
		"DNS_LAB_BIND_STATS_URL=" + bindStats,
		"DNS_LAB_SITE_ZONE=" + r.Site,
		"DNS_LAB_GATE_PORT=" + gatePort,
		"DNS_LAB_GATE_DIR=" + gateDir,
		"DNS_LAB_KEY_ALGORITHM=" + siteAlgorithm,
	}
	for _, k := range r.keys {
		env = append(env, KeyVar(k.Name)+"="+k.Secret)
	}
	if err := writeFileAtomic(filepath.Join(r.Dir, "env"), strings.Join(env, "\n")+"\n"); err != nil {
		return nil, err
	}
	return env, nil
}

func writeFileAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// MaskSecrets returns env lines with the secrets (keys, the API key) replaced by where to find
// them: what `up` prints may end up in a CI log.
func MaskSecrets(env []string, dir string) []string {
	out := make([]string, len(env))
	for i, l := range env {
		k, _, _ := strings.Cut(l, "=")
		if k == "DNS_LAB_API_KEY" || (strings.HasPrefix(k, "DNS_LAB_KEY_") && k != "DNS_LAB_KEY_ALGORITHM") {
			l = k + "=<secret: see " + filepath.Join(dir, "env") + ">"
		}
		out[i] = l
	}
	return out
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// the state follows the command name in parentheses, which may itself hold ") "
	s := string(b)
	i := strings.LastIndex(s, ") ")
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func readPID(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s: no pid", file)
	}
	return pid, nil
}

// SiteDown stops the servers a site lab in dir started, by the PIDs in dir/*/pid (SIGTERM, then
// SIGKILL after 5 s), and keeps the files.
func SiteDown(dir string, log io.Writer) {
	var pids []int
	for _, s := range []string{"unbound", "bind", "dnsgate", "pdns"} { // each before what it asks
		f := filepath.Join(dir, s, "pid")
		pid, err := readPID(f)
		_ = os.Remove(f)
		if err == nil && alive(pid) && syscall.Kill(pid, syscall.SIGTERM) == nil {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		for range 250 {
			if !alive(pid) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			if log != nil {
				_, _ = fmt.Fprintf(log, "dns-lab: %d still running, SIGKILL\n", pid)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// SiteStatus writes one line per started server and fails when one has stopped or no lab is there.
func SiteStatus(dir string, w io.Writer) error {
	var bad []string
	for _, s := range []string{"pdns", "dnsgate", "unbound", "bind"} {
		pid, err := readPID(filepath.Join(dir, s, "pid"))
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err == nil && alive(pid):
			_, _ = fmt.Fprintf(w, "%s running (pid %d)\n", s, pid)
		default:
			_, _ = fmt.Fprintf(w, "%s NOT running\n", s)
			bad = append(bad, s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "env")); err != nil {
		_, _ = fmt.Fprintf(w, "no lab in %s\n", dir)
		bad = append(bad, "env")
	}
	if len(bad) > 0 {
		return fmt.Errorf("dns lab in %s: not running: %s", dir, strings.Join(bad, ", "))
	}
	return nil
}

// bindMaxRecords is the site lab BIND's max-records of a tenant zone: the default dns_records
// (roles/substrate's substrate_tenant_envelope) and the zone file's SOA and NS.
const bindMaxRecords = 1000 + 2

// gateKey is the gateway's own key: the only one onboarding lets update a tenant's zones when the
// site runs the gateway.
const gateKey = "dnsgate"

// gateUp starts the DNS gateway in front of PowerDNS with its own key, the substrate's key
// unbound by any quota, and an empty tenant directory onboarding fills.
func (r *siteRun) gateUp() error {
	d, err := r.serverDir("dnsgate")
	if err != nil {
		return err
	}
	k, err := r.pdns.CreateKey(gateKey, siteAlgorithm)
	if err != nil {
		return err
	}
	r.keys = append(r.keys, k)
	sort.Slice(r.keys, func(i, j int) bool { return r.keys[i].Name < r.keys[j].Name })
	var keys strings.Builder
	for _, k := range r.keys {
		if k.Name == gateKey || k.Name == substrateKey {
			fmt.Fprintf(&keys, "%s:%s:%s\n", k.Algorithm, k.Name, k.Secret)
		}
	}
	if err := writeFileAtomic(filepath.Join(d, "keys"), keys.String()); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(d, "api-key"), r.pdns.APIKey+"\n"); err != nil {
		return err
	}
	r.gateDir = filepath.Join(d, "tenants.d")
	if err := os.MkdirAll(r.gateDir, 0o700); err != nil {
		return fmt.Errorf("dnsgate tenants: %w", err)
	}
	r.gatePort = r.GatePort
	if err := freePorts(&r.gatePort); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("dnsgate: %w", err)
	}
	r.gate, err = start("dnsgate", self, []string{"gate",
		"-listen", "127.0.0.1:" + strconv.Itoa(r.gatePort), "-upstream", r.pdns.Addr(),
		"-api-url", "http://127.0.0.1:" + strconv.Itoa(r.pdns.APIPort) + "/api/v1/servers/localhost",
		"-api-key-file", filepath.Join(d, "api-key"), "-keys", filepath.Join(d, "keys"),
		"-forward-key", gateKey, "-substrate-key", substrateKey, "-tenants", r.gateDir,
	}, filepath.Join(d, "dnsgate.log"))
	if err != nil {
		return err
	}
	if err := writePID(d, r.gate); err != nil {
		return err
	}
	if err := waitDNS(r.gate, r.gatePort, "."); err != nil {
		return err
	}
	r.say("DNS gateway on 127.0.0.1:%d in front of PowerDNS, pid %d", r.gatePort, r.gate.PID())
	return nil
}
