package dnsupdate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// State is what a desired record set asks for.
type State string

const (
	// Present adds the values to the set and never removes other values.
	Present State = "present"
	// Exact makes the set hold exactly the values.
	Exact State = "exact"
	// Absent removes the values (or the whole set when no value is given).
	Absent State = "absent"
)

// DefaultTTL applies to a set that does not exist yet when no TTL is given.
const DefaultTTL = 3600

// Desired is one record set request inside one zone.
type Desired struct {
	Set    RRSet // name, type, desired records; TTL only meaningful when TTLSet
	TTLSet bool  // the user gave a TTL: an existing set with another TTL is changed
	State  State
	// NoOwnership exempts the set from the ownership registry (PTRs: only our own value is
	// ever added or removed, so there is nothing of another owner's to protect).
	NoOwnership bool
}

// Ownership marks record sets as owned by one owner with a TXT registry record, in the style
// of external-dns: the TXT at "<prefix><type>.<name>" holds "heritage=deevnet.tenant,owner=X".
type Ownership struct {
	Owner  string // "" disables ownership
	Prefix string // label prefix, "_dvt-" by default
	// Adopt takes over the existing sets that have no registry record (another tool's, such as
	// Terraform's DNS provider): each desired one gets this owner's record, even when its
	// values already match. A set registered to another owner stays refused.
	Adopt bool
}

const heritage = "heritage=deevnet.tenant"

// RegistryName is the owner name of the registry TXT for set (name, type).
func (o Ownership) RegistryName(name string, t uint16) string {
	p := o.Prefix
	if p == "" {
		p = "_dvt-"
	}
	return dns.CanonicalName(p + strings.ToLower(dns.TypeToString[t]) + "." + name)
}

func (o Ownership) registryValue() string { return heritage + ",owner=" + o.Owner }

// ownerOf extracts the owner recorded in a registry set; "" when there is no registry record.
func ownerOf(reg RRSet) (string, bool) {
	for _, rr := range reg.RRs {
		txt, ok := rr.(*dns.TXT)
		if !ok {
			continue
		}
		v := strings.Join(txt.Txt, "")
		if !strings.HasPrefix(v, heritage+",") {
			continue
		}
		for _, kv := range strings.Split(v, ",") {
			if o, ok := strings.CutPrefix(kv, "owner="); ok {
				return o, true
			}
		}
	}
	return "", false
}

// SetChange is the before/after of one record set that changes.
type SetChange struct {
	Key    string
	Before RRSet
	After  RRSet
}

// ZonePlan is what converging one zone needs: the sets read, the sets that change, and the
// UPDATE that changes them (nil when nothing changes).
type ZonePlan struct {
	Zone    string
	Before  map[string]RRSet
	After   map[string]RRSet
	Changes []SetChange
	Update  *dns.Msg
	ReadBy  string // how the zone was read (see Planner.read)
}

// Changed reports whether the plan has anything to send.
func (p *ZonePlan) Changed() bool { return len(p.Changes) > 0 }

// Planner reads a zone and plans its UPDATE.
type Planner struct {
	Client    *Client
	Read      ReadMode
	AXFRLimit int // ReadAuto: records an AXFR may bring before it gives way to queries; 0: AutoAXFRMaxRecords
	Ownership Ownership
}

// ReadMode is how a Planner reads the current record sets of a zone.
type ReadMode string

const (
	// ReadQuery asks one question per set (and per registry record).
	ReadQuery ReadMode = "query"
	// ReadAXFR transfers the whole zone in one request; a refused transfer is an error.
	ReadAXFR ReadMode = "axfr"
	// ReadAuto transfers the zone when more than one set is read, and falls back to queries
	// when the server refuses the transfer to the key or the zone passes AXFRLimit records.
	// The default: a converge then costs one read and at most one UPDATE per zone.
	ReadAuto ReadMode = "auto"
)

// AutoAXFRMaxRecords bounds what ReadAuto transfers: a tenant zone holds a few hundred records,
// and a zone past this is someone else's large zone, cheaper to read set by set.
const AutoAXFRMaxRecords = 10000

type nameType struct {
	name string
	t    uint16
}

