package apigate

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Main is the apigate command: with -check it validates the file and exits, else it serves until
// SIGTERM or SIGINT. It returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apigate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "the gate's YAML file (docs/adr/0018-api-gate.md)")
	check := fs.Bool("check", false, "validate the file and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *file == "" {
		_, _ = fmt.Fprintln(stderr, "apigate: -config is required")
		return 2
	}
	b, err := os.ReadFile(*file)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "apigate: -config: %v\n", err)
		return 2
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "apigate: %s: %v\n", *file, err)
		return 2
	}
	if *check {
		_, _ = fmt.Fprintf(stdout, "apigate: %s is valid\n", *file)
		return 0
	}
	srv, ln, err := listen(cfg, stderr)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "apigate: %v\n", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	_, _ = fmt.Fprintf(stdout, "apigate ready listen=%s upstream=%s pid=%d\n", ln.Addr(), cfg.Upstream, os.Getpid())
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			_, _ = fmt.Fprintf(stderr, "apigate: %v\n", err)
			return 1
		}
	case <-sig:
		_ = srv.Close()
	}
	return 0
}

// listen builds the server and its listener from cfg: the gate's certificate, and a transport
// that trusts upstream_ca (else the system's roots) for PVE's.
func listen(cfg *Config, log io.Writer) (*http.Server, net.Listener, error) {
	cert, err := tls.LoadX509KeyPair(cfg.Cert, cfg.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("cert, key: %w", err)
	}
	upTLS := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.UpstreamCA != "" {
		pem, err := os.ReadFile(cfg.UpstreamCA)
		if err != nil {
			return nil, nil, fmt.Errorf("upstream_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("upstream_ca: %s holds no PEM certificate", cfg.UpstreamCA)
		}
		upTLS.RootCAs = pool
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = upTLS
	// pveproxy keeps a connection for 100 requests (keep_alive); the gate holds a few per tenant.
	transport.MaxIdleConnsPerHost = 32
	g, err := New(cfg, transport, log)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           g,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 10 * time.Second,
	}
	return srv, ln, nil
}
