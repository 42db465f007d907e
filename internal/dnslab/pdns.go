package dnslab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/testenv"
)

// PowerDNS is a running pdns_server with the sqlite backend, dnsupdate on and the HTTP API.
type PowerDNS struct {
	Dir     string
	Port    int // DNS, 127.0.0.1
	APIPort int // HTTP API, 127.0.0.1
	APIKey  string
	Site    string // the site zone: ns1.<Site> is every zone's name server
	proc    *proc
	http    *http.Client
}

// PDNSPackages are the Debian packages StartPowerDNS needs.
const PDNSPackages = "pdns-server pdns-backend-sqlite3 sqlite3"

// StartPowerDNS starts PowerDNS for the test and stops it at cleanup.
func StartPowerDNS(t testing.TB) *PowerDNS {
	t.Helper()
	_, err := os.Stat("/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql")
	testenv.Require(t, "pdns-backend-sqlite3 schema", err == nil)
	return startForTest(t, "PowerDNS", PDNSPackages, []string{"pdns_server", "sqlite3"}, func(dir string) (*PowerDNS, error) {
		return startPowerDNS(dir, pdnsOptions{APIKey: "dnslab-api-key"})
	})
}

// pdnsOptions are what the test lab and the site lab (cmd/dnslab) set differently; a zero port
// is a free one, an empty site the seed's.
type pdnsOptions struct {
	Port, APIPort int
	APIKey        string
	Site          string
}

func startPowerDNS(dir string, o pdnsOptions) (*PowerDNS, error) {
	if err := freePorts(&o.Port, &o.APIPort); err != nil {
		return nil, err
	}
	port, apiPort, site := o.Port, o.APIPort, siteOrDefault(o.Site)
	p := &PowerDNS{Dir: dir, Port: port, APIPort: apiPort, APIKey: o.APIKey, Site: site, http: &http.Client{Timeout: 10 * time.Second}}
	db := filepath.Join(dir, "pdns.sqlite3")
	// a lab restarted in the same directory starts from an empty database
	if err := os.Remove(db); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("pdns database: %w", err)
	}
	schema, err := os.ReadFile("/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql")
	if err != nil {
		return nil, fmt.Errorf("pdns schema: %w", err)
	}
	sqlite, _ := lookPath("sqlite3")
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o755); err != nil {
		return nil, fmt.Errorf("pdns directory: %w", err)
	}
	if out, err := runIn(sqlite, []string{db}, schema); err != nil {
		return nil, fmt.Errorf("creating pdns sqlite db: %w: %s", err, out)
	}
	conf := fmt.Sprintf(`launch=gsqlite3
gsqlite3-database=%s
gsqlite3-dnssec=yes
local-address=127.0.0.1:%d
daemon=no
guardian=no
disable-syslog=yes
loglevel=4
socket-dir=%s
# no secpoll lookup: it would resolve through /etc/resolv.conf, off this machine
security-poll-suffix=
# zones created while running answer at once
zone-cache-refresh-interval=0
cache-ttl=0
negquery-cache-ttl=0
query-cache-ttl=0
default-soa-content=ns1.%s. hostmaster.@ 0 10800 3600 604800 3600
dnsupdate=yes
allow-dnsupdate-from=127.0.0.0/8
allow-axfr-ips=127.0.0.0/8
api=yes
api-key=%s
webserver=yes
webserver-address=127.0.0.1
webserver-port=%d
webserver-allow-from=127.0.0.0/8
`, db, port, filepath.Join(dir, "run"), site, p.APIKey, apiPort)
	if err := os.WriteFile(filepath.Join(dir, "pdns.conf"), []byte(conf), 0o600); err != nil {
		return nil, fmt.Errorf("pdns config: %w", err)
	}
	bin, _ := lookPath("pdns_server")
	p.proc, err = start("pdns_server", bin, []string{"--config-dir=" + dir}, filepath.Join(dir, "pdns.log"))
	if err != nil {
		return nil, err
	}
	if err := waitDNS(p.proc, port, "."); err != nil {
		p.Stop()
		return nil, err
	}
	for range 250 {
		if _, err := p.api("GET", "", nil); err == nil {
			return p, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Stop()
	return nil, fmt.Errorf("pdns API on 127.0.0.1:%d not answering; log:\n%s", apiPort, p.proc.tail())
}

// Stop ends the server (by its PID).
func (p *PowerDNS) Stop() {
	if p.proc != nil {
		p.proc.stop()
	}
}

// PID of the server process.
func (p *PowerDNS) PID() int { return p.proc.PID() }

// Log returns the end of the server log.
func (p *PowerDNS) Log() string { return p.proc.tail() }

// Addr is "127.0.0.1:port" of the DNS listener.
func (p *PowerDNS) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.Port) }

func (p *PowerDNS) api(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/servers/localhost%s", p.APIPort, path)
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", p.APIKey)
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("pdns API %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return out, fmt.Errorf("pdns API %s %s: HTTP %d: %s", method, path, resp.StatusCode, out)
	}
	return out, nil
}