// Plan reads the current record sets for desired (all in zone), applies the requests in order,
// checks ownership, and builds one UPDATE whose prerequisites pin every set it touches to the
// content just read, so a concurrent change makes the server refuse the whole update.
func (pl *Planner) Plan(ctx context.Context, zone string, desired []Desired) (*ZonePlan, error) {
	zone = dns.CanonicalName(zone)
	p := &ZonePlan{Zone: zone, Before: map[string]RRSet{}, After: map[string]RRSet{}}
	for _, d := range desired {
		if !dns.IsSubDomain(zone, d.Set.Name) {
			return nil, fmt.Errorf("record %s is not inside zone %s", d.Set.Key(), strings.TrimSuffix(zone, "."))
		}
	}
	how, err := pl.read(ctx, zone, desired, p.Before)
	if err != nil {
		return nil, err
	}
	p.ReadBy = how
	for k, s := range p.Before {
		p.After[k] = s
	}
	own := pl.Ownership
	for _, d := range desired {
		cur := p.After[d.Set.Key()]
		next := apply(cur, d)
		takeOver := own.Adopt && len(cur.RRs) > 0 && len(next.RRs) > 0
		if (!equalSets(cur, next) || takeOver) && own.Owner != "" && !d.NoOwnership {
			regKey := setKey(own.RegistryName(d.Set.Name, d.Set.Type), dns.TypeTXT)
			reg := p.After[regKey]
			owner, registered := ownerOf(reg)
			switch {
			case registered && owner != own.Owner:
				return nil, fmt.Errorf("record %s is owned by %q, not by %q (registry TXT %s): refusing to change it",
					d.Set.Key(), owner, own.Owner, strings.TrimSuffix(reg.Name, "."))
			case !registered && len(cur.RRs) > 0 && !own.Adopt:
				return nil, fmt.Errorf("record %s exists and has no ownership record for %q (written by someone else): refusing to change it",
					d.Set.Key(), own.Owner)
			}
			switch {
			case len(next.RRs) > 0 && !registered:
				p.After[regKey] = registrySet(own, d.Set.Name, d.Set.Type, next.TTL)
			case len(next.RRs) == 0 && registered:
				p.After[regKey] = RRSet{Name: reg.Name, Type: dns.TypeTXT}
			}
		}
		p.After[d.Set.Key()] = next
	}
	keys := make([]string, 0, len(p.After))
	for k := range p.After {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if b, a := p.Before[k], p.After[k]; !equalSets(b, a) {
			p.Changes = append(p.Changes, SetChange{Key: k, Before: b, After: a})
		}
	}
	if len(p.Changes) > 0 {
		p.Update = buildUpdate(zone, p.Changes)
	}
	return p, nil
}

func registrySet(own Ownership, name string, t uint16, ttl uint32) RRSet {
	n := own.RegistryName(name, t)
	return RRSet{Name: n, Type: dns.TypeTXT, TTL: ttl, RRs: []dns.RR{&dns.TXT{
		Hdr: dns.RR_Header{Name: n, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: ttl},
		Txt: SplitTXT(own.registryValue()),
	}}}
}

// read fills before with the current sets of every desired key and, with ownership, of their
// registry records.
// It returns how it read: "axfr", "query", or "query (axfr: why not)" after a fallback.
func (pl *Planner) read(ctx context.Context, zone string, desired []Desired, before map[string]RRSet) (how string, err error) {
	how = "query"
	var want []nameType
	seen := map[string]bool{}
	add := func(n string, t uint16) {
		if k := setKey(n, t); !seen[k] {
			seen[k] = true
			want = append(want, nameType{n, t})
		}
	}
	for _, d := range desired {
		add(d.Set.Name, d.Set.Type)
		if pl.Ownership.Owner != "" && !d.NoOwnership {
			add(pl.Ownership.RegistryName(d.Set.Name, d.Set.Type), dns.TypeTXT)
		}
	}
	switch {
	case pl.Read == ReadAXFR:
		all, err := pl.Client.Transfer(ctx, zone, 0)
		if err != nil {
			return "", err
		}
		fillFrom(all, want, before)
		return "axfr", nil
	case pl.Read == ReadAuto && len(want) > 1:
		// One message instead of one per set, unless the key may not transfer the zone or the
		// zone is much larger than what is asked for: then the queries are cheaper.
		limit := pl.AXFRLimit
		if limit == 0 {
			limit = AutoAXFRMaxRecords
		}
		all, err := pl.Client.Transfer(ctx, zone, limit)
		if err == nil {
			fillFrom(all, want, before)
			return "axfr", nil
		}
		var refused *TransferRefusedError
		if !errors.As(err, &refused) && !errors.Is(err, ErrZoneTooLarge) {
			return "", err
		}
		how = "query (axfr: " + err.Error() + ")"
	}
	for _, w := range want {
		s, err := pl.Client.Query(ctx, w.name, w.t)
		if err != nil {
			return "", err
		}
		before[s.Key()] = s
	}
	return how, nil
}

