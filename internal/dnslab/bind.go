package dnslab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BINDZone is a primary zone of the lab BIND with its update-policy grants,
// e.g. "grant tdemo zonesub ANY;".
type BINDZone struct {
	Name   string
	Grants []string
	// AllowTransfer is the zone's allow-transfer list, e.g. "key tdemo;" or "none;";
	// "" keeps BIND's default.
	AllowTransfer string
	// Options are more zone statements, e.g. "max-records 1002;" (the DNS quota, docs/adr/0017-dns-quota.md).
	Options string
}

// BIND is a running named (authoritative only: recursion no, notify no, no control channel).
type BIND struct {
	Dir       string
	Port      int
	StatsPort int // statistics channel (HTTP, JSON at /json/v1/server)
	proc      *proc
}

// BINDPackages are the Debian packages StartBIND needs.
const BINDPackages = "bind9"

// StartBIND starts named with the keys and zones and stops it at cleanup.
func StartBIND(t testing.TB, keys []Key, zones []BINDZone) *BIND {
	t.Helper()
	return startForTest(t, "BIND", BINDPackages, []string{"named", "named-checkconf"}, func(dir string) (*BIND, error) {
		return startBIND(dir, bindOptions{}, keys, zones)
	})
}

// bindOptions: a zero port is a free one, an empty site the seed's.
type bindOptions struct {
	Port, StatsPort int
	Site            string
}

func startBIND(dir string, o bindOptions, keys []Key, zones []BINDZone) (*BIND, error) {
	if err := freePorts(&o.Port, &o.StatsPort); err != nil {
		return nil, err
	}
	port, site := o.Port, siteOrDefault(o.Site)
	b := &BIND{Dir: dir, Port: port, StatsPort: o.StatsPort}
	data := filepath.Join(dir, "data")
	// named started as root drops capabilities: its directories must belong to the running uid.
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("bind directory: %w", err)
	}
	var conf bytes.Buffer
	fmt.Fprintf(&conf, `options {
    directory %q;
    pid-file %q;
    session-keyfile %q;
    listen-on port %d { 127.0.0.1; };
    listen-on-v6 { none; };
    recursion no;
    notify no;
    dnssec-validation no;
    allow-query { 127.0.0.0/8; };
};
controls { };
statistics-channels { inet 127.0.0.1 port %d allow { 127.0.0.1; }; };
`, data, filepath.Join(dir, "named.pid"), filepath.Join(dir, "session.key"), port, o.StatsPort)
	for _, k := range keys {
		fmt.Fprintf(&conf, "key %q { algorithm %s; secret %q; };\n", k.Name, k.Algorithm, k.Secret)
	}
	for _, z := range zones {
		zf := filepath.Join(data, z.Name+".zone")
		soa := fmt.Sprintf("$TTL 300\n@ IN SOA ns1.%[1]s. hostmaster.%[1]s. 1 3600 600 86400 60\n@ IN NS ns1.%[1]s.\n", site)
		if z.Name == site { // the name server is in the zone: named loads it only with its address
			soa += "ns1 IN A 127.0.0.1\n"
		}
		if err := os.WriteFile(zf, []byte(soa), 0o644); err != nil {
			return nil, fmt.Errorf("bind zone file: %w", err)
		}
		xfr := ""
		if z.AllowTransfer != "" {
			xfr = " allow-transfer { " + z.AllowTransfer + " };"
		}
		if z.Options != "" {
			xfr += " " + z.Options
		}
		fmt.Fprintf(&conf, "zone %q { type primary; file %q; update-policy { %s };%s };\n", z.Name, zf, strings.Join(z.Grants, " "), xfr)
	}
	cf := filepath.Join(dir, "named.conf")
	if err := os.WriteFile(cf, conf.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("bind config: %w", err)
	}
	chk, _ := lookPath("named-checkconf")
	if out, err := exec.Command(chk, "-z", cf).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("named-checkconf: %w: %s", err, out)
	}
	bin, _ := lookPath("named")
	var err error
	b.proc, err = start("named", bin, []string{"-4", "-g", "-c", cf}, filepath.Join(dir, "named.log"))
	if err != nil {
		return nil, err
	}
	for _, z := range zones {
		if err := waitZone(b.proc, port, z.Name); err != nil {
			b.Stop()
			return nil, err
		}
	}
	return b, nil
}

// Messages returns how many DNS requests named has received (IPv4 and IPv6), from its statistics
// channel: the server's own count, for tests that bound the messages a converge sends.
func (b *BIND) Messages() (int64, error) {
	res, err := http.Get("http://127.0.0.1:" + strconv.Itoa(b.StatsPort) + "/json/v1/server")
	if err != nil {
		return 0, fmt.Errorf("bind statistics: %w", err)
	}
	defer func() { _ = res.Body.Close() }()
	var st struct {
		NSStats map[string]int64 `json:"nsstats"`
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return 0, fmt.Errorf("bind statistics: %w", err)
	}
	return st.NSStats["Requestv4"] + st.NSStats["Requestv6"], nil
}

// Stop ends named (by its PID).
func (b *BIND) Stop() {
	if b.proc != nil {
		b.proc.stop()
	}
}

// Log returns the end of the server log.
func (b *BIND) Log() string { return b.proc.tail() }

// Addr is "127.0.0.1:port".
func (b *BIND) Addr() string { return "127.0.0.1:" + strconv.Itoa(b.Port) }

// runIn runs bin with stdin and returns its combined output.
func runIn(bin string, args []string, stdin []byte) ([]byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	return cmd.CombinedOutput()
}
