// Package pvesimtest holds test helpers shared by the PVE modules' tests.
package pvesimtest

import (
	"net"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
)

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
