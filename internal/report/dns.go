package report

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Record is one record set as a DNS server answered it. Err says why there is no answer.
type Record struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Values []string `json:"values"`
	Err    string   `json:"error,omitempty"`
}

// Resolver asks one DNS server (the site resolver) for record sets, recursion desired.
type Resolver struct {
	Server  string
	Port    int
	Timeout time.Duration
}

// Lookup reads name's record set of type typ. NXDOMAIN and an empty answer give no values and no
// error: the report shows them as missing. A server that does not answer gives Err.
func (r Resolver) Lookup(ctx context.Context, name, typ string) Record {
	rec := Record{Name: dns.Fqdn(name), Type: strings.ToUpper(typ)}
	t, ok := dns.StringToType[rec.Type]
	if !ok {
		rec.Err = fmt.Sprintf("unknown record type %q", typ)
		return rec
	}
	m := new(dns.Msg)
	m.SetQuestion(rec.Name, t)
	m.RecursionDesired = true
	c := &dns.Client{Timeout: r.timeout()}
	addr := net.JoinHostPort(r.Server, strconv.Itoa(r.Port))
	ans, _, err := c.ExchangeContext(ctx, m, addr)
	if err != nil {
		rec.Err = fmt.Sprintf("server %s: %v", addr, err)
		return rec
	}
	if ans.Rcode != dns.RcodeSuccess && ans.Rcode != dns.RcodeNameError {
		rec.Err = fmt.Sprintf("server %s answered %s", addr, dns.RcodeToString[ans.Rcode])
		return rec
	}
	for _, rr := range ans.Answer {
		if rr.Header().Rrtype == t && strings.EqualFold(rr.Header().Name, rec.Name) {
			rec.Values = append(rec.Values, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	sort.Strings(rec.Values)
	return rec
}

func (r Resolver) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return 2 * time.Second
}
