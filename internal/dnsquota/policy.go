// Package dnsquota is what a tenant may publish in its zones and how much (docs/adr/0017-dns-quota.md):
// the record types, sizes and TTLs of the tenant contract, the records a zone may hold and the
// updates a minute a tenant may send. It has no I/O: the gateway (internal/dnsgate) reads the zone
// and applies these rules to each UPDATE before anything reaches the authoritative server.
package dnsquota

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// Contract bounds of one record (docs/tenant-contract.md, tenant.records[]).
const (
	MinTTL = 60
	MaxTTL = 86400
	// MaxRdata is the most bytes one record's data may take: a 4096-bit DKIM key fits, a
	// 2 KB blob does not.
	MaxRdata = 1024
)

// forwardTypes are what a tenant may add to its forward zone: none of them sends a resolver
// anywhere but through the name it names (NS, DNAME and the DNSSEC and zone types are absent).
var forwardTypes = map[uint16]bool{
	dns.TypeA: true, dns.TypeAAAA: true, dns.TypeCNAME: true, dns.TypeTXT: true, dns.TypeMX: true, dns.TypeSRV: true,
}

// reverseTypes are what a tenant may add to its reverse zone.
var reverseTypes = map[uint16]bool{dns.TypePTR: true}

// IsReverse reports whether zone is a reverse zone (in-addr.arpa or ip6.arpa).
func IsReverse(zone string) bool {
	z := dns.CanonicalName(zone)
	return strings.HasSuffix(z, ".in-addr.arpa.") || strings.HasSuffix(z, ".ip6.arpa.")
}

// AllowedTypes names, sorted, what a tenant may add to zone.
func AllowedTypes(zone string) string {
	if IsReverse(zone) {
		return "PTR"
	}
	return "A, AAAA, CNAME, MX, SRV, TXT"
}

// CheckUpdate refuses an UPDATE of zone (its update section, m.Ns) that publishes what the tenant
// contract does not allow, naming the first record and the rule. Deletions are allowed of any
// type below the apex, so that a record published before the rule can be removed; the apex's SOA
// and NS are the substrate's.
func CheckUpdate(zone string, m *dns.Msg) error {
	zone = dns.CanonicalName(zone)
	types := forwardTypes
	if IsReverse(zone) {
		types = reverseTypes
	}
	for _, rr := range m.Ns {
		h := rr.Header()
		name := dns.CanonicalName(h.Name)
		if !dns.IsSubDomain(zone, name) {
			return fmt.Errorf("%s is outside zone %s", strings.TrimSuffix(h.Name, "."), strings.TrimSuffix(zone, "."))
		}
		what := fmt.Sprintf("%s %s", strings.TrimSuffix(h.Name, "."), dns.TypeToString[h.Rrtype])
		apex := name == zone
		switch h.Class {
		case dns.ClassINET:
			if !types[h.Rrtype] {
				return fmt.Errorf("%s: type %s is not one a tenant may publish in %s (%s); delegations, DNAME and anything else that sends the resolver elsewhere are refused",
					what, dns.TypeToString[h.Rrtype], strings.TrimSuffix(zone, "."), AllowedTypes(zone))
			}
			if apex && h.Rrtype == dns.TypeCNAME {
				return fmt.Errorf("%s: a CNAME at the zone's apex is refused (the apex holds the substrate's SOA and NS)", what)
			}
			if h.Ttl < MinTTL || h.Ttl > MaxTTL {
				return fmt.Errorf("%s: TTL %d is outside %d..%d", what, h.Ttl, MinTTL, MaxTTL)
			}
			if n := rdataLen(rr); n > MaxRdata {
				return fmt.Errorf("%s: %d bytes of data, over the %d a record may take", what, n, MaxRdata)
			}
		case dns.ClassANY, dns.ClassNONE:
			if apex && (h.Rrtype == dns.TypeSOA || h.Rrtype == dns.TypeNS) {
				return fmt.Errorf("%s: the apex's SOA and NS are the substrate's", what)
			}
		default:
			return fmt.Errorf("%s: class %s is not an update class", what, dns.ClassToString[h.Class])
		}
	}
	return nil
}

// rdataLen is the record's data length on the wire.
func rdataLen(rr dns.RR) int {
	n := dns.Len(rr) - headerLen(rr.Header())
	if n < 0 {
		return 0
	}
	return n
}

// headerLen is the wire length of the header (uncompressed name, type, class, TTL, rdlength).
func headerLen(h *dns.RR_Header) int {
	hh := &dns.RFC3597{Hdr: *h}
	return dns.Len(hh)
}
