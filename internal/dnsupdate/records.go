// Package dnsupdate converges DNS record sets over RFC 2136: it reads the current record sets
// from the primary, computes the difference to the desired state, and sends one TSIG-signed
// UPDATE per zone whose prerequisites make it fail instead of overwriting a concurrent writer.
package dnsupdate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// maxTXTString is the length limit of one <character-string> (RFC 1035 §3.3).
const maxTXTString = 255

// Key identifies the TSIG key that signs updates (and zone transfers).
type Key struct {
	Name      string // key name, with or without trailing dot
	Algorithm string // hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512
	Secret    string // base64
}

// Algorithms maps the user-facing algorithm names to miekg/dns identifiers.
var algorithms = map[string]string{
	"hmac-sha1":   dns.HmacSHA1,
	"hmac-sha224": dns.HmacSHA224,
	"hmac-sha256": dns.HmacSHA256,
	"hmac-sha384": dns.HmacSHA384,
	"hmac-sha512": dns.HmacSHA512,
}

// AlgorithmID is miekg/dns's identifier of a key algorithm name (case-insensitive).
func AlgorithmID(name string) (string, bool) {
	id, ok := algorithms[strings.ToLower(name)]
	return id, ok
}

// AlgorithmNames lists the accepted key algorithms, sorted.
func AlgorithmNames() []string {
	out := make([]string, 0, len(algorithms))
	for k := range algorithms {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// RRSet is the record set of one owner name and type.
type RRSet struct {
	Name string // fully qualified, lower case, with trailing dot
	Type uint16
	TTL  uint32
	RRs  []dns.RR
}

// Key returns "name TYPE", the identity of the set.
func (s RRSet) Key() string { return setKey(s.Name, s.Type) }

func setKey(name string, t uint16) string { return name + " " + dns.TypeToString[t] }

// Values returns the presentation form of each record's RDATA, sorted.
func (s RRSet) Values() []string {
	out := make([]string, 0, len(s.RRs))
	for _, rr := range s.RRs {
		out = append(out, RData(rr))
	}
	sort.Strings(out)
	return out
}

// RData is the presentation form of an RR without its header.
func RData(rr dns.RR) string {
	full := rr.String()
	hdr := rr.Header().String()
	return strings.TrimPrefix(full, hdr)
}

// Contains reports whether the set holds rr (RDATA compared, TTL ignored).
func (s RRSet) Contains(rr dns.RR) bool {
	for _, x := range s.RRs {
		if dns.IsDuplicate(x, rr) {
			return true
		}
	}
	return false
}

// Fqdn resolves a record name against a zone: "@" and "" are the apex, a name ending in a dot
// is absolute, a name already inside the zone is taken as is, anything else is relative.
func Fqdn(name, zone string) string {
	zone = dns.CanonicalName(zone)
	if zone == "." {
		zone = ""
	}
	switch {
	case name == "@" || name == "":
		return zone
	case strings.HasSuffix(name, "."):
		return dns.CanonicalName(name)
	case zone != "" && dns.IsSubDomain(zone, dns.CanonicalName(name)):
		return dns.CanonicalName(name)
	case zone == "":
		return dns.CanonicalName(name)
	default:
		return dns.CanonicalName(name + "." + zone)
	}
}

// ParseType converts "A", "aaaa", ... into a type code; meta types are refused.
func ParseType(s string) (uint16, error) {
	t, ok := dns.StringToType[strings.ToUpper(strings.TrimSpace(s))]
	if !ok {
		return 0, fmt.Errorf("unknown record type %q", s)
	}
	switch t {
	case dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR, dns.TypeOPT, dns.TypeTSIG, dns.TypeSOA, dns.TypeNone:
		return 0, fmt.Errorf("record type %s cannot be managed by this module", dns.TypeToString[t])
	}
	return t, nil
}

// ParseValue turns one user value into an RR of the given name, type and TTL. Values are
// zone-file RDATA with $ORIGIN = zone (so relative target names are inside the zone), except
// TXT: an unquoted TXT value is one text taken literally and split into 255-byte strings; a
// value starting with a double quote is zone-file syntax (one or more quoted strings).
func ParseValue(name string, t uint16, ttl uint32, value, zone string) (dns.RR, error) {
	if strings.ContainsAny(value, "\n\r") {
		return nil, fmt.Errorf("%s value %q: line breaks are not allowed", dns.TypeToString[t], value)
	}
	if t == dns.TypeTXT && !strings.HasPrefix(strings.TrimSpace(value), `"`) {
		return &dns.TXT{
			Hdr: dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: ttl},
			Txt: SplitTXT(value),
		}, nil
	}
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("%s value is empty", dns.TypeToString[t])
	}
	// A comment or a directive would change what the parser reads; refuse them outright.
	if t != dns.TypeTXT && strings.ContainsAny(value, ";$()") {
		return nil, fmt.Errorf("%s value %q: ';', '$' and parentheses are not allowed", dns.TypeToString[t], value)
	}
	origin := dns.Fqdn(zone)
	if zone == "" {
		origin = "."
	}
	line := fmt.Sprintf("%s %d IN %s %s", name, ttl, dns.TypeToString[t], value)
	zp := dns.NewZoneParser(strings.NewReader(line), origin, "")
	rr, ok := zp.Next()
	if err := zp.Err(); err != nil {
		return nil, fmt.Errorf("%s value %q: %w", dns.TypeToString[t], value, err)
	}
	if !ok || rr == nil {
		return nil, fmt.Errorf("%s value %q: no record parsed", dns.TypeToString[t], value)
	}
	if extra, more := zp.Next(); more || extra != nil {
		return nil, fmt.Errorf("%s value %q: more than one record", dns.TypeToString[t], value)
	}
	if rr.Header().Rrtype != t {
		return nil, fmt.Errorf("%s value %q parsed as type %s", dns.TypeToString[t], value, dns.TypeToString[rr.Header().Rrtype])
	}
	return rr, nil
}

// SplitTXT cuts a text into strings of at most 255 bytes, escaping what the presentation form
// of miekg/dns needs escaped (quotes and backslashes), without cutting an escape in half.
func SplitTXT(s string) []string {
	if s == "" {
		return []string{""}
	}
	var out []string
	raw := []byte(s)
	for len(raw) > 0 {
		n := min(len(raw), maxTXTString)
		out = append(out, escapeTXT(raw[:n]))
		raw = raw[n:]
	}
	return out
}

// escapeTXT produces the escaped form miekg/dns stores in TXT.Txt for the raw bytes b.
func escapeTXT(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c < ' ' || c > '~':
			fmt.Fprintf(&sb, "\\%03d", c)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// NewSet builds the desired record set from user values; duplicates collapse into one record.
func NewSet(name string, t uint16, ttl uint32, values []string, zone string) (RRSet, error) {
	set := RRSet{Name: dns.CanonicalName(name), Type: t, TTL: ttl}
	if _, ok := dns.IsDomainName(set.Name); !ok {
		return set, fmt.Errorf("record name %q is not a valid domain name", name)
	}
	for _, v := range values {
		rr, err := ParseValue(set.Name, t, ttl, v, zone)
		if err != nil {
			return set, fmt.Errorf("record %s: %w", set.Key(), err)
		}
		if !set.Contains(rr) {
			set.RRs = append(set.RRs, rr)
		}
	}
	if t == dns.TypeCNAME && len(set.RRs) > 1 {
		return set, fmt.Errorf("record %s: a CNAME set holds exactly one value, got %d", set.Key(), len(set.RRs))
	}
	return set, nil
}
