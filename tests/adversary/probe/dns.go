package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/deevnet/tenant/internal/dnsupdate"
)

// dnsProbe is one UPDATE or AXFR with the tenant's TSIG key (or none) and the rcode each server
// answers it with: PowerDNS as onboarding configures it (rcode), BIND as the site lab configures it
// (bind; internal/dnslab: the tenant's key updates and transfers its own two zones, the substrate's
// key alone the site zone).
type dnsProbe struct {
	name    string
	axfr    bool   // a transfer; else an UPDATE adding (or, with remove, deleting) one A or PTR record
	zone    string // the zone named in the message
	owner   string // the record's owner name (UPDATE)
	remove  bool
	signed  bool
	rcode   int
	why     string
	bind    int    // BIND's rcode
	bindWhy string // why, when BIND's answer differs from PowerDNS's
}

// dnsProbes is the table: the tenant's own zones (what the key is for), then every zone that is
// not its own. The first own-zone probe adds a record the next removes.
func dnsProbes(e *env) []dnsProbe {
	own, oth, site := e.own, e.other, e.site.Zone
	name := "adversary-probe."
	ptr := "250." + own.ReverseZone
	ok, refused, notAuth := dns.RcodeSuccess, dns.RcodeRefused, dns.RcodeNotAuth
	return []dnsProbe{
		{name: "add a record to own zone " + own.DNSZone, zone: own.DNSZone, owner: name + own.DNSZone, signed: true, rcode: ok, bind: ok, why: "the key's own zone"},
		{name: "remove it", zone: own.DNSZone, owner: name + own.DNSZone, remove: true, signed: true, rcode: ok, bind: ok, why: "as above"},
		{name: "add a PTR to own reverse zone " + own.ReverseZone, zone: own.ReverseZone, owner: ptr, signed: true, rcode: ok, bind: ok, why: "the key's own reverse zone"},
		{name: "remove it", zone: own.ReverseZone, owner: ptr, remove: true, signed: true, rcode: ok, bind: ok, why: "as above"},
		{name: "unsigned update of own zone", zone: own.DNSZone, owner: name + own.DNSZone, signed: false, rcode: refused, bind: refused, why: "updates need the key"},
		{name: "update the other tenant's zone " + oth.DNSZone, zone: oth.DNSZone, owner: name + oth.DNSZone, signed: true, rcode: refused, bind: refused,
			why: "the key is allowed on its own zones only"},
		{name: "update the other tenant's reverse zone " + oth.ReverseZone, zone: oth.ReverseZone, owner: "250." + oth.ReverseZone, signed: true,
			rcode: refused, bind: refused, why: "as above"},
		{name: "update the site zone " + site, zone: site, owner: name + site, signed: true, rcode: notAuth, bind: refused,
			why: "the server is not authoritative for it here (the lab's PowerDNS serves tenant zones only)", bindWhy: "update-policy grants the site zone to the substrate's key only"},
		{name: "transfer own zone", axfr: true, zone: own.DNSZone, signed: true, rcode: notAuth, bind: ok,
			why: "onboarding allows the key updates only (TSIG-ALLOW-DNSUPDATE); nsupdate_tsig reads per set", bindWhy: "the BIND lab's allow-transfer names the key on its own zones"},
		{name: "transfer the other tenant's zone", axfr: true, zone: oth.DNSZone, signed: true, rcode: notAuth, bind: refused, why: "transfers only of its own zones",
			bindWhy: "allow-transfer names the other tenant's key and the substrate's"},
		{name: "transfer the other tenant's reverse zone", axfr: true, zone: oth.ReverseZone, signed: true, rcode: notAuth, bind: refused, why: "as above", bindWhy: "as above"},
		{name: "transfer the site zone", axfr: true, zone: site, signed: true, rcode: notAuth, bind: refused, why: "as above",
			bindWhy: "allow-transfer names the substrate's key only"},
	}
}

// atBIND is the table with BIND's answers in place of PowerDNS's.
func atBIND(probes []dnsProbe) []dnsProbe {
	out := make([]dnsProbe, len(probes))
	for i, p := range probes {
		p.rcode = p.bind
		if p.bindWhy != "" {
			p.why = p.bindWhy
		}
		out[i] = p
	}
	return out
}

// runDNS sends one probe to the attachment's DNS server and compares the rcode.
func (e *env) runDNS(ctx context.Context, p dnsProbe) (string, error) {
	a := e.att.DNS
	key := &dnsupdate.Key{Name: a.KeyName, Algorithm: a.Algorithm, Secret: a.Secret}
	var rc int
	var err error
	if p.axfr {
		rc, err = e.axfrRcode(ctx, p, key)
	} else {
		c := &dnsupdate.Client{Server: a.Server, Port: a.Port, Timeout: 5 * time.Second}
		if p.signed {
			c.Key = key
		}
		rc, err = updateRcode(ctx, c, p)
	}
	what := fmt.Sprintf("%s %s", map[bool]string{true: "AXFR", false: "UPDATE"}[p.axfr], strings.TrimSuffix(p.zone, "."))
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if rc != p.rcode {
		return "", fmt.Errorf("%s: answered %s, want %s (%s)", what, dns.RcodeToString[rc], dns.RcodeToString[p.rcode], p.why)
	}
	return fmt.Sprintf("%s: %s (%s)", what, dns.RcodeToString[rc], p.why), nil
}

// updateRcode sends the probe's UPDATE through the client nsupdate_tsig uses.
func updateRcode(ctx context.Context, c *dnsupdate.Client, p dnsProbe) (int, error) {
	rr := fmt.Sprintf("%s 60 IN A 10.20.255.250", dns.Fqdn(p.owner))
	if strings.HasSuffix(p.zone, ".in-addr.arpa") {
		rr = fmt.Sprintf("%s 60 IN PTR %s", dns.Fqdn(p.owner), "adversary-probe.invalid.")
	}
	r, err := dns.NewRR(rr)
	if err != nil {
		return 0, err
	}
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(p.zone))
	if p.remove {
		m.Remove([]dns.RR{r})
	} else {
		m.Insert([]dns.RR{r})
	}
	err = c.Update(ctx, m)
	var ue *dnsupdate.UpdateError
	switch {
	case err == nil:
		return dns.RcodeSuccess, nil
	case errors.As(err, &ue):
		return ue.Rcode, nil
	}
	return 0, err
}

// axfrRcode asks for a transfer and returns the first answer's rcode: a refusal is one message,
// signed (BIND) or not (PowerDNS), so only its rcode is compared.
func (e *env) axfrRcode(ctx context.Context, p dnsProbe, key *dnsupdate.Key) (int, error) {
	a := e.att.DNS
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(p.zone))
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	if p.signed {
		alg, ok := dnsupdate.AlgorithmID(key.Algorithm)
		if !ok {
			return 0, fmt.Errorf("key_algorithm %q unknown", key.Algorithm)
		}
		c.TsigSecret = map[string]string{dns.Fqdn(key.Name): key.Secret}
		m.SetTsig(dns.Fqdn(key.Name), alg, 300, time.Now().Unix())
	}
	r, _, err := c.ExchangeContext(ctx, m, net.JoinHostPort(a.Server, strconv.Itoa(a.Port)))
	if r == nil {
		return 0, err
	}
	return r.Rcode, nil
}
