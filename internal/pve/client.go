package pve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"
)

// Config describes how to reach and authenticate to the API.
type Config struct {
	Host          string        // host name or address, without scheme
	Port          int           // default 8006
	User          string        // user@realm
	TokenID       string        // token name ("iac"), or the full "user@realm!iac"
	TokenSecret   string        // the token's UUID secret
	ValidateCerts bool          // verify the server certificate (against CAPath, else the system roots)
	CAPath        string        // PEM file with the CA (or certificate) that signs the server certificate
	Timeout       time.Duration // per HTTP request; default 30s
	Retries       int           // attempts for a retryable call, first included; default 3
	RetryBackoff  time.Duration // first backoff, doubled per attempt; default 200ms
	PollInterval  time.Duration // first task poll interval, doubled up to 1s; default 100ms
	// CacheReads serves a repeated GET (same path and query) from memory until the next write or
	// task wait (see readCache). Modules turn it on: a Client lives for one module run.
	CacheReads bool
}

// Client talks to one PVE API endpoint. It is safe for concurrent use.
type Client struct {
	api     *proxmox.Client
	baseURL string
	cfg     Config

	mu       sync.Mutex
	requests int // HTTP requests sent, retries included
	cache    *readCache
}

// New builds a client. It sends no request.
func New(cfg Config) (*Client, error) {
	if cfg.Host == "" {
		return nil, errors.New("pve: api_host is required")
	}
	if cfg.Port == 0 {
		cfg.Port = 8006
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("pve: api_port %d is out of range 1..65535", cfg.Port)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Retries <= 0 {
		cfg.Retries = 3
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 200 * time.Millisecond
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 100 * time.Millisecond
	}
	tokenID, err := fullTokenID(cfg.User, cfg.TokenID)
	if err != nil {
		return nil, err
	}
	if cfg.TokenSecret == "" {
		return nil, errors.New("pve: api_token_secret is required")
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if !cfg.ValidateCerts {
		tlsConf.InsecureSkipVerify = true //nolint:gosec // the user asked for validate_certs: false
	} else if cfg.CAPath != "" {
		pem, err := os.ReadFile(cfg.CAPath)
		if err != nil {
			return nil, fmt.Errorf("pve: reading ca_path: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("pve: ca_path %s holds no PEM certificate", cfg.CAPath)
		}
		tlsConf.RootCAs = pool
	}
	c := &Client{cfg: cfg}
	if cfg.CacheReads {
		c.cache = newReadCache()
	}
	base := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tlsConf,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
	hc := &http.Client{Timeout: cfg.Timeout, Transport: &envelopeTransport{base: base, count: c.countRequest}}
	c.baseURL = "https://" + net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)) + "/api2/json"
	c.api = proxmox.NewClient(c.baseURL,
		proxmox.WithHTTPClient(hc),
		proxmox.WithAPIToken(tokenID, cfg.TokenSecret),
		proxmox.WithUserAgent("deevnet.tenant"),
	)
	return c, nil
}

// fullTokenID joins user and token name as PVE wants them ("user@realm!name").
func fullTokenID(user, id string) (string, error) {
	if strings.Contains(id, "!") {
		return id, nil
	}
	if user == "" || id == "" {
		return "", errors.New("pve: api_user and api_token_id are required (token authentication)")
	}
	if !strings.Contains(user, "@") {
		return "", fmt.Errorf("pve: api_user %q must be user@realm", user)
	}
	return user + "!" + id, nil
}

// API returns the underlying go-proxmox client, for the typed calls it gets right.
func (c *Client) API() *proxmox.Client { return c.api }

// BaseURL is the API root, e.g. https://host:8006/api2/json.
func (c *Client) BaseURL() string { return c.baseURL }

// Requests returns how many HTTP requests this client has sent (retries included).
func (c *Client) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

func (c *Client) countRequest() {
	c.mu.Lock()
	c.requests++
	c.mu.Unlock()
}

// envelopeTransport turns every non-2xx answer into an *APIError before go-proxmox sees it:
// go-proxmox reduces a 500 to its status line and a 400 to flat text, and the modules need the
// message and the per-parameter errors. The error reaches the caller wrapped in *url.Error.
type envelopeTransport struct {
	base  http.RoundTripper
	count func()
}

func (t *envelopeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.count()
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return res, nil
	}
	defer func() { _ = res.Body.Close() }()
	return nil, apiErrorFrom(res)
}

// Get reads path (relative to /api2/json) into out (may be nil).
func (c *Client) Get(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, query, nil, out)
}

// Post creates; body is a map[string]any or url.Values (sent as JSON), or nil.
func (c *Client) Post(ctx context.Context, path string, body any, out any) error {
	return c.do(ctx, http.MethodPost, path, nil, body, out)
}

// Put updates; body as for Post.
func (c *Client) Put(ctx context.Context, path string, body any, out any) error {
	return c.do(ctx, http.MethodPut, path, nil, body, out)
}

// Delete removes; PVE takes DELETE parameters in the query string.
func (c *Client) Delete(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, http.MethodDelete, path, query, nil, out)
}

