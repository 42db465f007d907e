package dnsquota

import (
	"strings"

	"github.com/miekg/dns"
)

// Zone is the records a zone holds, by identity (owner, type, data; not TTL): what the quota
// counts. The apex's SOA and NS are the substrate's and are never counted.
type Zone struct {
	apex string
	rrs  map[string]rrKey
}

type rrKey struct {
	name  string
	rtype uint16
}

// NewZone is the zone apex holding rrs (as a transfer or the server's API returns them).
func NewZone(apex string, rrs []dns.RR) *Zone {
	z := &Zone{apex: dns.CanonicalName(apex), rrs: make(map[string]rrKey, len(rrs))}
	for _, rr := range rrs {
		z.add(rr)
	}
	return z
}

// Count is the number of records the quota counts.
func (z *Zone) Count() int { return len(z.rrs) }

func (z *Zone) substrates(name string, t uint16) bool {
	return name == z.apex && (t == dns.TypeSOA || t == dns.TypeNS)
}

// identity is owner, type and data, case-folded where DNS compares without case (TXT data keeps
// its case: two TXT strings that differ in case are two records).
func identity(rr dns.RR) (string, rrKey) {
	h := rr.Header()
	name := dns.CanonicalName(h.Name)
	data := strings.TrimPrefix(rr.String(), h.String())
	if h.Rrtype != dns.TypeTXT {
		data = strings.ToLower(data)
	}
	return name + "\x00" + dns.TypeToString[h.Rrtype] + "\x00" + data, rrKey{name: name, rtype: h.Rrtype}
}

func (z *Zone) add(rr dns.RR) {
	id, k := identity(rr)
	if z.substrates(k.name, k.rtype) {
		return
	}
	z.rrs[id] = k
}

// Apply changes z as RFC 2136 section 3.4.2 says the server applies the update section m.Ns:
// add (class IN), delete an RRset (ANY, type), every RRset at a name (ANY, ANY), one record
// (NONE). A CNAME's exclusivity is not modelled: an add the server would ignore is counted, so
// the count after is never below the server's.
func (z *Zone) Apply(m *dns.Msg) {
	for _, rr := range m.Ns {
		h := rr.Header()
		name := dns.CanonicalName(h.Name)
		switch h.Class {
		case dns.ClassINET:
			z.add(rr)
		case dns.ClassANY:
			for id, k := range z.rrs {
				if k.name == name && (h.Rrtype == dns.TypeANY || k.rtype == h.Rrtype) {
					delete(z.rrs, id)
				}
			}
		case dns.ClassNONE:
			c := dns.Copy(rr)
			c.Header().Class = dns.ClassINET
			id, _ := identity(c)
			delete(z.rrs, id)
		}
	}
}
