package pve

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a fake PVE that answers each GET with its path and counts the requests per path
// ("GET /a?x=1") and the most it had in flight at once. hold, when set, is called before the
// answer: a test blocks requests there.
type recorder struct {
	mu       sync.Mutex
	requests map[string]int
	inFlight int
	most     int
	hold     func(path string)
}

func newRecorder(t *testing.T, cache bool) (*Client, *recorder) {
	t.Helper()
	rec := &recorder{requests: map[string]int{}}
	c, _ := fakePVE(t, func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/api2/json")
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		rec.mu.Lock()
		rec.requests[key]++
		rec.inFlight++
		rec.most = max(rec.most, rec.inFlight)
		hold := rec.hold
		rec.mu.Unlock()
		defer func() {
			rec.mu.Lock()
			rec.inFlight--
			rec.mu.Unlock()
		}()
		if hold != nil {
			hold(key)
		}
		switch {
		case strings.Contains(key, "/bad"):
			writeErr(w, 500, "bad read", nil)
		case strings.Contains(key, "/busy"):
			writeErr(w, 503, "busy", nil)
		default:
			_, _ = fmt.Fprintf(w, `{"data":{"path":%q,"n":%d}}`, key, rec.count(key))
		}
	})
	if cache {
		c.cache = newReadCache()
	}
	return c, rec
}

func (r *recorder) setHold(h func(key string)) {
	r.mu.Lock()
	r.hold = h
	r.mu.Unlock()
}

func (r *recorder) count(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[key]
}

func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.requests {
		n += c
	}
	return n
}

type answer struct {
	Path string
	N    int
}

