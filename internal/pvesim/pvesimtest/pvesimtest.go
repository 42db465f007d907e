// Package pvesimtest holds test helpers shared by the PVE modules' tests.
package pvesimtest

import (
	"net"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/pvesim"
)

// Start runs a simulator with cfg for the test (closed at cleanup) and returns it with a client
// holding its root token: the certificate checked against the simulator's CA, tasks polled every
// 5 ms so that a test waits for a task no longer than the simulator takes.
func Start(t testing.TB, cfg pvesim.Config) (*pvesim.Server, *pve.Client) {
	t.Helper()
	srv, err := pvesim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	id, secret := srv.RootToken()
	root, err := pve.New(pve.Config{Host: srv.Host(), Port: srv.Port(), TokenID: id, TokenSecret: secret,
		ValidateCerts: true, CAPath: srv.CAFile(), PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return srv, root
}

// ReportPerOp reports a benchmark's requests to srv and milliseconds, each per op: call it after
// b.StopTimer, with srv's stats reset before b.ResetTimer.
func ReportPerOp(b *testing.B, srv *pvesim.Server) {
	b.Helper()
	n := 0
	for _, c := range srv.Stats().Requests {
		n += c
	}
	b.ReportMetric(float64(n)/float64(b.N), "requests/op")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// BadConnection is connection options that must fail, and the option the message must name.
type BadConnection struct {
	Name  string
	Args  map[string]any
	Field string
}

// BadConnections are the failures every PVE module must name: a token PVE refuses, an unknown
// token id, a CA that did not sign the server's certificate (another simulator's), a port
// nobody listens on, a user without realm.
func BadConnections(t testing.TB) []BadConnection {
	t.Helper()
	other, err := pvesim.Start(pvesim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return []BadConnection{
		{"bad token", map[string]any{"api_token_secret": "00000000-0000-0000-0000-000000000000"}, "api_token_secret"},
		{"unknown token id", map[string]any{"api_token_id": "nosuch"}, "api_token_id"},
		{"wrong CA", map[string]any{"ca_path": other.CAFile()}, "ca_path"},
		{"unreachable host", map[string]any{"api_port": closed}, "api_port"},
		{"api_user without realm", map[string]any{"api_user": "root"}, "api_user"},
	}
}
