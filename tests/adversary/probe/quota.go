package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/deevnet/tenant/internal/dnsupdate"
)

// The DNS quota and the contract's record rules (docs/adr/0017-dns-quota.md), probed with the
// tenant's key through the attachment's DNS server (the gateway) and its resolver.

// quotaProbe is one probe; run returns what it saw or why it failed.
type quotaProbe struct {
	name string
	run  func(ctx context.Context) (string, error)
}

func quotaProbes(e *env, tenantNS string) []quotaProbe {
	zone := e.own.DNSZone
	ps := []quotaProbe{
		{"flood own zone with 20,000 A records in 40 UPDATEs of 500", e.flood},
		{"delegate sub." + zone + " to ns.sub." + zone + " with glue A 127.0.0.9", func(ctx context.Context) (string, error) {
			return e.refused(ctx, "type NS is not one a tenant may publish", "sub."+zone+" 300 IN NS ns.sub."+zone+".", "ns.sub."+zone+" 300 IN A 127.0.0.9")
		}},
		{"DNAME alias." + zone + " to the site zone", func(ctx context.Context) (string, error) {
			return e.refused(ctx, "type DNAME is not one", "alias."+zone+" 300 IN DNAME "+dns.Fqdn(e.site.Zone))
		}},
		{"a TXT record of 2 KB", func(ctx context.Context) (string, error) {
			s := strings.Repeat("x", 250)
			return e.refused(ctx, "over the 1024 a record may take",
				fmt.Sprintf("big.%s 300 IN TXT %q %q %q %q %q %q %q %q", zone, s, s, s, s, s, s, s, s))
		}},
		{"a record with TTL 1", func(ctx context.Context) (string, error) {
			return e.refused(ctx, "TTL 1 is outside 60..86400", "short."+zone+" 1 IN A 10.20.255.251")
		}},
	}
	if tenantNS != "" {
		ps = append(ps, quotaProbe{"the resolver on a delegation to " + tenantNS + " in own zone (published by the substrate)", func(ctx context.Context) (string, error) {
			return e.resolverStaysHome(ctx, tenantNS)
		}})
	}
	return ps
}

func (e *env) dnsClient() *dnsupdate.Client {
	a := e.att.DNS
	return &dnsupdate.Client{Server: a.Server, Port: a.Port, Timeout: 10 * time.Second,
		Key: &dnsupdate.Key{Name: a.KeyName, Algorithm: a.Algorithm, Secret: a.Secret}}
}

// add sends one UPDATE adding rrs to the tenant's zone; a refusal is returned as *dnsupdate.UpdateError.
func (e *env) add(ctx context.Context, rrs ...string) error {
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(e.own.DNSZone))
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			return err
		}
		m.Insert([]dns.RR{rr})
	}
	return e.dnsClient().Update(ctx, m)
}

// refused sends rrs in one UPDATE with a good record beside them and wants REFUSED naming want,
// and the good record not served: nothing of a refused update is applied.
func (e *env) refused(ctx context.Context, want string, rrs ...string) (string, error) {
	good := "probe-good." + e.own.DNSZone
	err := e.add(ctx, append([]string{good + " 300 IN A 10.20.255.252"}, rrs...)...)
	var ue *dnsupdate.UpdateError
	if err == nil {
		return "", fmt.Errorf("answered NOERROR (published), want REFUSED naming %q", want)
	}
	if !errors.As(err, &ue) || ue.Rcode != dns.RcodeRefused || !strings.Contains(ue.Reason, want) {
		return "", fmt.Errorf("answered %w, want REFUSED naming %q", err, want)
	}
	if n, err := e.served(ctx, good); err != nil {
		return "", err
	} else if n != 0 {
		return "", fmt.Errorf("the good record of the refused update is served (%d answers)", n)
	}
	return "REFUSED whole: " + ue.Reason, nil
}

// served is the number of A records the attachment's server answers for name.
func (e *env) served(ctx context.Context, name string) (int, error) {
	set, err := e.dnsClient().Query(ctx, name, dns.TypeA)
	return len(set.RRs), err
}

