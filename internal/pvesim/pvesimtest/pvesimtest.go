// Package pvesimtest holds test helpers shared by the PVE modules' tests.
package pvesimtest

import (
	"maps"
	"net"
	"strings"
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

// BadInput is options that must be refused, and what the message must name (the option, or
// the words of a refusal that names no option).
type BadInput struct {
	Name  string
	Args  map[string]any
	Field string
}

// Bad is a BadInput, for the rows of a table (go vet wants an imported struct's fields keyed).
func Bad(name string, args map[string]any, field string) BadInput {
	return BadInput{Name: name, Args: args, Field: field}
}

// RunFunc runs a module once with args, as a test's helper does (its connection options added),
// and returns the result and the exit code.
type RunFunc func(t testing.TB, args map[string]any) (map[string]any, int)

// Refused runs the module with args and wants a refusal that names field, sent before any write:
// the exit code and the result say failed, and srv counts no write from this run.
func Refused(t testing.TB, srv *pvesim.Server, args map[string]any, field string, run RunFunc) {
	t.Helper()
	srv.ResetStats()
	res, code := run(t, args)
	msg, _ := res["msg"].(string)
	if code == 0 || res["failed"] != true {
		t.Fatalf("%v accepted (exit %d, %d writes): %v", args, code, srv.Stats().Writes, res)
	}
	if !strings.Contains(msg, field) {
		t.Fatalf("%v: msg %q does not name %q", args, msg, field)
	}
	if w := srv.Stats().Writes; w != 0 {
		t.Fatalf("%v: %d write(s) before the refusal %q", args, w, msg)
	}
}

// RefuseAll runs each case as a subtest through Refused, its Args over base; a nil value in Args
// leaves that option of base out.
func RefuseAll(t *testing.T, srv *pvesim.Server, base map[string]any, cases []BadInput, run RunFunc) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			args := maps.Clone(base)
			if args == nil {
				args = map[string]any{}
			}
			for k, v := range c.Args {
				if v == nil {
					delete(args, k)
				} else {
					args[k] = v
				}
			}
			Refused(t, srv, args, c.Field, run)
		})
	}
}

// BadConnections are the failures every PVE module must name: a token PVE refuses, an unknown
// token id, a CA that did not sign the server's certificate (another simulator's), a port
// nobody listens on, a user without realm.
func BadConnections(t testing.TB) []BadInput {
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
	return []BadInput{
		Bad("bad token", map[string]any{"api_token_secret": "00000000-0000-0000-0000-000000000000"}, "api_token_secret"),
		Bad("unknown token id", map[string]any{"api_token_id": "nosuch"}, "api_token_id"),
		Bad("wrong CA", map[string]any{"ca_path": other.CAFile()}, "ca_path"),
		Bad("unreachable host", map[string]any{"api_port": closed}, "api_port"),
		Bad("api_user without realm", map[string]any{"api_user": "root"}, "api_user"),
	}
}
