package pve

import (
	"context"
	"testing"
	"time"
)

// The per-run read cache: a repeated list read costs one request; every write and every task
// wait makes the next read go to the server again, so no write decision rests on old state.
func TestReadCache(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()
	id, secret := srv.RootToken()
	c, err := New(Config{Host: srv.Host(), Port: srv.Port(), TokenID: id, TokenSecret: secret, ValidateCerts: true,
		CAPath: srv.CAFile(), PollInterval: 5 * time.Millisecond, CacheReads: true})
	if err != nil {
		t.Fatal(err)
	}
	zones := func() []map[string]any {
		t.Helper()
		var rows []map[string]any
		if err := c.Get(ctx, "/cluster/sdn/zones", pendingQuery, &rows); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	reads := func() int { return srv.Stats().Requests["GET /cluster/sdn/zones"] }

	first := zones()
	first = append(first, map[string]any{"zone": "mutated"}) // a caller's change is not seen by the next
	if got := zones(); len(got) != len(first)-1 || reads() != 1 {
		t.Fatalf("repeated read: %d zones, %d requests; want %d zones from 1 request", len(got), reads(), len(first)-1)
	}
	// Another query is another answer.
	var plain []map[string]any
	if err := c.Get(ctx, "/cluster/sdn/zones", nil, &plain); err != nil || reads() != 2 {
		t.Fatalf("a different query was served from the cache (%d requests, %v)", reads(), err)
	}

	// A write: the next read sees it.
	if err := c.Post(ctx, "/cluster/sdn/zones", map[string]any{"zone": "z1", "type": "simple"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := zones(); len(got) != len(first) || reads() != 3 {
		t.Fatalf("after a write: %d zones from %d requests; want the new zone from a new request", len(got), reads())
	}
	// A failed write clears it too: its effect is unknown.
	if err := c.Post(ctx, "/cluster/sdn/zones", map[string]any{"zone": "z1", "type": "simple"}, nil); err == nil {
		t.Fatal("duplicate zone accepted")
	}
	zones()
	if reads() != 4 {
		t.Fatalf("after a failed write: %d requests, want 4", reads())
	}

	// A task wait: what the task changed is read again; the status polls are never cached.
	zones()
	var upid string
	if err := c.Put(ctx, "/cluster/sdn", nil, &upid); err != nil {
		t.Fatal(err)
	}
	zones() // between the commit and the task's end
	if err := c.WaitTask(ctx, upid); err != nil {
		t.Fatal(err)
	}
	zones()
	if reads() != 6 {
		t.Fatalf("around a task: %d requests, want 6", reads())
	}
	// A task's status, read directly, is never served from memory: it changes with no write.
	node, _, _ := ParseUPID(upid)
	for i := 0; i < 2; i++ {
		if err := c.Get(ctx, "/nodes/"+node+"/tasks/"+upid+"/status", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Stats().Requests["GET /nodes/{node}/tasks/{upid}/status"]; n < 3 {
		t.Fatalf("task status read %d times (polls included), want every read sent", n)
	}
	if c.CacheHits() != 2 {
		t.Fatalf("cache hits %d, want 2", c.CacheHits())
	}

	// An error is not kept: the next read asks again.
	if err := c.Get(ctx, "/cluster/sdn/zones/nozone", nil, nil); err == nil {
		t.Fatal("missing zone read without error")
	}
	if err := c.Get(ctx, "/cluster/sdn/zones/nozone", nil, nil); err == nil || srv.Stats().Requests["GET /cluster/sdn/zones/{zone}"] != 2 {
		t.Fatalf("a failed read was cached (%v)", err)
	}
}

// Without CacheReads (tests' own observers) every read goes to the server.
func TestNoReadCacheByDefault(t *testing.T) {
	srv := startSim(t)
	c := simClient(t, srv, "")
	for i := 0; i < 2; i++ {
		if err := c.Get(context.Background(), "/cluster/sdn/zones", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Stats().Requests["GET /cluster/sdn/zones"]; n != 2 || c.CacheHits() != 0 {
		t.Fatalf("%d requests, %d hits; want 2, 0", n, c.CacheHits())
	}
}

var pendingQuery = map[string][]string{"pending": {"1"}}
