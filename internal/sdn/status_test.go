package sdn

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// A zone pending while its node reloads is asked again at each poll, not answered from the run's
// read cache (which only a write or a task wait clears): the node settles and Unsettled says so
// at once, instead of waiting out Settle and calling a settled node unsettled.
func TestUnsettledPollsPastTheReadCache(t *testing.T) {
	script := filepath.Join(t.TempDir(), "reload")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := pvesim.DefaultConfig()
	cfg.RenderDir, cfg.ReloadCommand = t.TempDir(), script
	srv, _ := pvesimtest.Start(t, cfg)
	id, secret := srv.RootToken()
	c, err := pve.New(pve.Config{Host: srv.Host(), Port: srv.Port(), TokenID: id, TokenSecret: secret,
		ValidateCerts: true, CAPath: srv.CAFile(), CacheReads: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Post(ctx, "/cluster/sdn/zones", map[string]any{"zone": "z1", "type": "simple"}, nil); err != nil {
		t.Fatal(err)
	}
	// the apply's task runs while the nodes reload (a second each); not waited for here
	var upid string
	if err := c.Put(ctx, "/cluster/sdn", map[string]any{}, &upid); err != nil {
		t.Fatal(err)
	}
	const settle = 6 * time.Second
	start := time.Now()
	bad, err := API{C: c, Settle: settle}.Unsettled(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); len(bad) > 0 || took >= settle {
		t.Fatalf("Unsettled after %v: %v; want every zone available once the 1 s reload ended", took.Round(time.Millisecond), bad)
	}
}
