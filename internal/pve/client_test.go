package pve

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakePVE is a minimal TLS server speaking PVE's envelope, for transport-level behaviour that
// pvesim does not make easy to provoke (lost answers, 503s on reads).
func fakePVE(t *testing.T, h http.HandlerFunc) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	c, err := New(Config{Host: u.Hostname(), Port: port, User: "root@pam", TokenID: "sim", TokenSecret: "s3cret",
		ValidateCerts: true, CAPath: ca, RetryBackoff: time.Millisecond, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func writeErr(w http.ResponseWriter, status int, msg string, errs map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"data": nil, "message": msg, "errors": errs})
}

func TestEnvelopeAndAuth(t *testing.T) {
	c, _ := fakePVE(t, func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "PVEAPIToken=root@pam!sim=s3cret" {
			writeErr(w, 401, "No ticket", nil)
			return
		}
		if r.URL.Path != "/api2/json/version" || r.URL.Query().Get("x") != "1" {
			writeErr(w, 501, "Method 'GET "+r.URL.Path+"' not implemented", nil)
			return
		}
		_, _ = w.Write([]byte(`{"data":{"version":"9.1.3","release":"9.1"}}`))
	})
	var v struct{ Version string }
	if err := c.Get(context.Background(), "/version", url.Values{"x": {"1"}}, &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != "9.1.3" {
		t.Fatalf("version = %q", v.Version)
	}
	err := c.Get(context.Background(), "/nope", nil, nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 501 || !strings.Contains(ae.Message, "not implemented") {
		t.Fatalf("want 501 APIError, got %v", err)
	}
}

func TestParameterErrors(t *testing.T) {
	c, _ := fakePVE(t, func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, 400, "Parameter verification failed.\n", map[string]string{"zone": "invalid format - zone ID 'x_y' contains illegal characters\n"})
	})
	err := c.Post(context.Background(), "/cluster/sdn/zones", map[string]any{"zone": "x_y"}, nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Errors["zone"] != "invalid format - zone ID 'x_y' contains illegal characters" {
		t.Fatalf("want 400 with errors.zone, got %#v", err)
	}
	if !strings.Contains(err.Error(), "POST /cluster/sdn/zones") || !strings.Contains(err.Error(), "zone: invalid format") {
		t.Fatalf("error text lacks context: %v", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatal("secret in error")
	}
}

func TestRetriesOnlyWhereSafe(t *testing.T) {
	var gets, posts, puts atomic.Int32
	c, _ := fakePVE(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "GET":
			if gets.Add(1) < 3 {
				writeErr(w, 503, "Service Unavailable", nil)
				return
			}
			_, _ = w.Write([]byte(`{"data":[]}`))
		case "POST":
			posts.Add(1)
			writeErr(w, 500, "create sdn zone object failed: something", nil)
		case "PUT":
			if puts.Add(1) == 1 {
				writeErr(w, 500, "got no worker upid - start worker failed", nil)
				return
			}
			_, _ = w.Write([]byte(`{"data":"UPID:n1:00000001:00000001:00000001:reloadnetworkall::root@pam!sim:"}`))
		}
	})
	ctx := context.Background()
	if err := c.Get(ctx, "/cluster/sdn/zones", nil, nil); err != nil || gets.Load() != 3 {
		t.Fatalf("GET: err=%v attempts=%d, want success on the 3rd", err, gets.Load())
	}
	if err := c.Post(ctx, "/cluster/sdn/zones", url.Values{"zone": {"a1"}}, nil); err == nil || posts.Load() != 1 {
		t.Fatalf("POST 500 must not be retried: err=%v attempts=%d", err, posts.Load())
	}
	var upid string
	if err := c.Put(ctx, "/cluster/sdn", nil, &upid); err != nil || puts.Load() != 2 || !strings.HasPrefix(upid, "UPID:") {
		t.Fatalf("PUT 'got no worker upid' must be retried once: err=%v attempts=%d", err, puts.Load())
	}
	if c.Requests() != 6 {
		t.Fatalf("Requests() = %d, want 6", c.Requests())
	}
}