// flood is the issue's: 40 UPDATEs of 500 A records. Those that fit the quota are accepted, the
// first that does not and every one after are refused whole, naming envelope.dns_records; the
// other tenant's name answers through the resolver throughout. The accepted records are removed
// after, so the tenant's later converges are as before.
func (e *env) flood(ctx context.Context) (string, error) {
	quota := e.att.UsageLimits.DNSRecords
	if quota == 0 {
		return "", fmt.Errorf("the attachment's usage_limits have no dns_records: onboard the tenant again")
	}
	zone := e.own.DNSZone
	other := e.other.VMs[0].Name + "." + e.other.DNSZone
	var accepted []int
	refused, firstRefused := 0, -1
	t0 := time.Now()
	for u := range 40 {
		var rrs []string
		for i := range 500 {
			n := u*500 + i
			rrs = append(rrs, fmt.Sprintf("flood%d.%s 300 IN A 10.%d.%d.%d", n, zone, 100+n>>16, n>>8&255, n&255))
		}
		err := e.add(ctx, rrs...)
		var ue *dnsupdate.UpdateError
		switch {
		case err == nil:
			if firstRefused >= 0 {
				return "", fmt.Errorf("update %d accepted after update %d was refused", u, firstRefused)
			}
			accepted = append(accepted, u)
		case errors.As(err, &ue) && ue.Rcode == dns.RcodeRefused && strings.Contains(ue.Reason, "envelope.dns_records"):
			refused++
			if firstRefused < 0 {
				firstRefused = u
			}
		default:
			return "", fmt.Errorf("update %d: %w", u, err)
		}
		if n, err := e.resolve(ctx, other); err != nil {
			return "", fmt.Errorf("the other tenant's %s through the resolver during the flood: %w", other, err)
		} else if n == 0 {
			return "", fmt.Errorf("the other tenant's %s did not answer through the resolver during the flood", other)
		}
	}
	took := time.Since(t0)
	if len(accepted)*500 > quota || refused == 0 {
		return "", fmt.Errorf("%d updates of 500 accepted, %d refused: the quota of %d does not bind", len(accepted), refused, quota)
	}
	if firstRefused >= 0 {
		if n, err := e.served(ctx, fmt.Sprintf("flood%d.%s", firstRefused*500, zone)); err != nil {
			return "", err
		} else if n != 0 {
			return "", fmt.Errorf("a record of refused update %d is served", firstRefused)
		}
	}
	for _, u := range accepted {
		m := new(dns.Msg)
		m.SetUpdate(dns.Fqdn(zone))
		for i := range 500 {
			rr, _ := dns.NewRR(fmt.Sprintf("flood%d.%s 300 IN A 10.0.0.1", u*500+i, zone))
			m.RemoveRRset([]dns.RR{rr})
		}
		if err := e.dnsClient().Update(ctx, m); err != nil {
			return "", fmt.Errorf("removing the flood's records: %w", err)
		}
	}
	return fmt.Sprintf("%d of 40 accepted (%d records), %d refused whole from update %d on, naming envelope.dns_records %d; %s answered through the resolver after each; %v",
		len(accepted), len(accepted)*500, refused, firstRefused, quota, other, took.Round(time.Millisecond)), nil
}

// resolve is the number of A answers the attachment's resolver gives for name.
func (e *env) resolve(ctx context.Context, name string) (int, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 5 * time.Second}).ExchangeContext(ctx, m, net.JoinHostPort(e.att.Resolver.Server, strconv.Itoa(e.att.Resolver.Port)))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == dns.TypeA {
			n++
		}
	}
	return n, nil
}

// resolverStaysHome looks up a name under a delegation in the tenant's zone to addr (the
// substrate published it, as a record from before the rule) through the tenant's resolver and
// counts what arrives at addr:53: nothing may.
func (e *env) resolverStaysHome(ctx context.Context, addr string) (string, error) {
	var got atomic.Int64
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		got.Add(1)
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeRefused)
		_ = w.WriteMsg(m)
	})
	for _, nw := range []string{"udp", "tcp"} {
		s := &dns.Server{Addr: net.JoinHostPort(addr, "53"), Net: nw, Handler: h}
		started := make(chan error, 1)
		s.NotifyStartedFunc = func() { started <- nil }
		go func() { started <- s.ListenAndServe() }()
		if err := <-started; err != nil {
			return "", fmt.Errorf("listening on %s:53: %w", addr, err)
		}
		defer func() { _ = s.Shutdown() }()
	}
	name := "x.sub." + e.own.DNSZone
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 10 * time.Second}).ExchangeContext(ctx, m, net.JoinHostPort(e.att.Resolver.Server, strconv.Itoa(e.att.Resolver.Port)))
	if err != nil {
		return "", err
	}
	time.Sleep(500 * time.Millisecond) // what the resolver sends after it answered
	if n := got.Load(); n != 0 {
		return "", fmt.Errorf("the resolver answered %s for %s and sent %d queries to %s:53, an address of the tenant's choosing", dns.RcodeToString[r.Rcode], name, n, addr)
	}
	return fmt.Sprintf("the resolver answered %s for %s and sent 0 queries to %s:53", dns.RcodeToString[r.Rcode], name, addr), nil
}
