package dnsgate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/miekg/dns"
)

// ZoneReader returns every record of a zone as the authoritative server holds it.
type ZoneReader interface {
	Records(ctx context.Context, zone string) ([]dns.RR, error)
}

// PowerDNSAPI reads zones through PowerDNS's HTTP API, which onboarding already uses: a tenant
// key may not transfer its zones, and the API needs no per-zone transfer grant.
type PowerDNSAPI struct {
	URL    string // e.g. http://127.0.0.1:8081/api/v1/servers/localhost
	APIKey string
	Client *http.Client
}

// Records implements ZoneReader.
func (p *PowerDNSAPI) Records(ctx context.Context, zone string) ([]dns.RR, error) {
	zone = dns.CanonicalName(zone)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(p.URL, "/")+"/zones/"+url.PathEscape(zone), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", p.APIKey)
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading zone %s from the PowerDNS API: %w", zone, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading zone %s from the PowerDNS API: %w", zone, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading zone %s from the PowerDNS API: HTTP %d", zone, resp.StatusCode)
	}
	var z struct {
		RRsets []struct {
			Name    string `json:"name"`
			Type    string `json:"type"`
			TTL     uint32 `json:"ttl"`
			Records []struct {
				Content string `json:"content"`
			} `json:"records"`
		} `json:"rrsets"`
	}
	if err := json.Unmarshal(body, &z); err != nil {
		return nil, fmt.Errorf("reading zone %s from the PowerDNS API: %w", zone, err)
	}
	var rrs []dns.RR
	for _, s := range z.RRsets {
		for _, r := range s.Records {
			rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", s.Name, s.TTL, s.Type, r.Content))
			if err != nil || rr == nil {
				return nil, fmt.Errorf("zone %s: record %s %s does not parse: %w", zone, s.Name, s.Type, err)
			}
			rrs = append(rrs, rr)
		}
	}
	return rrs, nil
}
