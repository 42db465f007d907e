package pvesim

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// PVE serves its API with a fixed pool of worker processes: pveproxy and pvedaemon each run
// max_workers => 3 (pve-manager PVE/Service/pveproxy.pm, pvedaemon.pm), and a worker handles one
// API call at a time (its handlers are synchronous Perl). Nothing in /etc/default/pveproxy
// changes that count or limits a caller: every token, the substrate's included, queues for the
// same three. apiPool models that pool so a flood from one token shows what it does to everyone
// else's calls (issue 53, docs/adr/0018-api-gate.md), and keeps how long each user's calls
// waited for a worker. Unset (0 workers), calls are not queued, which keeps the other tests fast.

// DefaultAPIWorkers is pveproxy's max_workers.
const DefaultAPIWorkers = 3

type apiPool struct {
	mu     sync.Mutex
	slots  chan struct{} // nil: calls are not queued
	waited map[string]time.Duration
	calls  map[string]int
}

// APIWorkerStats is GET /_sim/api-workers: the pool's size and, per user (a token's or ticket's,
// "-" for a call without one), its calls and the seconds they waited for a worker.
type APIWorkerStats struct {
	Workers int                `json:"workers"`
	Calls   map[string]int     `json:"calls"`
	Waited  map[string]float64 `json:"waited_seconds"`
}

// SetAPIWorkers makes at most n API calls run at once (0: no limit) and starts the counts again.
// Calls in service keep the slot of the pool they took.
func (s *Server) SetAPIWorkers(n int) error {
	if n < 0 {
		return fmt.Errorf("api_workers: %d is below 0 (0 means unlimited)", n)
	}
	p := &s.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slots = nil
	if n > 0 {
		p.slots = make(chan struct{}, n)
	}
	p.waited, p.calls = map[string]time.Duration{}, map[string]int{}
	return nil
}

// APIWorkers reports the pool and what each user waited.
func (s *Server) APIWorkers() APIWorkerStats {
	p := &s.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	st := APIWorkerStats{Workers: cap(p.slots), Calls: map[string]int{}, Waited: map[string]float64{}}
	users := make([]string, 0, len(p.calls))
	for u := range p.calls {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		st.Calls[u] = p.calls[u]
		st.Waited[u] = p.waited[u].Seconds()
	}
	return st
}

// takeWorker waits for a free worker, as a connection waits in pveproxy's accept queue. It returns
// the release function, or false when the caller gave up first.
func (s *Server) takeWorker(r *http.Request) (func(), bool) {
	p := &s.pool
	p.mu.Lock()
	slots := p.slots
	p.mu.Unlock()
	if slots == nil {
		return func() {}, true
	}
	start := time.Now()
	if !acquire(r.Context(), slots) {
		return nil, false
	}
	user := callerOf(r)
	p.mu.Lock()
	p.calls[user]++
	p.waited[user] += time.Since(start)
	p.mu.Unlock()
	return func() { <-slots }, true
}

func acquire(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// callerOf is the user a call names (not checked: the count is the simulator's, not PVE's).
func callerOf(r *http.Request) string {
	if rest, ok := strings.CutPrefix(r.Header.Get("Authorization"), "PVEAPIToken="); ok {
		if user, _, ok := strings.Cut(rest, "!"); ok && user != "" {
			return user
		}
	}
	if c, err := r.Cookie("PVEAuthCookie"); err == nil {
		if parts := strings.SplitN(c.Value, ":", 3); len(parts) == 3 && parts[0] == "PVE" {
			return parts[1]
		}
	}
	return "-"
}
