package dnsquota

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Quota is one tenant's DNS quota, from its envelope (docs/adr/0017-dns-quota.md): the most
// records each of its zones may hold and the most UPDATE messages it may send a minute.
type Quota struct {
	Records int // dns_records
	Updates int // dns_updates, per minute
}

// Validate refuses a quota whose limits are below 1, naming each field.
func (q Quota) Validate(field string) error {
	var errs []string
	if q.Records < 1 {
		errs = append(errs, fmt.Sprintf("%s.dns_records %d must be at least 1 (records in each zone)", field, q.Records))
	}
	if q.Updates < 1 {
		errs = append(errs, fmt.Sprintf("%s.dns_updates %d must be at least 1 (UPDATE messages a minute)", field, q.Updates))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// CheckRecords refuses an UPDATE that takes zone from before to after records over limit. An
// update that does not grow the zone passes, so a tenant over its quota (lowered under it, or
// published before it) can always delete.
func CheckRecords(zone string, before, after, limit int) error {
	if after > limit && after > before {
		return fmt.Errorf("zone %s would hold %d records (%d now), over the tenant's quota of %d (envelope.dns_records, set by the substrate at onboarding)",
			strings.TrimSuffix(zone, "."), after, before, limit)
	}
	return nil
}

// Rate is a token bucket per tenant: each holds at most its quota's Updates, refilled at
// Updates a minute, so a tenant may send a burst of one minute's updates and then that rate.
type Rate struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewRate is an empty limiter; now is the clock (time.Now when nil).
func NewRate(now func() time.Time) *Rate {
	if now == nil {
		now = time.Now
	}
	return &Rate{buckets: map[string]*bucket{}, now: now}
}

// Take spends one update of tenant's perMinute, or refuses naming the quota.
func (r *Rate) Take(tenant string, perMinute int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	b, ok := r.buckets[tenant]
	if !ok {
		b = &bucket{tokens: float64(perMinute), at: now}
		r.buckets[tenant] = b
	}
	b.tokens += now.Sub(b.at).Minutes() * float64(perMinute)
	if b.tokens > float64(perMinute) {
		b.tokens = float64(perMinute)
	}
	b.at = now
	if b.tokens < 1 {
		return fmt.Errorf("tenant %s sent more than its quota of %d updates a minute (envelope.dns_updates, set by the substrate at onboarding)", tenant, perMinute)
	}
	b.tokens--
	return nil
}
