package apigate

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakePVE accepts the tokens it is given (id -> secret) and answers 401 to any other, as PVE does;
// hold, when set, keeps every call until it is closed.
type fakePVE struct {
	tokens map[string]string
	calls  sync.Map // user -> *atomic.Int32
	hold   chan struct{}
}

func (f *fakePVE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, _ := strings.CutPrefix(r.Header.Get("Authorization"), "PVEAPIToken=")
	id, secret, _ := strings.Cut(rest, "=")
	if want, ok := f.tokens[id]; !ok || want != secret {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	user, _, _ := strings.Cut(id, "!")
	n, _ := f.calls.LoadOrStore(user, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
	if f.hold != nil {
		<-f.hold
	}
	_, _ = w.Write([]byte(`{"data":{"version":"9.1"}}`))
}

func (f *fakePVE) served(user string) int {
	n, ok := f.calls.Load(user)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int32).Load())
}

type harness struct {
	pve  *fakePVE
	gate *httptest.Server
	log  *bytes.Buffer
}

const (
	tdemoToken  = "tenant-tdemo@pve!iac=11111111-2222-3333-4444-555555555555"
	totherToken = "tenant-tother@pve!iac=66666666-7777-8888-9999-000000000000"
	rootToken   = "root@pam!sim=aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
)

func newHarness(t *testing.T, edit func(*Config)) *harness {
	t.Helper()
	f := &fakePVE{tokens: map[string]string{}}
	for _, tok := range []string{tdemoToken, totherToken, rootToken} {
		id, secret, _ := strings.Cut(tok, "=")
		f.tokens[id] = secret
	}
	up := httptest.NewTLSServer(f)
	t.Cleanup(up.Close)
	cfg := &Config{Upstream: up.URL,
		Tenants:    Limit{Rate: 10, Burst: 5, Concurrent: 2},
		Others:     Limit{Rate: 1, Burst: 1, Concurrent: 1},
		Unverified: Limit{Rate: 1, Burst: 3, Concurrent: 1},
		Exempt:     []string{"root@pam"}}
	if edit != nil {
		edit(cfg)
	}
	log := &bytes.Buffer{}
	g, err := New(cfg, up.Client().Transport, &syncWriter{w: log})
	if err != nil {
		t.Fatal(err)
	}
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)
	return &harness{pve: f, gate: gs, log: log}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

type answer struct {
	status     int
	retryAfter string
	message    string
}

func (h *harness) call(t *testing.T, token string) answer {
	t.Helper()
	req, _ := http.NewRequest("GET", h.gate.URL+"/api2/json/version", nil)
	if token != "" {
		req.Header.Set("Authorization", "PVEAPIToken="+token)
	}
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return answer{message: err.Error()}
	}
	defer func() { _ = res.Body.Close() }()
	var body struct {
		Message string `json:"message"`
	}
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &body)
	return answer{res.StatusCode, res.Header.Get("Retry-After"), body.Message}
}

// verify makes token known to the gate (its first call is charged as unverified).
func (h *harness) verify(t *testing.T, token string) {
	t.Helper()
	if a := h.call(t, token); a.status != 200 {
		t.Fatalf("first call of %s: %d %s", strings.SplitN(token, "=", 2)[0], a.status, a.message)
	}
}

func TestATenantOverItsRateIsRefusedWithRetryAfter(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Tenants = Limit{Rate: 0.2, Burst: 3, Concurrent: 2} })
	h.verify(t, tdemoToken)
	var refused answer
	ok := 0
	for range 6 {
		if a := h.call(t, tdemoToken); a.status == 200 {
			ok++
		} else {
			refused = a
		}
	}
	if ok != 3 {
		t.Errorf("%d of 6 calls forwarded at burst 3, want 3", ok)
	}
	if refused.status != http.StatusTooManyRequests || refused.retryAfter == "" || refused.retryAfter == "0" ||
		!strings.Contains(refused.message, "tenant tdemo is over its API rate of 0.2 calls a second, burst 3 (rate, burst)") {
		t.Errorf("refusal %+v: want 429, Retry-After and the tenant's limit named", refused)
	}
	if got := h.pve.served("tenant-tdemo@pve"); got != 1+3 {
		t.Errorf("PVE served %d of tdemo's calls, want 4 (the first, then the burst)", got)
	}
}

// A call a little over the rate waits its turn in the gate (at most maxQueue) instead of failing:
// a converge is paced.
func TestACallJustOverTheRateIsPacedNotRefused(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Tenants = Limit{Rate: 10, Burst: 1, Concurrent: 2} })
	h.verify(t, tdemoToken)
	start := time.Now()
	for i := range 4 {
		if a := h.call(t, tdemoToken); a.status != 200 {
			t.Fatalf("call %d: %d %s, want it paced and forwarded", i, a.status, a.message)
		}
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("4 calls at 10/s with burst 1 took %v, want at least 0.3 s (paced)", d)
	}
}