func (c *Client) do(ctx context.Context, method, path string, query url.Values, body any, out any) error {
	full, path := requestPath(path, query)
	payload, err := jsonBody(body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if c.cache != nil {
		if method != http.MethodGet {
			// Whatever the outcome (a lost answer may hide a write that took effect), nothing
			// read before a write is trusted after it.
			defer c.cache.invalidate()
			c.cache.invalidate()
		} else if cacheable(path) {
			return c.cachedGet(ctx, full, path, out)
		}
	}
	return c.send(ctx, method, full, path, payload, out)
}

// requestPath is path with its leading slash, and with its query: the request's URL, relative to
// the API root, and the read cache's key.
func requestPath(path string, query url.Values) (full, clean string) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	full = path
	if len(query) > 0 {
		full += "?" + query.Encode()
	}
	return full, path
}

// send makes the request, repeating it while retryable says so.
func (c *Client) send(ctx context.Context, method, full, path string, payload any, out any) error {
	var err error
	backoff := c.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		switch method {
		case http.MethodPost:
			err = c.api.Post(ctx, full, payload, out)
		case http.MethodPut:
			err = c.api.Put(ctx, full, payload, out)
		default:
			err = c.api.Req(ctx, method, full, nil, out)
		}
		if err == nil {
			return nil
		}
		err = unwrapTransport(err)
		if wait, ok := throttled(err); ok && attempt < throttledAttempts && ctx.Err() == nil {
			// The gate refused the call before PVE saw it, so even a write is repeated, after
			// the wait the gate names.
			if !Sleep(ctx, max(wait, c.cfg.RetryBackoff)) {
				return fmt.Errorf("%s %s: %w", method, path, c.naming(ctx, err))
			}
			continue
		}
		if attempt >= c.cfg.Retries || !retryable(method, err) || ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, c.naming(ctx, err))
		}
		if !Sleep(ctx, backoff) {
			return fmt.Errorf("%s %s: %w", method, path, c.naming(ctx, err))
		}
		backoff *= 2
	}
}

// throttledAttempts bounds the calls made for one request the API gate keeps refusing with 429
// (its rate is per tenant, so a converge waits its turn rather than fail at the first refusal).
const throttledAttempts = 10

// maxThrottleWait caps a Retry-After, so a wrong or hostile header cannot stall a run.
const maxThrottleWait = 10 * time.Second

// throttled reports whether err is the gate's 429, and how long it asks the caller to wait.
func throttled(err error) (time.Duration, bool) {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests {
		return 0, false
	}
	return min(ae.RetryAfter, maxThrottleWait), true
}

// jsonBody converts url.Values to a JSON-able map: go-proxmox marshals the body as JSON, and PVE
// reads a JSON array for a repeated key, so single values become strings and repeated ones arrays.
func jsonBody(body any) (any, error) {
	switch b := body.(type) {
	case nil:
		return nil, nil
	case url.Values:
		m := make(map[string]any, len(b))
		for k, v := range b {
			if len(v) == 1 {
				m[k] = v[0]
			} else {
				m[k] = v
			}
		}
		return m, nil
	case map[string]any:
		return b, nil
	default:
		return nil, fmt.Errorf("unsupported body type %T (want map[string]any or url.Values)", body)
	}
}

// unwrapTransport drops the *url.Error around an *APIError (its text repeats the URL).
func unwrapTransport(err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	return err
}

// retryable decides whether repeating a failed call is safe and useful.
func retryable(method string, err error) bool {
	var ae *APIError
	isAPI := errors.As(err, &ae)
	if method == http.MethodGet {
		if !isAPI {
			return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
		}
		switch ae.Status {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		case http.StatusInternalServerError:
			return ae.Contains("got lock request timeout") || ae.Contains("got no worker upid")
		}
		return false
	}
	// A write may have taken effect even when its answer was lost, so only PVE's own
	// "the worker never started" is repeated.
	return isAPI && ae.Contains("got no worker upid")
}

// naming prefixes a connection failure with the option to fix: a refused token, a certificate
// the CA does not vouch for, a host that does not answer; and a write refused because /etc/pve is
// read-only with what /cluster/status says of quorum (quorumHint). The text never holds the secret.
func (c *Client) naming(ctx context.Context, err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		if ae.Status == http.StatusUnauthorized {
			return fmt.Errorf("api_token_id/api_token_secret: PVE refused the token (wrong id or secret, or the token expired): %w", err)
		}
		return c.quorumHint(ctx, ae.Message, err)
	}
	var unknownCA x509.UnknownAuthorityError
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &unknownCA), errors.As(err, &certErr):
		return fmt.Errorf("ca_path/validate_certs: the certificate of %s is not trusted: %w", c.cfg.Host, err)
	case errors.As(err, &hostErr):
		return fmt.Errorf("api_host: the certificate is not valid for %s: %w", c.cfg.Host, err)
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) || (errors.As(err, &opErr) && opErr.Op == "dial") {
		return fmt.Errorf("api_host/api_port: cannot connect to %s:%d: %w", c.cfg.Host, c.cfg.Port, err)
	}
	return err
}
