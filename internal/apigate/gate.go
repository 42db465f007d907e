package apigate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxQueue is how long a call waits in the gate for one of its principal's in-flight slots, and
// then for its rate, before it is refused: an honest converge is paced, not failed, while a flood
// is refused within a second or two.
const maxQueue = time.Second

// maxVerified bounds the credentials remembered as accepted by PVE; past it the memory starts
// again (each credential's next call is then charged as unverified once more).
const maxVerified = 4096

// maxBuckets bounds the allowances kept; past it those of client addresses are dropped.
const maxBuckets = 4096

const unverifiedKey = "unverified "

// Gate is the API gate: an http.Handler forwarding to PVE's API.
type Gate struct {
	cfg   *Config
	proxy *httputil.ReverseProxy
	log   io.Writer
	now   func() time.Time

	mu       sync.Mutex
	verified map[[sha256.Size]byte]string // credential digest -> user, once PVE accepted it
	buckets  map[string]*bucket           // principal key -> its allowance
	refused  map[string]time.Time         // principal key -> last refusal logged
}

// bucket is one principal's allowance: a token bucket for the rate and a semaphore for calls in
// flight.
type bucket struct {
	limit    Limit
	rate     *rate.Limiter
	inFlight chan struct{}
}

// New builds a gate forwarding to cfg.Upstream through transport (nil: http.DefaultTransport).
// Refusals are logged to log, one line per principal every 10 s at most, never with a secret.
func New(cfg *Config, transport http.RoundTripper, log io.Writer) (*Gate, error) {
	up, err := url.Parse(cfg.Upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	if log == nil {
		log = io.Discard
	}
	g := &Gate{cfg: cfg, log: log, now: time.Now,
		verified: map[[sha256.Size]byte]string{}, buckets: map[string]*bucket{}, refused: map[string]time.Time{}}
	g.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			pr.SetXForwarded()
		},
		Transport:      transport,
		ModifyResponse: g.learn,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// pveproxy's own word for an upstream it cannot reach.
			g.logf("upstream: %s %s: %v", r.Method, r.URL.Path, err)
			writeError(w, http.StatusBadGateway, "apigate: PVE's API did not answer", 0)
		},
	}
	return g, nil
}

type ctxKey struct{}

// ServeHTTP charges the call to its principal and forwards it, or refuses it with 429.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cred, hasCred := credentialOf(r)
	key, limit, bound := g.principal(r, cred, hasCred)
	if bound {
		b := g.bucket(key, limit)
		queued := time.NewTimer(maxQueue)
		select {
		case b.inFlight <- struct{}{}:
			queued.Stop()
			defer func() { <-b.inFlight }()
		case <-queued.C:
			g.refuse(w, key, fmt.Sprintf("%s has %d API calls in flight, its most (concurrent)", key, limit.Concurrent), time.Second)
			return
		case <-r.Context().Done():
			queued.Stop()
			return
		}
		res := b.rate.ReserveN(g.now(), 1)
		if d := res.DelayFrom(g.now()); d > maxQueue {
			res.CancelAt(g.now())
			g.refuse(w, key, fmt.Sprintf("%s is over its API rate of %g calls a second, burst %d (rate, burst)", key, limit.Rate, limit.Burst), d)
			return
		} else if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				res.CancelAt(g.now())
				return
			}
		}
	}
	if hasCred {
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, cred))
	}
	g.proxy.ServeHTTP(w, r)
}

// principal is who pays for r: the user of a credential PVE has accepted, else the client's
// address. bound is false for an exempt user.
func (g *Gate) principal(r *http.Request, cred credential, hasCred bool) (string, Limit, bool) {
	if hasCred {
		g.mu.Lock()
		user, ok := g.verified[cred.digest]
		g.mu.Unlock()
		if ok {
			return g.cfg.limitFor(user)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return unverifiedKey + host, g.cfg.Unverified, true
}

// learn remembers a credential PVE accepted (any answer but 401), and forgets one it refused.
func (g *Gate) learn(res *http.Response) error {
	cred, ok := res.Request.Context().Value(ctxKey{}).(credential)
	if !ok || cred.user == "" {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if res.StatusCode == http.StatusUnauthorized {
		delete(g.verified, cred.digest)
		return nil
	}
	if _, known := g.verified[cred.digest]; !known {
		if len(g.verified) >= maxVerified {
			clear(g.verified)
		}
		g.verified[cred.digest] = cred.user
	}
	return nil
}

func (g *Gate) bucket(key string, l Limit) *bucket {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.buckets[key]
	if !ok && len(g.buckets) >= maxBuckets {
		// Addresses come and go; the principals PVE accepted are few and stay.
		for k := range g.buckets {
			if strings.HasPrefix(k, unverifiedKey) {
				delete(g.buckets, k)
			}
		}
	}
	if !ok || b.limit != l {
		b = &bucket{limit: l, rate: rate.NewLimiter(rate.Limit(l.Rate), l.Burst), inFlight: make(chan struct{}, l.Concurrent)}
		g.buckets[key] = b
	}
	return b
}

// refuse answers 429 in PVE's error shape, with the seconds to wait.
func (g *Gate) refuse(w http.ResponseWriter, key, why string, wait time.Duration) {
	secs := int(math.Ceil(wait.Seconds()))
	g.mu.Lock()
	last, seen := g.refused[key]
	logIt := !seen || g.now().Sub(last) >= 10*time.Second
	if logIt {
		g.refused[key] = g.now()
	}
	g.mu.Unlock()
	if logIt {
		g.logf("refused: %s", why)
	}
	writeError(w, http.StatusTooManyRequests, "apigate: "+why+"; retry after "+fmt.Sprint(secs)+" s", secs)
}

func writeError(w http.ResponseWriter, status int, msg string, retryAfter int) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", fmt.Sprint(retryAfter))
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"data": nil, "message": msg + "\n"})
}

func (g *Gate) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(g.log, "apigate: "+format+"\n", args...)
}