func get(t *testing.T, c *Client, path string, q url.Values) answer {
	t.Helper()
	var a answer
	if err := c.Get(context.Background(), path, q, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// waitFor polls cond for up to 5 s.
// prefetching starts a Prefetch of path and returns once its GET has reached the server; the
// channel is closed when the Prefetch returns.
func prefetching(t *testing.T, c *Client, rec *recorder, path string) <-chan struct{} {
	t.Helper()
	pf := make(chan struct{})
	go func() {
		c.Prefetch(context.Background(), Read{Path: path})
		close(pf)
	}()
	waitFor(t, "the prefetch of "+path, func() bool { return rec.count("GET "+path) == 1 })
	return pf
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Prefetch sends its reads side by side, at most prefetchWidth at once, each once; the reads
// that follow are answered from the cache.
func TestPrefetchSendsSideBySide(t *testing.T) {
	c, rec := newRecorder(t, true)
	// Each request waits until prefetchWidth are in flight (or 2 s, and the test fails): only a
	// prefetch that sends them together gets past this quickly.
	full := make(chan struct{})
	var once sync.Once
	rec.setHold(func(string) {
		rec.mu.Lock()
		n := rec.inFlight
		rec.mu.Unlock()
		if n >= prefetchWidth {
			once.Do(func() { close(full) })
		}
		select {
		case <-full:
		case <-time.After(2 * time.Second):
		}
	})
	var reads []Read
	for i := range 6 {
		reads = append(reads, Read{Path: fmt.Sprintf("/r%d", i)})
	}
	reads = append(reads, Read{Path: "r0"}, Read{Path: "/q", Query: url.Values{"pending": {"1"}}})
	start := time.Now()
	c.Prefetch(context.Background(), reads...)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Prefetch took %s: its reads were not sent side by side", d)
	}
	rec.mu.Lock()
	most := rec.most
	rec.mu.Unlock()
	if most != prefetchWidth {
		t.Errorf("at most %d requests in flight, want %d", most, prefetchWidth)
	}
	if n := rec.total(); n != 7 {
		t.Errorf("%d requests for 7 distinct reads: %v", n, rec.requests)
	}
	rec.setHold(nil)
	for i := range 6 {
		if a := get(t, c, fmt.Sprintf("/r%d", i), nil); a.Path != fmt.Sprintf("GET /r%d", i) {
			t.Errorf("read /r%d answered %v", i, a)
		}
	}
	if a := get(t, c, "/q", url.Values{"pending": {"1"}}); a.Path != "GET /q?pending=1" {
		t.Errorf("read /q answered %v", a)
	}
	if n := rec.total(); n != 7 || c.CacheHits() != 7 {
		t.Errorf("after the reads: %d requests, %d cache hits; want 7, 7", n, c.CacheHits())
	}
	if c.Requests() != 7 {
		t.Errorf("client counted %d requests, want 7", c.Requests())
	}
}

// A read already cached, or in flight (another Prefetch's or a module's own read), is not sent
// again; a read that joins a prefetch in flight waits for its answer instead of sending.
func TestPrefetchSendsNoDuplicate(t *testing.T) {
	c, rec := newRecorder(t, true)
	get(t, c, "/cached", nil)
	release := make(chan struct{})
	rec.setHold(func(key string) {
		if key == "GET /slow" {
			<-release
		}
	})
	done := make(chan answer)
	go func() {
		var a answer
		_ = c.Get(context.Background(), "/slow", nil, &a)
		done <- a
	}()
	waitFor(t, "the read of /slow", func() bool { return rec.count("GET /slow") == 1 })
	c.Prefetch(context.Background(), Read{Path: "/cached"}, Read{Path: "/slow"}, Read{Path: "/new"}, Read{Path: "/new"})
	if rec.count("GET /cached") != 1 || rec.count("GET /slow") != 1 || rec.count("GET /new") != 1 {
		t.Errorf("duplicate sends: %v", rec.requests)
	}
	// The other way round: a read joins the prefetch in flight.
	rec.setHold(func(key string) {
		if key == "GET /slow" || key == "GET /slow2" {
			<-release
		}
	})
	pf := prefetching(t, c, rec, "/slow2")
	joined := make(chan answer)
	go func() {
		var a answer
		_ = c.Get(context.Background(), "/slow2", nil, &a)
		joined <- a
	}()
	close(release)
	if a := <-done; a.Path != "GET /slow" {
		t.Errorf("/slow answered %v", a)
	}
	if a := <-joined; a.Path != "GET /slow2" || a.N != 1 {
		t.Errorf("/slow2 answered %v", a)
	}
	<-pf
	if rec.count("GET /slow2") != 1 {
		t.Errorf("the read of /slow2 was sent again beside its prefetch: %v", rec.requests)
	}
}

// A failed prefetch stores nothing: the read sends the GET again, with its retries, and fails
// with the error it fails with without the prefetch. The prefetch itself tries once.
func TestPrefetchErrorsAreNotCached(t *testing.T) {
	c, rec := newRecorder(t, true)
	plain, _ := newRecorder(t, false)
	for _, path := range []string{"/bad", "/busy"} {
		c.Prefetch(context.Background(), Read{Path: path})
		if n := rec.count("GET " + path); n != 1 {
			t.Errorf("prefetch of %s: %d requests, want 1", path, n)
		}
		err := c.Get(context.Background(), path, nil, nil)
		want := plain.Get(context.Background(), path, nil, nil)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("read of %s after a failed prefetch: %v; without the prefetch: %v", path, err, want)
		}
	}
	// 1 prefetch + 1 read; 1 prefetch + 3 tries of a retryable read
	if rec.count("GET /bad") != 2 || rec.count("GET /busy") != 4 {
		t.Errorf("requests: %v", rec.requests)
	}
}

// Without the read cache nothing keeps the answers: Prefetch sends nothing.
func TestPrefetchWithoutCacheIsNoOp(t *testing.T) {
	c, rec := newRecorder(t, false)
	c.Prefetch(context.Background(), Read{Path: "/a"}, Read{Path: "/b"})
	if n := rec.total(); n != 0 || c.Requests() != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// An answer that arrives after a write is not stored, and a read after the write does not wait
// for the prefetch sent before it: it sends its own GET.
func TestPrefetchAnswerAfterWriteIsNotStored(t *testing.T) {
	c, rec := newRecorder(t, true)
	release := make(chan struct{})
	rec.setHold(func(key string) {
		if key == "GET /x" && rec.count(key) == 1 {
			<-release
		}
	})
	pf := prefetching(t, c, rec, "/x")
	if err := c.Post(context.Background(), "/w", nil, nil); err != nil {
		t.Fatal(err)
	}
	if a := get(t, c, "/x", nil); a.N != 2 {
		t.Errorf("read after the write answered %v, want the second request's answer", a)
	}
	close(release)
	<-pf
	if a := get(t, c, "/x", nil); a.N != 2 || rec.count("GET /x") != 2 {
		t.Errorf("after the old prefetch ended: %v from %d requests; want the second answer, cached", a, rec.count("GET /x"))
	}
	// Nor is a prefetch in flight across a write kept.
	release2 := make(chan struct{})
	rec.setHold(func(key string) {
		if key == "GET /y" {
			<-release2
		}
	})
	pf2 := make(chan struct{})
	go func() {
		c.Prefetch(context.Background(), Read{Path: "/y"})
		close(pf2)
	}()
	waitFor(t, "the prefetch of /y", func() bool { return rec.count("GET /y") == 1 })
	c.cache.invalidate()
	close(release2)
	<-pf2
	if a := get(t, c, "/y", nil); a.N != 2 {
		t.Errorf("read of /y answered %v: the prefetch's answer from before the clear was kept", a)
	}
}
