package dnsgate

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Main is the dnsgate command (cmd/dnsgate, and `dnslab gate` in the site lab): it serves
// until SIGTERM or SIGINT and returns the exit code.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("dnsgate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:53", "address to serve on (UDP and TCP)")
	upstream := fs.String("upstream", "", "the authoritative server, host:port")
	apiURL := fs.String("api-url", "", "PowerDNS API, e.g. http://127.0.0.1:8081/api/v1/servers/localhost")
	apiKeyFile := fs.String("api-key-file", "", "file holding the PowerDNS API key")
	keysFile := fs.String("keys", "", `file of "algorithm:name:secret" lines: the forwarding key and the substrate's keys`)
	fwd := fs.String("forward-key", "dnsgate", "the key (in -keys) the gateway signs forwarded updates with")
	var subs list
	fs.Var(&subs, "substrate-key", "a key (in -keys) bound by no tenant's quota (repeatable)")
	dir := fs.String("tenants", "", "directory of the tenants' files (role tenant_dns_zone writes them)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	g, err := configure(*upstream, *apiURL, *apiKeyFile, *keysFile, *fwd, subs, *dir)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "dnsgate: %v\n", err)
		return 2
	}
	g.Log = stderr
	errc := make(chan error, 2)
	for _, n := range []string{"udp", "tcp"} {
		s := g.Server(*listen, n)
		go func() { errc <- s.ListenAndServe() }()
		defer func() { _ = s.Shutdown() }()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	_, _ = fmt.Fprintf(stderr, "dnsgate: serving on %s, forwarding to %s\n", *listen, *upstream)
	select {
	case err := <-errc:
		_, _ = fmt.Fprintf(stderr, "dnsgate: %v\n", err)
		return 1
	case <-sig:
		return 0
	}
}

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func configure(upstream, apiURL, apiKeyFile, keysFile, fwd string, subs []string, dir string) (*Gate, error) {
	var missing []string
	for _, f := range []struct{ name, v string }{{"-upstream", upstream}, {"-api-url", apiURL}, {"-api-key-file", apiKeyFile}, {"-keys", keysFile}, {"-tenants", dir}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s required", strings.Join(missing, ", "))
	}
	apiKey, err := os.ReadFile(apiKeyFile)
	if err != nil {
		return nil, fmt.Errorf("-api-key-file: %w", err)
	}
	keys, err := readKeys(keysFile)
	if err != nil {
		return nil, err
	}
	g := &Gate{
		Upstream:  upstream,
		Reader:    &PowerDNSAPI{URL: apiURL, APIKey: strings.TrimSpace(string(apiKey)), Client: &http.Client{Timeout: 10 * time.Second}},
		TenantDir: dir,
	}
	var ok bool
	if g.Forward, ok = keys[fwd]; !ok {
		return nil, fmt.Errorf("-forward-key %s is not in %s", fwd, keysFile)
	}
	for _, s := range subs {
		k, ok := keys[s]
		if !ok {
			return nil, fmt.Errorf("-substrate-key %s is not in %s", s, keysFile)
		}
		g.Substrate = append(g.Substrate, k)
	}
	if err := g.Load(); err != nil {
		return nil, fmt.Errorf("-tenants: %w", err)
	}
	return g, nil
}

// readKeys reads "algorithm:name:secret" lines (the site lab's keys file); an error names the
// line, never its secret.
func readKeys(file string) (map[string]Key, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-keys: %w", err)
	}
	keys, err := parseKeys(b)
	if err != nil {
		return nil, fmt.Errorf("-keys %s %w", file, err)
	}
	return keys, nil
}

// parseKeys reads the lines of a keys file; an error names the line, never its secret.
func parseKeys(b []byte) (map[string]Key, error) {
	keys := map[string]Key{}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.SplitN(strings.TrimSpace(l), ":", 3)
		if len(f) != 3 || f[1] == "" || f[2] == "" || !knownHMAC(f[0]) {
			return nil, fmt.Errorf("line %d: not algorithm:name:secret with an HMAC algorithm", i+1)
		}
		keys[f[1]] = Key{Algorithm: f[0], Name: f[1], Secret: f[2]}
	}
	return keys, nil
}
