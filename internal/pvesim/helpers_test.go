package pvesim

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// client is a tiny PVE API client for tests: form bodies, token auth,
// TLS verified against the simulator's CA file.
type client struct {
	t      testing.TB
	base   string
	auth   string
	hc     *http.Client
	asJSON bool
	// ticket and csrf: a ticket login's cookie and the CSRFPreventionToken its writes carry
	ticket, csrf string
}

type resp struct {
	Status  int
	Reason  string
	Data    json.RawMessage
	Message string
	Errors  map[string]string
}

func startSim(t testing.TB, mut ...func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	for _, m := range mut {
		m(&cfg)
	}
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func httpClientFor(t testing.TB, s *Server) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if s.CAFile() != "" {
		pem, err := os.ReadFile(s.CAFile())
		if err != nil {
			t.Fatalf("read CA: %v", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatal("CA file holds no certificate")
		}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func rootClient(t testing.TB, s *Server) *client {
	id, secret := s.RootToken()
	return tokenClient(t, s, id, secret)
}

func tokenClient(t testing.TB, s *Server, id, secret string) *client {
	return &client{t: t, base: s.URL() + "/api2/json", auth: "PVEAPIToken=" + id + "=" + secret, hc: httpClientFor(t, s)}
}

// anonClient sends no credentials: for the "world" methods (POST /access/ticket).
func anonClient(t testing.TB, s *Server) *client {
	return &client{t: t, base: s.URL() + "/api2/json", hc: httpClientFor(t, s)}
}

// ticketClient logs user in with password (POST /access/ticket) and sends its ticket.
func ticketClient(t testing.TB, s *Server, user, password string) *client {
	t.Helper()
	c := anonClient(t, s)
	var tk struct {
		Ticket string `json:"ticket"`
		CSRF   string `json:"CSRFPreventionToken"`
	}
	c.ok("POST", "/access/ticket", url.Values{"username": {user}, "password": {password}}, &tk)
	c.ticket, c.csrf = tk.Ticket, tk.CSRF
	return c
}

func (c *client) do(method, path string, params url.Values) resp {
	c.t.Helper()
	u := c.base + path
	var body io.Reader
	if method == "GET" || method == "DELETE" {
		if len(params) > 0 {
			u += "?" + params.Encode()
		}
	} else if c.asJSON {
		m := map[string]any{}
		for k, v := range params {
			m[k] = v[0]
		}
		b, _ := json.Marshal(m)
		body = strings.NewReader(string(b))
	} else {
		body = strings.NewReader(params.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		c.t.Fatalf("request: %v", err)
	}
	if body != nil {
		if c.asJSON {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if c.ticket != "" {
		req.AddCookie(&http.Cookie{Name: "PVEAuthCookie", Value: c.ticket})
		if method != "GET" {
			req.Header.Set("CSRFPreventionToken", c.csrf)
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	out := resp{Status: res.StatusCode, Reason: strings.TrimPrefix(res.Status, res.Status[:4])}
	if len(b) > 0 {
		var env struct {
			Data    json.RawMessage   `json:"data"`
			Message string            `json:"message"`
			Errors  map[string]string `json:"errors"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			c.t.Fatalf("%s %s: bad body %q: %v", method, path, b, err)
		}
		out.Data, out.Message, out.Errors = env.Data, env.Message, env.Errors
	}
	return out
}

// ok asserts a 200 and decodes data into v (when not nil).
func (c *client) ok(method, path string, params url.Values, v any) {
	c.t.Helper()
	r := c.do(method, path, params)
	if r.Status != 200 {
		c.t.Fatalf("%s %s %v: status %d %q errors %v", method, path, params, r.Status, r.Message, r.Errors)
	}
	if v != nil {
		// decode into a zero value: json.Unmarshal merges into existing maps
		reflect.ValueOf(v).Elem().Set(reflect.Zero(reflect.ValueOf(v).Elem().Type()))
		if err := json.Unmarshal(r.Data, v); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, r.Data, err)
		}
	}
}

// task runs a call returning a UPID and waits for its exitstatus.
func (c *client) task(method, path string, params url.Values) (string, string) {
	c.t.Helper()
	var upid string
	c.ok(method, path, params, &upid)
	node := strings.Split(upid, ":")[1]
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var st map[string]any
		c.ok("GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status", nil, &st)
		if st["status"] == "stopped" {
			return upid, st["exitstatus"].(string)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("task %s did not finish", upid)
	return "", ""
}

// createVM creates a VM on node from params (its vmid among them), wants the task to end OK,
// and returns the config the simulator stored.
func (c *client) createVM(params url.Values) map[string]any {
	c.t.Helper()
	if _, exit := c.task("POST", "/nodes/"+node+"/qemu", params); exit != "OK" {
		c.t.Fatalf("create vmid %s: %s", params.Get("vmid"), exit)
	}
	var cfg map[string]any
	c.ok("GET", "/nodes/"+node+"/qemu/"+params.Get("vmid")+"/config", nil, &cfg)
	return cfg
}

func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}
