package dnsupdate

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/deevnet/tenant/internal/reconcile"
	"github.com/miekg/dns"
)

// Request is a whole converge: record sets for the forward side, and where their PTRs go.
type Request struct {
	Forward     *Client
	Zone        string   // "" discovers each record's zone by SOA queries on Forward
	Read        ReadMode // "" is ReadQuery
	Ownership   Ownership
	Sets        []Desired
	PTR         map[string]bool // set key -> also manage PTRs for its A/AAAA values
	Reverse     *Client         // nil: Forward
	ReverseZone string          // "" discovers each PTR's zone by SOA queries on Reverse
	CheckMode   bool
	// MaxRecords is the tenant's DNS quota (envelope.dns_records, docs/adr/0017-dns-quota.md), 0
	// none: a zone whose managed sets would hold more is refused before anything is sent.
	MaxRecords int
}

// Result is what a converge did (or, in check mode, would do).
type Result struct {
	Changed bool
	Plans   []*ZonePlan // forward plans first, then reverse plans
	Applied []string    // zones whose UPDATE the server accepted
	Sent    Counters    // messages sent, all servers together
}

// Converge plans every zone, then (unless in check mode) sends one UPDATE per zone that changes:
// forward zones first, so a PTR never points at a name whose update was refused.
func Converge(ctx context.Context, req Request) (*Result, error) {
	res := &Result{}
	defer func() {
		res.Sent = sum(req.Forward, req.Reverse)
	}()
	var fwdCount int
	_, _, err := reconcile.Run(ctx, req.CheckMode, func(ctx context.Context) (*Result, bool, error) {
		var err error
		fwdCount, err = planZones(ctx, req, res)
		if err == nil {
			err = checkQuota(res.Plans, req.MaxRecords)
		}
		return res, res.Changed, err
	}, func(ctx context.Context, res *Result) error {
		return send(ctx, req, res, fwdCount)
	})
	return res, err
}

// planZones plans the forward zones, then the reverse zones of the PTRs they ask for, into res. It
// returns how many of res.Plans are forward plans.
func planZones(ctx context.Context, req Request, res *Result) (int, error) {
	fwd := &Planner{Client: req.Forward, Read: req.Read, Ownership: req.Ownership}
	fplans, err := planByZone(ctx, fwd, req.Zone, req.Sets)
	if err != nil {
		return 0, err
	}
	res.Plans = append(res.Plans, fplans...)

	ptrs, err := ptrRequests(req, fplans)
	if err != nil {
		return 0, err
	}
	if len(ptrs) > 0 {
		rc := req.Reverse
		if rc == nil {
			rc = req.Forward
		}
		rev := &Planner{Client: rc, Read: req.Read}
		rplans, err := planByZone(ctx, rev, req.ReverseZone, ptrs)
		if err != nil {
			return 0, fmt.Errorf("reverse (PTR): %w", err)
		}
		res.Plans = append(res.Plans, rplans...)
	}
	for _, p := range res.Plans {
		if p.Changed() {
			res.Changed = true
		}
	}
	return len(fplans), nil
}

