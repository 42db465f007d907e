package pvesimtest

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pve"
)

// Call is one recorded API request of another tool (tests/takeover/*.json): what made it, and
// the request as that tool sent it.
type Call struct {
	What   string            `json:"what"`
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Params map[string]string `json:"params"`
}

// Replay sends the calls recorded in file through c, in order, waiting for each task a call
// starts: the state another tool left, built by that tool's own requests.
func Replay(t testing.TB, c *pve.Client, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Calls []Call `json:"calls"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	ctx := context.Background()
	for i, call := range rec.Calls {
		body := map[string]any{}
		for k, v := range call.Params {
			body[k] = v
		}
		var out any
		switch call.Method {
		case "POST":
			err = c.Post(ctx, call.Path, body, &out)
		case "PUT":
			err = c.Put(ctx, call.Path, body, &out)
		default:
			t.Fatalf("%s: calls[%d]: method %s is not replayed", file, i, call.Method)
		}
		if err == nil {
			if upid, ok := out.(string); ok && strings.HasPrefix(upid, "UPID:") {
				err = c.WaitTask(ctx, upid)
			}
		}
		if err != nil {
			t.Fatalf("%s: calls[%d] (%s) %s %s: %v", file, i, call.What, call.Method, call.Path, err)
		}
	}
}
