package pve

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/pvesim"
)

// startSim runs a simulator with the default config for the test, closed at cleanup.
func startSim(t *testing.T) *pvesim.Server {
	t.Helper()
	srv, err := pvesim.Start(pvesim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func simClient(t *testing.T, srv *pvesim.Server, secret string) *Client {
	t.Helper()
	id, s := srv.RootToken()
	if secret == "" {
		secret = s
	}
	c, err := New(Config{Host: srv.Host(), Port: srv.Port(), TokenID: id, TokenSecret: secret, ValidateCerts: true,
		CAPath: srv.CAFile(), RetryBackoff: time.Millisecond, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The client against the simulator: envelope, typed errors for 400/401/500/501, tasks.
func TestAgainstPVESim(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()
	c := simClient(t, srv, "")

	var v struct {
		Version string `json:"version"`
	}
	if err := c.Get(ctx, "/version", nil, &v); err != nil || v.Version == "" {
		t.Fatalf("version: %q %v", v.Version, err)
	}

	// 400 with per-parameter errors (an SDN id over 8 characters).
	err := c.Post(ctx, "/cluster/sdn/zones", map[string]any{"zone": "waytoolongzone", "type": "simple"}, nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Errors["zone"] == "" {
		t.Fatalf("want 400 with errors.zone, got %v", err)
	}
	// 500 with PVE's message (PVE has no 404 for SDN objects).
	err = c.Get(ctx, "/cluster/sdn/zones/nozone", nil, nil)
	if !errors.As(err, &ae) || ae.Status != 500 || !ae.IsNotFound() {
		t.Fatalf("want 500 does not exist, got %v", err)
	}
	// 501 for an unknown path.
	if err := c.Get(ctx, "/no/such/path", nil, nil); !errors.As(err, &ae) || ae.Status != 501 {
		t.Fatalf("want 501, got %v", err)
	}
	// 401 for a wrong secret, and the secret is in no message.
	bad := simClient(t, srv, "00000000-0000-0000-0000-000000000000")
	if err := bad.Get(ctx, "/version", nil, nil); !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("want 401, got %v", err)
	}

	// A worker task: the SDN apply. OK first, then a failed one with its exit status.
	var upid string
	if err := c.Put(ctx, "/cluster/sdn", nil, &upid); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitTask(ctx, upid); err != nil {
		t.Fatalf("apply task: %v", err)
	}
	srv.FailTask(pvesim.TaskFault{Type: "reloadnetworkall", Nth: 1, ExitStatus: "reload failed: boom"})
	if err := c.Put(ctx, "/cluster/sdn", url.Values{}, &upid); err != nil {
		t.Fatal(err)
	}
	err = c.WaitTask(ctx, upid)
	var te *TaskError
	if !errors.As(err, &te) || te.ExitStatus != "reload failed: boom" || !strings.Contains(err.Error(), "reload failed: boom") {
		t.Fatalf("want a TaskError, got %v", err)
	}

	// A transient 503 on a read is retried; a 500 on a write is not.
	srv.InjectFault(pvesim.Fault{Method: "GET", Path: "/version", Nth: 1, Status: 503, Message: "temporarily unavailable"})
	if err := c.Get(ctx, "/version", nil, &v); err != nil {
		t.Fatalf("503 not retried: %v", err)
	}
	srv.ResetStats()
	srv.InjectFault(pvesim.Fault{Method: "POST", Path: "/cluster/sdn/zones", Nth: 1, Status: 500, Message: "create sdn zone object failed: injected"})
	if err := c.Post(ctx, "/cluster/sdn/zones", map[string]any{"zone": "z1", "type": "simple"}, nil); err == nil {
		t.Fatal("injected 500 not reported")
	}
	if n := srv.Stats().Requests["POST /cluster/sdn/zones"]; n != 1 {
		t.Fatalf("a failed write was sent %d times", n)
	}
}
