package pvesim

import (
	"sync"
	"testing"
	"time"
)

// With PVE's pool of workers, calls beyond it wait: n calls of latency d on w workers take at
// least ceil(n/w)*d. Without the pool they overlap. Only lower bounds are asserted (a loaded
// machine makes calls slower, never faster).
func TestAPIWorkersQueueCalls(t *testing.T) {
	const lat = 60 * time.Millisecond
	elapsed := func(workers int) time.Duration {
		s := startSim(t, func(c *Config) { c.Latency, c.APIWorkers = lat, workers })
		c := rootClient(t, s)
		var wg sync.WaitGroup
		start := time.Now()
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := c.do("GET", "/version", nil); r.Status != 200 {
					t.Errorf("GET /version: %d %s", r.Status, r.Message)
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	if got := elapsed(DefaultAPIWorkers); got < 2*lat {
		t.Errorf("6 calls on 3 workers took %v, want at least %v (two rounds)", got, 2*lat)
	}
	if got := elapsed(1); got < 6*lat {
		t.Errorf("6 calls on 1 worker took %v, want at least %v", got, 6*lat)
	}
}

// The pool counts each user's calls and what they waited: with the only worker held for 150 ms,
// root's call waits at least that long.
func TestAPIWorkersCountWhatEachUserWaited(t *testing.T) {
	s := startSim(t, func(c *Config) { c.APIWorkers = 1 })
	c := rootClient(t, s)
	c.do("GET", "/version", nil) // the connection made, so the next call waits for the worker only
	s.pool.slots <- struct{}{}
	done := make(chan struct{})
	go func() { defer close(done); c.do("GET", "/version", nil) }()
	time.Sleep(150 * time.Millisecond)
	<-s.pool.slots
	<-done
	st := s.APIWorkers()
	if st.Workers != 1 || st.Calls["root@pam"] != 2 {
		t.Fatalf("stats %+v, want 1 worker and 2 calls of root@pam", st)
	}
	if w := st.Waited["root@pam"]; w < 0.15 {
		t.Errorf("root@pam waited %.3f s in all, want at least 0.150 s", w)
	}
}
