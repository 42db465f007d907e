package pve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// readCache holds the answers of the GETs made since the last write of one module run, so a
// list read by two steps of the run (planning, then the pending-set check) costs one request.
//
// It never serves state from before a write: every non-GET request, sent or failed, and every
// task wait clears it, and an answer that arrives after a clear that happened while it was in
// flight is not stored (the generation check). Answers are kept as raw JSON and decoded anew
// for each caller, so a caller cannot change what the next one gets.
//
// A GET being sent is a flight: a second caller of the same key waits for its answer instead of
// sending it again, so a prefetch (Prefetch) and the read it prepares cost one request.
type readCache struct {
	mu      sync.Mutex
	gen     uint64
	answers map[string]json.RawMessage
	flights map[string]*flight
	hits    int
}

// flight is one GET in progress; done is closed when it ends, and raw is set (ok) only when its
// answer was stored, i.e. it succeeded with no clear in between.
type flight struct {
	done chan struct{}
	raw  json.RawMessage
	ok   bool
}

func newReadCache() *readCache {
	return &readCache{answers: map[string]json.RawMessage{}, flights: map[string]*flight{}}
}

func (rc *readCache) invalidate() {
	rc.mu.Lock()
	rc.gen++
	clear(rc.answers)
	// A flight of the old generation stores nothing; later callers must not wait for it.
	clear(rc.flights)
	rc.mu.Unlock()
}

// begin looks key up: a stored answer (raw), or a flight to wait for (wait), or neither, and then
// the caller is the new flight (lead), to send the GET and end it with finish.
func (rc *readCache) begin(key string) (raw json.RawMessage, wait, lead *flight, gen uint64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if raw, ok := rc.answers[key]; ok {
		return raw, nil, nil, rc.gen
	}
	if f, ok := rc.flights[key]; ok {
		return nil, f, nil, rc.gen
	}
	f := &flight{done: make(chan struct{})}
	rc.flights[key] = f
	return nil, nil, f, rc.gen
}

// finish ends the flight f of key, begun in generation gen, storing raw when the GET succeeded
// (failed false) and nothing was written since.
func (rc *readCache) finish(key string, gen uint64, f *flight, raw json.RawMessage, failed bool) {
	rc.mu.Lock()
	if !failed && gen == rc.gen {
		rc.answers[key] = raw
		f.raw, f.ok = raw, true
	}
	if rc.flights[key] == f {
		delete(rc.flights, key)
	}
	rc.mu.Unlock()
	close(f.done)
}

// hit counts a GET answered without a request of its own (Prefetch's skips are not counted).
func (rc *readCache) hit() {
	rc.mu.Lock()
	rc.hits++
	rc.mu.Unlock()
}

// cacheable excludes what is expected to change without a write of this run: task status and
// logs, and the simulator's own endpoints.
func cacheable(path string) bool {
	return !strings.Contains(path, "/tasks/") && !strings.HasPrefix(path, "/_sim/")
}

// cachedGet answers a GET from the cache or from the same GET already in flight, or sends it and
// keeps the answer. A flight that stored nothing (it failed, or a write came between) is not
// trusted: the GET is then sent again, so its error is this caller's own, as without the cache.
func (c *Client) cachedGet(ctx context.Context, full, path string, out any) error {
	raw, err := c.cachedRaw(ctx, full, path)
	if err != nil {
		return err
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("GET %s: decoding the answer: %w", path, err)
	}
	return nil
}

func (c *Client) cachedRaw(ctx context.Context, full, path string) (json.RawMessage, error) {
	for {
		cached, wait, lead, gen := c.cache.begin(full)
		switch {
		case wait != nil:
			select {
			case <-wait.done:
			case <-ctx.Done():
				// send reports the cancellation as an uncached GET would
				var fresh json.RawMessage
				err := c.send(ctx, "GET", full, path, nil, &fresh)
				return fresh, err
			}
			if wait.ok {
				c.cache.hit()
				return wait.raw, nil
			}
		case lead == nil:
			c.cache.hit()
			return cached, nil
		default:
			var fresh json.RawMessage
			err := c.send(ctx, "GET", full, path, nil, &fresh)
			c.cache.finish(full, gen, lead, fresh, err != nil)
			return fresh, err
		}
	}
}

// Read is a GET to prefetch: a path relative to /api2/json and its query (may be nil).
type Read struct {
	Path  string
	Query url.Values
}

// prefetchWidth bounds the GETs a Prefetch sends at once: the transport keeps 4 idle
// connections per host, and PVE's API daemons have few workers to share with other clients.
const prefetchWidth = 4

// Prefetch sends reads side by side into the read cache and returns when they have ended, so the
// reads a module makes next, one after another, are answered without a round trip each. A read
// already cached or in flight is not sent again. Errors are dropped: a failed read stores nothing,
// so the module's own read sends it again and reports the error as before; each is tried once,
// the retries are the module's read's. Without CacheReads it does nothing (nothing would keep
// the answers). Only a read the caller is certain to make should be prefetched: any other
// would add a request.
func (c *Client) Prefetch(ctx context.Context, reads ...Read) {
	if c == nil || c.cache == nil {
		return
	}
	sem := make(chan struct{}, prefetchWidth)
	var wg sync.WaitGroup
	for _, r := range reads {
		full, path := requestPath(r.Path, r.Query)
		if !cacheable(path) {
			continue
		}
		_, _, lead, gen := c.cache.begin(full)
		if lead == nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var fresh json.RawMessage
			err := c.api.Req(ctx, http.MethodGet, full, nil, &fresh)
			c.cache.finish(full, gen, lead, fresh, err != nil)
		})
	}
	wg.Wait()
}

// ForgetReads empties the read cache, so the next GET of anything goes to the server: for a
// caller that polls for a change no write of its own makes (a node's reload settling).
func (c *Client) ForgetReads() {
	if c != nil && c.cache != nil {
		c.cache.invalidate()
	}
}

// CacheHits returns how many GETs the read cache answered (0 without CacheReads).
func (c *Client) CacheHits() int {
	if c.cache == nil {
		return 0
	}
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	return c.cache.hits
}