// checkQuota refuses a plan whose sets, after it, hold more records in one zone than the quota.
// It counts only the sets the task manages (their registry records included): the rest of the
// zone is the gateway's to count, which refuses the UPDATE whole if it does not fit.
func checkQuota(plans []*ZonePlan, limit int) error {
	if limit <= 0 {
		return nil
	}
	var over []string
	for _, p := range plans {
		before, after := 0, 0
		for _, s := range p.Before {
			before += len(s.RRs)
		}
		for _, s := range p.After {
			after += len(s.RRs)
		}
		if after > limit && after > before {
			over = append(over, fmt.Sprintf("zone %s: the record sets of this task would hold %d records, over the tenant's quota of %d (envelope.dns_records, set by the substrate at onboarding)",
				strings.TrimSuffix(p.Zone, "."), after, limit))
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("%s; nothing was sent", strings.Join(over, "; "))
	}
	return nil
}

// send sends one UPDATE per changing zone, in plan order.
func send(ctx context.Context, req Request, res *Result, fwdCount int) error {
	for i, p := range res.Plans {
		if !p.Changed() {
			continue
		}
		c := req.Forward
		if i >= fwdCount && req.Reverse != nil {
			c = req.Reverse
		}
		if err := c.Update(ctx, p.Update); err != nil {
			// Changed stays true only if an earlier UPDATE was accepted.
			res.Changed = len(res.Applied) > 0
			return err
		}
		res.Applied = append(res.Applied, p.Zone)
	}
	return nil
}

func sum(cs ...*Client) Counters {
	var t Counters
	seen := map[*Client]bool{}
	for _, c := range cs {
		if c == nil || seen[c] {
			continue
		}
		seen[c] = true
		t.Queries += c.Sent.Queries
		t.AXFRs += c.Sent.AXFRs
		t.Updates += c.Sent.Updates
	}
	return t
}

// planByZone groups desired sets by zone (given, or discovered per name) and plans each zone.
func planByZone(ctx context.Context, pl *Planner, zone string, desired []Desired) ([]*ZonePlan, error) {
	byZone := map[string][]Desired{}
	var order []string
	cache := map[string]string{}
	for _, d := range desired {
		z := zone
		if z == "" {
			parent := d.Set.Name
			if z = cache[parent]; z == "" {
				var err error
				if z, err = pl.Client.FindZone(ctx, parent); err != nil {
					return nil, err
				}
				cache[parent] = z
			}
		}
		z = dns.CanonicalName(z)
		if _, ok := byZone[z]; !ok {
			order = append(order, z)
		}
		byZone[z] = append(byZone[z], d)
	}
	var plans []*ZonePlan
	for _, z := range order {
		p, err := pl.Plan(ctx, z, byZone[z])
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// ptrRequests derives the PTR requests from the forward plans: every address the forward set
// will hold gets a PTR to the set's name; every address it loses has that PTR value removed.
// Only our own PTR value is ever added or removed, so other PTRs at the same name survive.
func ptrRequests(req Request, plans []*ZonePlan) ([]Desired, error) {
	var out []Desired
	for _, d := range req.Sets {
		if !req.PTR[d.Set.Key()] {
			continue
		}
		if d.Set.Type != dns.TypeA && d.Set.Type != dns.TypeAAAA {
			return nil, fmt.Errorf("record %s: ptr is only for A and AAAA records", d.Set.Key())
		}
		var before, after RRSet
		for _, p := range plans {
			if s, ok := p.After[d.Set.Key()]; ok {
				before, after = p.Before[d.Set.Key()], s
			}
		}
		ttl := after.TTL
		if ttl == 0 {
			ttl = before.TTL
		}
		for _, rr := range after.RRs {
			pd, err := ptrFor(rr, d.Set.Name, ttl, Present)
			if err != nil {
				return nil, err
			}
			out = append(out, pd)
		}
		for _, rr := range before.RRs {
			if !after.Contains(rr) {
				pd, err := ptrFor(rr, d.Set.Name, ttl, Absent)
				if err != nil {
					return nil, err
				}
				out = append(out, pd)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Set.Name < out[j].Set.Name })
	return out, nil
}

func ptrFor(rr dns.RR, target string, ttl uint32, st State) (Desired, error) {
	var ip string
	switch v := rr.(type) {
	case *dns.A:
		ip = v.A.String()
	case *dns.AAAA:
		ip = v.AAAA.String()
	}
	if _, err := netip.ParseAddr(ip); err != nil {
		return Desired{}, fmt.Errorf("PTR for %s: bad address %q", target, ip)
	}
	rev, err := dns.ReverseAddr(ip)
	if err != nil {
		return Desired{}, fmt.Errorf("PTR for %s %s: %w", target, ip, err)
	}
	name := dns.CanonicalName(rev)
	ptr := &dns.PTR{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: ttl}, Ptr: dns.CanonicalName(target)}
	return Desired{
		Set:         RRSet{Name: name, Type: dns.TypePTR, TTL: ttl, RRs: []dns.RR{ptr}},
		TTLSet:      st == Present,
		State:       st,
		NoOwnership: true,
	}, nil
}

// Diff renders the changing sets of all plans as before/after maps keyed "name TYPE".
func Diff(plans []*ZonePlan) (before, after map[string]SetView) {
	before, after = map[string]SetView{}, map[string]SetView{}
	for _, p := range plans {
		for _, c := range p.Changes {
			k := strings.Replace(c.Key, ". ", " ", 1)
			if len(c.Before.RRs) > 0 {
				before[k] = View(c.Before)
			}
			if len(c.After.RRs) > 0 {
				after[k] = View(c.After)
			}
		}
	}
	return before, after
}