func TestCallsInFlightAreBounded(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Tenants = Limit{Rate: 100, Burst: 100, Concurrent: 2} })
	h.verify(t, tdemoToken)
	h.pve.hold = make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(h.pve.hold) }) }
	t.Cleanup(release) // before the servers close, which wait for the held calls
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); h.call(t, tdemoToken) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.pve.served("tenant-tdemo@pve") < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	a := h.call(t, tdemoToken)
	release()
	wg.Wait()
	if a.status != http.StatusTooManyRequests || !strings.Contains(a.message, "tenant tdemo has 2 API calls in flight, its most (concurrent)") {
		t.Errorf("third call in flight: %+v, want 429 naming concurrent", a)
	}
	if a := h.call(t, tdemoToken); a.status != 200 {
		t.Errorf("after the two finished: %d %s", a.status, a.message)
	}
}

// A caller that forges tother's token id with a wrong secret is charged to its own address, so
// tother keeps its whole allowance; and the forged calls are bounded too.
func TestAForgedTokenIDSpendsOnlyTheForgersAllowance(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Tenants = Limit{Rate: 0.1, Burst: 3, Concurrent: 2}
		c.Unverified = Limit{Rate: 0.1, Burst: 5, Concurrent: 1}
	})
	h.verify(t, totherToken)
	forged := "tenant-tother@pve!iac=00000000-0000-0000-0000-000000000000"
	statuses := map[int]int{}
	for range 20 {
		statuses[h.call(t, forged).status]++
	}
	// The first call of tother (its verify) spent one of the address's 5; 4 forged calls reach PVE.
	if statuses[http.StatusUnauthorized] != 4 || statuses[http.StatusTooManyRequests] != 16 {
		t.Errorf("forged calls: %v, want 4 answered 401 by PVE and 16 refused by the gate", statuses)
	}
	for i := range 3 {
		if a := h.call(t, totherToken); a.status != 200 {
			t.Errorf("tother's call %d after the forgery: %d %s, want its whole burst of 3", i, a.status, a.message)
		}
	}
}

func TestExemptUsersAreNeverLimited(t *testing.T) {
	h := newHarness(t, nil)
	h.verify(t, rootToken)
	for i := range 50 {
		if a := h.call(t, rootToken); a.status != 200 {
			t.Fatalf("root call %d: %d %s", i, a.status, a.message)
		}
	}
}

// A token PVE stops accepting (revoked, rotated) is forgotten: its next calls are unverified.
func TestARevokedTokenIsForgotten(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Unverified = Limit{Rate: 0.1, Burst: 1, Concurrent: 1} })
	h.verify(t, tdemoToken)
	delete(h.pve.tokens, "tenant-tdemo@pve!iac")
	if a := h.call(t, tdemoToken); a.status != http.StatusUnauthorized {
		t.Fatalf("revoked token: %d, want PVE's 401", a.status)
	}
	if a := h.call(t, tdemoToken); a.status != http.StatusTooManyRequests || !strings.Contains(a.message, "unverified 127.0.0.1") {
		t.Errorf("revoked token's next call: %+v, want it charged to the address", a)
	}
}

func TestNoSecretInRefusalsOrLog(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Tenants = Limit{Rate: 0.1, Burst: 1, Concurrent: 1} })
	var seen []string
	for range 5 {
		seen = append(seen, h.call(t, tdemoToken).message, h.call(t, "tenant-tdemo@pve!iac=deadbeef-0000").message)
	}
	out := strings.Join(seen, "\n") + h.log.String()
	for _, secret := range []string{"11111111-2222", "deadbeef"} {
		if strings.Contains(out, secret) {
			t.Fatalf("a secret (%s...) is in the gate's answers or log:\n%s", secret, out)
		}
	}
	if !strings.Contains(h.log.String(), "refused: ") {
		t.Errorf("the refusals are not logged:\n%s", h.log.String())
	}
}

func FuzzCredentialOf(f *testing.F) {
	f.Add("PVEAPIToken=" + tdemoToken)
	f.Add("PVEAPIToken=a!b")
	f.Add("Bearer x")
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", h)
		c, ok := credentialOf(r)
		if r.Header.Get("Authorization") != "" && !ok {
			t.Fatal("a request with an Authorization header has no credential")
		}
		if c.user != "" && (strings.ContainsAny(c.user, "!=") || !strings.Contains(h, c.user)) {
			t.Fatalf("user %q read from %q", c.user, h)
		}
	})
}