// fillFrom copies the wanted sets from a transferred zone; a set the zone lacks is empty.
func fillFrom(all map[string]RRSet, want []nameType, before map[string]RRSet) {
	for _, w := range want {
		k := setKey(w.name, w.t)
		if s, ok := all[k]; ok {
			before[k] = s
		} else {
			before[k] = RRSet{Name: w.name, Type: w.t}
		}
	}
}

// apply returns the set that results from request d on cur.
func apply(cur RRSet, d Desired) RRSet {
	next := RRSet{Name: cur.Name, Type: cur.Type, TTL: cur.TTL}
	if next.Name == "" {
		next.Name, next.Type = d.Set.Name, d.Set.Type
	}
	switch {
	case d.TTLSet:
		next.TTL = d.Set.TTL
	case len(cur.RRs) == 0:
		next.TTL = DefaultTTL
	}
	switch d.State {
	case Present:
		next.RRs = append(next.RRs, cur.RRs...)
		for _, rr := range d.Set.RRs {
			if !next.Contains(rr) {
				next.RRs = append(next.RRs, rr)
			}
		}
	case Exact:
		next.RRs = append(next.RRs, d.Set.RRs...)
	case Absent:
		if len(d.Set.RRs) > 0 {
			for _, rr := range cur.RRs {
				if !d.Set.Contains(rr) {
					next.RRs = append(next.RRs, rr)
				}
			}
		}
		// The TTL of what stays is not the point of an absent request.
		next.TTL = cur.TTL
	}
	if len(next.RRs) == 0 {
		next.TTL = 0
	}
	return next
}

// equalSets compares two sets by content and TTL; empty sets are equal whatever their TTL.
func equalSets(a, b RRSet) bool {
	if len(a.RRs) != len(b.RRs) {
		return false
	}
	if len(a.RRs) == 0 {
		return true
	}
	if a.TTL != b.TTL {
		return false
	}
	for _, rr := range a.RRs {
		if !b.Contains(rr) {
			return false
		}
	}
	return true
}

// withTTL copies rr with the given TTL (miekg's update helpers change the headers they get).
func withTTL(rr dns.RR, ttl uint32) dns.RR {
	c := dns.Copy(rr)
	c.Header().Ttl = ttl
	return c
}

// buildUpdate makes the UPDATE for zone: prerequisites first (every touched set exactly as read,
// or absent when it was absent), then deletions and additions.
func buildUpdate(zone string, changes []SetChange) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(zone)
	for _, c := range changes {
		if len(c.Before.RRs) == 0 {
			m.RRsetNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: c.After.Name, Rrtype: c.After.Type}}})
			continue
		}
		pre := make([]dns.RR, 0, len(c.Before.RRs))
		for _, rr := range c.Before.RRs {
			pre = append(pre, withTTL(rr, 0))
		}
		m.Used(pre)
	}
	for _, c := range changes {
		b, a := c.Before, c.After
		switch {
		case len(a.RRs) == 0:
			m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: b.Name, Rrtype: b.Type}}})
		case len(b.RRs) > 0 && b.TTL != a.TTL:
			// A TTL is per set: replace the set so every record carries the new one.
			m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: b.Name, Rrtype: b.Type}}})
			ins := make([]dns.RR, 0, len(a.RRs))
			for _, rr := range a.RRs {
				ins = append(ins, withTTL(rr, a.TTL))
			}
			m.Insert(ins)
		default:
			var del, ins []dns.RR
			for _, rr := range b.RRs {
				if !a.Contains(rr) {
					del = append(del, withTTL(rr, 0))
				}
			}
			for _, rr := range a.RRs {
				if !b.Contains(rr) {
					ins = append(ins, withTTL(rr, a.TTL))
				}
			}
			if len(del) > 0 {
				m.Remove(del)
			}
			if len(ins) > 0 {
				m.Insert(ins)
			}
		}
	}
	return m
}

// SetView is the JSON-friendly form of a record set used in diffs and results.
type SetView struct {
	TTL    uint32   `json:"ttl,omitempty"`
	Values []string `json:"values"`
}

// View renders s for output.
func View(s RRSet) SetView {
	v := SetView{Values: s.Values()}
	if len(s.RRs) > 0 {
		v.TTL = s.TTL
	}
	return v
}
