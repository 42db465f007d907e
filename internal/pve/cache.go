package pve

import (
	"context"
	"encoding/json"
	"fmt"
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
type readCache struct {
	mu      sync.Mutex
	gen     uint64
	answers map[string]json.RawMessage
	hits    int
}

func newReadCache() *readCache { return &readCache{answers: map[string]json.RawMessage{}} }

func (rc *readCache) invalidate() {
	rc.mu.Lock()
	rc.gen++
	clear(rc.answers)
	rc.mu.Unlock()
}

func (rc *readCache) lookup(key string) (json.RawMessage, uint64, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	raw, ok := rc.answers[key]
	if ok {
		rc.hits++
	}
	return raw, rc.gen, ok
}

func (rc *readCache) store(key string, gen uint64, raw json.RawMessage) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if gen == rc.gen {
		rc.answers[key] = raw
	}
}

// cacheable excludes what is expected to change without a write of this run: task status and
// logs, and the simulator's own endpoints.
func cacheable(path string) bool {
	return !strings.Contains(path, "/tasks/") && !strings.HasPrefix(path, "/_sim/")
}

// cachedGet answers a GET from the cache, or sends it and keeps the answer.
func (c *Client) cachedGet(ctx context.Context, full, path string, out any) error {
	raw, gen, ok := c.cache.lookup(full)
	if !ok {
		var fresh json.RawMessage
		if err := c.send(ctx, "GET", full, path, nil, &fresh); err != nil {
			return err
		}
		c.cache.store(full, gen, fresh)
		raw = fresh
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("GET %s: decoding the answer: %w", path, err)
	}
	return nil
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