func TestWaitTask(t *testing.T) {
	var polls atomic.Int32
	c, _ := fakePVE(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/status"):
			st := map[string]any{"status": "running", "type": "reloadnetworkall", "node": "n1"}
			if polls.Add(1) > 2 {
				st["status"] = "stopped"
				if strings.Contains(r.URL.Path, "bad") {
					st["exitstatus"] = "reload failed: frr said no"
				} else {
					st["exitstatus"] = "OK"
				}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": st})
		case strings.HasSuffix(r.URL.Path, "/log"):
			_, _ = w.Write([]byte(`{"data":[{"n":1,"t":"starting"},{"n":2,"t":"frr said no"},{"n":3,"t":"TASK ERROR: reload failed"}]}`))
		default:
			writeErr(w, 501, "not implemented", nil)
		}
	})
	ctx := context.Background()
	if err := c.WaitTask(ctx, "UPID:n1:00000001:00000001:00000001:reloadnetworkall:good:root@pam!sim:"); err != nil {
		t.Fatalf("OK task: %v", err)
	}
	polls.Store(0)
	err := c.WaitTask(ctx, "UPID:n1:00000001:00000001:00000001:reloadnetworkall:bad:root@pam!sim:")
	var te *TaskError
	if !errors.As(err, &te) || te.ExitStatus != "reload failed: frr said no" || len(te.LogTail) != 3 || te.LogTail[2] != "TASK ERROR: reload failed" {
		t.Fatalf("failed task: %#v", err)
	}
	if err := c.WaitTask(ctx, "not-a-upid"); err == nil {
		t.Fatal("malformed UPID accepted")
	}
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no host":    {User: "root@pam", TokenID: "x", TokenSecret: "y"},
		"no realm":   {Host: "h", User: "root", TokenID: "x", TokenSecret: "y"},
		"no secret":  {Host: "h", User: "root@pam", TokenID: "x"},
		"bad port":   {Host: "h", Port: 70000, User: "root@pam", TokenID: "x", TokenSecret: "y"},
		"missing ca": {Host: "h", User: "root@pam", TokenID: "x", TokenSecret: "y", ValidateCerts: true, CAPath: "/nonexistent"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(Config{Host: "h", TokenID: "u@pve!t", TokenSecret: "y"}); err != nil {
		t.Errorf("full token id: %v", err)
	}
}

func TestUntrustedServerRefused(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	c, err := New(Config{Host: u.Hostname(), Port: port, User: "root@pam", TokenID: "sim", TokenSecret: "s", ValidateCerts: true, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), "/version", nil, nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("want a certificate error, got %v", err)
	}
}

// The API gate's 429 is repeated for every method (the gate refused before PVE saw the call), after
// the Retry-After it names; after throttledAttempts the caller gets the gate's message.
func TestThrottledCallsWaitTheirTurn(t *testing.T) {
	var posts, gets atomic.Int32
	c, _ := fakePVE(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "POST":
			if posts.Add(1) < 3 {
				w.Header().Set("Retry-After", "0")
				writeErr(w, 429, "apigate: tenant-tdemo@pve is over its API rate", nil)
				return
			}
			_, _ = w.Write([]byte(`{"data":null}`))
		case "GET":
			gets.Add(1)
			w.Header().Set("Retry-After", "0")
			writeErr(w, 429, "apigate: tenant-tdemo@pve is over its API rate", nil)
		}
	})
	ctx := context.Background()
	if err := c.Post(ctx, "/cluster/sdn/zones", url.Values{"zone": {"a1"}}, nil); err != nil || posts.Load() != 3 {
		t.Fatalf("POST after two 429: err=%v attempts=%d, want success on the 3rd", err, posts.Load())
	}
	err := c.Get(ctx, "/cluster/sdn/zones", nil, nil)
	if err == nil || gets.Load() != throttledAttempts || !strings.Contains(err.Error(), "over its API rate") {
		t.Fatalf("GET always 429: err=%v attempts=%d, want the gate's message after %d", err, gets.Load(), throttledAttempts)
	}
}

func TestRetryAfterIsReadAndCapped(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{{"2", 2 * time.Second}, {"3600", maxThrottleWait}, {"soon", 0}, {"", 0}} {
		res := &http.Response{StatusCode: 429, Status: "429 Too Many Requests", Header: http.Header{"Retry-After": {tc.header}}, Body: io.NopCloser(strings.NewReader(`{"data":null,"message":"x"}`))}
		wait, ok := throttled(apiErrorFrom(res))
		if !ok || wait != tc.want {
			t.Errorf("Retry-After %q: wait %v (throttled %v), want %v", tc.header, wait, ok, tc.want)
		}
	}
}