// CreateZone creates a native zone with an SOA and one NS record.
func (p *PowerDNS) CreateZone(zone string) error {
	_, err := p.api("POST", "/zones", map[string]any{
		"name": fqdn(zone), "kind": "Native", "nameservers": []string{fqdn("ns1." + p.Site)},
	})
	return err
}

// CreateKey generates a TSIG key on the server and returns it with its secret.
func (p *PowerDNS) CreateKey(name, algorithm string) (Key, error) {
	out, err := p.api("POST", "/tsigkeys", map[string]any{"name": name, "algorithm": algorithm})
	if err != nil {
		return Key{}, err
	}
	var k struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(out, &k); err != nil || k.Key == "" {
		return Key{}, fmt.Errorf("pdns API: no key in tsigkeys reply (%s): %w", out, err)
	}
	return Key{Name: name, Algorithm: algorithm, Secret: k.Key}, nil
}

// SetMeta sets zone metadata, e.g. TSIG-ALLOW-DNSUPDATE or TSIG-ALLOW-AXFR, to the values.
func (p *PowerDNS) SetMeta(zone, kind string, values ...string) error {
	_, err := p.api("PUT", "/zones/"+fqdn(zone)+"/metadata/"+kind, map[string]any{"metadata": values})
	return err
}

// AllowAXFR lets these keys transfer the zone (the API refuses this metadata kind: pdnsutil).
func (p *PowerDNS) AllowAXFR(zone string, keys ...string) error {
	bin, ok := lookPath("pdnsutil")
	if !ok {
		return fmt.Errorf("pdnsutil not found")
	}
	args := append([]string{"--config-dir=" + p.Dir, "set-meta", fqdn(zone), "TSIG-ALLOW-AXFR"}, keys...)
	if out, err := runIn(bin, args, nil); err != nil {
		return fmt.Errorf("pdnsutil set-meta %s TSIG-ALLOW-AXFR: %w: %s", zone, err, out)
	}
	return nil
}

// AllowUpdate lets exactly these keys update the zone (any of them).
func (p *PowerDNS) AllowUpdate(zone string, keys ...string) error {
	return p.SetMeta(zone, "TSIG-ALLOW-DNSUPDATE", keys...)
}

// Stats returns the server's counters (udp-queries, tcp-queries, dnsupdate-queries, ...).
func (p *PowerDNS) Stats() (map[string]int64, error) {
	out, err := p.api("GET", "/statistics", nil)
	if err != nil {
		return nil, err
	}
	var items []struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal(out, &items); err != nil {
		return nil, fmt.Errorf("pdns statistics: %w", err)
	}
	st := map[string]int64{}
	for _, it := range items {
		if s, ok := it.Value.(string); ok && it.Type == "StatisticItem" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err == nil {
				st[it.Name] = n
			}
		}
	}
	return st, nil
}

// Messages is the number of DNS messages the server received (UDP + TCP, v4 and v6).
func Messages(st map[string]int64) int64 {
	return st["udp4-queries"] + st["udp6-queries"] + st["tcp4-queries"] + st["tcp6-queries"]
}

// Lab is the standard tenant setup on one PowerDNS: zones tdemo and tother, the reverse zone
// 129.20.10.in-addr.arpa, and keys tdemo (its zone and the reverse), tother (its zone) and
// rev-10-20-129 (the reverse), exactly as onboarding issues them.
type Lab struct {
	*PowerDNS
	Keys map[string]Key
}

// Standard zone names of the lab.
const (
	ZoneTdemo   = "tdemo.mobile.deevnet.net"
	ZoneTother  = "tother.mobile.deevnet.net"
	ZoneReverse = "129.20.10.in-addr.arpa"
)

// StartLab starts PowerDNS with the standard tenant setup.
func StartLab(t testing.TB) *Lab {
	t.Helper()
	p := StartPowerDNS(t)
	l := &Lab{PowerDNS: p, Keys: map[string]Key{}}
	if err := l.setup(); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *Lab) setup() error {
	for _, z := range []string{ZoneTdemo, ZoneTother, ZoneReverse} {
		if err := l.CreateZone(z); err != nil {
			return err
		}
		if err := waitZone(l.proc, l.Port, z); err != nil {
			return err
		}
	}
	for _, k := range []string{"tdemo", "tother", "rev-10-20-129"} {
		key, err := l.CreateKey(k, "hmac-sha256")
		if err != nil {
			return err
		}
		l.Keys[k] = key
	}
	for zone, keys := range map[string][]string{
		ZoneTdemo:   {"tdemo"},
		ZoneTother:  {"tother"},
		ZoneReverse: {"rev-10-20-129", "tdemo"},
	} {
		if err := l.AllowUpdate(zone, keys...); err != nil {
			return err
		}
		if err := l.AllowAXFR(zone, keys...); err != nil {
			return err
		}
	}
	return nil
}
