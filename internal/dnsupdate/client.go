package dnsupdate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Counters counts the DNS messages a Client sent, by kind: the figure behind "a second run
// sends only reads".
type Counters struct {
	Queries int `json:"queries"`
	AXFRs   int `json:"axfr"`
	Updates int `json:"updates"`
}

// Client talks to one primary server with one key. It is not safe for concurrent use.
type Client struct {
	Server   string        // address, e.g. 127.0.0.1
	Port     int           // 53 by default
	Protocol string        // "tcp" (default) or "udp"; AXFR always uses TCP
	Timeout  time.Duration // per message; 10 s by default
	Key      *Key          // nil: unsigned

	Sent Counters

	conn *dns.Conn // reused TCP connection for reads and the update
}

func (c *Client) addr() string {
	port := c.Port
	if port == 0 {
		port = 53
	}
	return net.JoinHostPort(c.Server, strconv.Itoa(port))
}

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return 10 * time.Second
	}
	return c.Timeout
}

func (c *Client) proto() string {
	if c.Protocol == "" {
		return "tcp"
	}
	return c.Protocol
}

func (c *Client) keyName() string { return dns.CanonicalName(c.Key.Name) }

func (c *Client) dnsClient() (*dns.Client, error) {
	dc := &dns.Client{Net: c.proto(), Timeout: c.timeout()}
	if c.Key != nil {
		if _, ok := algorithms[strings.ToLower(c.Key.Algorithm)]; !ok {
			return nil, fmt.Errorf("key_algorithm %q is not one of %s", c.Key.Algorithm, strings.Join(AlgorithmNames(), ", "))
		}
		dc.TsigSecret = map[string]string{c.keyName(): c.Key.Secret}
	}
	return dc, nil
}

// Close releases the reused connection.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// exchange sends m and returns the reply. TCP reuses one connection for every message of a run,
// so a converge of many record sets costs one handshake.
func (c *Client) exchange(ctx context.Context, m *dns.Msg) (*dns.Msg, error) {
	dc, err := c.dnsClient()
	if err != nil {
		return nil, err
	}
	if c.proto() != "tcp" {
		r, _, err := dc.ExchangeContext(ctx, m, c.addr())
		return r, c.netError(err)
	}
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			conn, err := dc.DialContext(ctx, c.addr())
			if err != nil {
				return nil, c.netError(err)
			}
			c.conn = conn
		}
		r, _, err := dc.ExchangeWithConnContext(ctx, m, c.conn)
		if err != nil && r == nil && attempt == 0 && isConnReset(err) {
			// The server may close an idle TCP connection between messages: redial once.
			_ = c.Close()
			continue
		}
		if err != nil && r == nil {
			_ = c.Close()
		}
		return r, c.netError(err)
	}
}

func isConnReset(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "EOF") ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe")
}

// netError rewrites transport errors into words that name the server.
func (c *Client) netError(err error) error {
	if err == nil {
		return nil
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("server %s (%s) did not answer within %s: %w", c.addr(), c.proto(), c.timeout(), err)
	case strings.Contains(err.Error(), "connection refused"):
		return fmt.Errorf("server %s (%s) refused the connection (nothing listens there?): %w", c.addr(), c.proto(), err)
	default:
		return fmt.Errorf("server %s (%s): %w", c.addr(), c.proto(), err)
	}
}

// Query reads the record set (name, type) from the server, which must be authoritative.
func (c *Client) Query(ctx context.Context, name string, t uint16) (RRSet, error) {
	set := RRSet{Name: dns.CanonicalName(name), Type: t}
	m := new(dns.Msg)
	m.SetQuestion(set.Name, t)
	m.RecursionDesired = false
	c.Sent.Queries++
	r, err := c.exchange(ctx, m)
	if err != nil {
		return set, fmt.Errorf("reading %s: %w", set.Key(), err)
	}
	if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
		return set, fmt.Errorf("reading %s: server %s answered %s", set.Key(), c.addr(), dns.RcodeToString[r.Rcode])
	}
	if !r.Authoritative {
		return set, fmt.Errorf("reading %s: server %s is not authoritative for it (is the zone served there?)", set.Key(), c.addr())
	}
	if r.Truncated {
		return set, fmt.Errorf("reading %s: answer truncated over %s; use protocol tcp", set.Key(), c.proto())
	}
	for _, rr := range r.Answer {
		h := rr.Header()
		if h.Rrtype == t && strings.EqualFold(h.Name, set.Name) {
			rr.Header().Name = set.Name
			set.TTL = h.Ttl
			set.RRs = append(set.RRs, rr)
		}
	}
	return set, nil
}

// TransferRefusedError says the server answered an AXFR with an error rcode (REFUSED, NOTAUTH...):
// the key may not transfer the zone, which per-set queries can still read.
type TransferRefusedError struct {
	Zone   string
	Server string
	Why    string // the rcode, or what was wrong with the answer's signature
}

func (e *TransferRefusedError) Error() string {
	return fmt.Sprintf("AXFR of %s refused by %s (%s): is the transfer allowed for this key?", strings.TrimSuffix(e.Zone, "."), e.Server, e.Why)
}

// ErrZoneTooLarge stops a transfer that passed its record limit.
var ErrZoneTooLarge = errors.New("zone larger than the transfer limit")

// xfrRcode extracts the rcode miekg/dns puts in the text of a failed transfer's first message.
func xfrRcode(err error) (int, bool) {
	var rc int
	if _, perr := fmt.Sscanf(err.Error(), "dns: bad xfr rcode: %d", &rc); perr == nil {
		return rc, true
	}
	return 0, false
}

// Transfer reads a whole zone by AXFR (signed with the key) and returns its sets by Key().
// With limit > 0 it stops with ErrZoneTooLarge after that many records. A refusal is a
// *TransferRefusedError.
func (c *Client) Transfer(ctx context.Context, zone string, limit int) (map[string]RRSet, error) {
	zone = dns.CanonicalName(zone)
	m := new(dns.Msg)
	m.SetAxfr(zone)
	tr := &dns.Transfer{DialTimeout: c.timeout(), ReadTimeout: c.timeout(), WriteTimeout: c.timeout()}
	if c.Key != nil {
		if _, ok := algorithms[strings.ToLower(c.Key.Algorithm)]; !ok {
			return nil, fmt.Errorf("key_algorithm %q is not one of %s", c.Key.Algorithm, strings.Join(AlgorithmNames(), ", "))
		}
		tr.TsigSecret = map[string]string{c.keyName(): c.Key.Secret}
		m.SetTsig(c.keyName(), algorithms[strings.ToLower(c.Key.Algorithm)], 300, time.Now().Unix())
	}
	c.Sent.AXFRs++
	env, err := tr.In(m, c.addr())
	if err != nil {
		return nil, fmt.Errorf("AXFR of %s: %w", zone, c.netError(err))
	}
	// Whatever ends the loop early, the reader goroutine must finish: drain the channel.
	defer func() {
		for range env { //nolint:revive // draining
		}
	}()
	sets := map[string]RRSet{}
	n := 0
	for e := range env {
		if e.Error != nil {
			refused := &TransferRefusedError{Zone: zone, Server: c.addr()}
			switch rc, ok := xfrRcode(e.Error); {
			case ok: // BIND: REFUSED, signed
				refused.Why = dns.RcodeToString[rc]
			case errors.Is(e.Error, dns.ErrNoSig): // PowerDNS: an unsigned refusal
				refused.Why = "an unsigned answer to the signed request"
			case errors.Is(e.Error, dns.ErrSig), errors.Is(e.Error, dns.ErrAuth):
				refused.Why = "the answer's signature did not verify"
			default:
				refused = nil
			}
			if refused != nil {
				return nil, refused
			}
			return nil, fmt.Errorf("AXFR of %s from %s failed (is the transfer allowed for this key?): %w", zone, c.addr(), e.Error)
		}
		if n += len(e.RR); limit > 0 && n > limit {
			_ = tr.Close()
			return nil, fmt.Errorf("AXFR of %s: %w (%d records)", strings.TrimSuffix(zone, "."), ErrZoneTooLarge, limit)
		}
		for _, rr := range e.RR {
			h := rr.Header()
			h.Name = dns.CanonicalName(h.Name)
			k := setKey(h.Name, h.Rrtype)
			s := sets[k]
			s.Name, s.Type, s.TTL = h.Name, h.Rrtype, h.Ttl
			if !s.Contains(rr) {
				s.RRs = append(s.RRs, rr)
			}
			sets[k] = s
		}
	}
	return sets, nil
}

// FindZone discovers the zone that contains name by walking up the labels with SOA queries
// until the server answers authoritatively with an SOA owned by the queried name.
func (c *Client) FindZone(ctx context.Context, name string) (string, error) {
	name = dns.CanonicalName(name)
	labels := dns.SplitDomainName(name)
	for i := range labels {
		cand := dns.Fqdn(strings.Join(labels[i:], "."))
		m := new(dns.Msg)
		m.SetQuestion(cand, dns.TypeSOA)
		m.RecursionDesired = false
		c.Sent.Queries++
		r, err := c.exchange(ctx, m)
		if err != nil {
			return "", fmt.Errorf("discovering the zone of %s: %w", name, err)
		}
		if r.Rcode != dns.RcodeSuccess || !r.Authoritative {
			continue
		}
		for _, rr := range r.Answer {
			if rr.Header().Rrtype == dns.TypeSOA && strings.EqualFold(rr.Header().Name, cand) {
				return cand, nil
			}
		}
	}
	return "", fmt.Errorf("discovering the zone of %s: server %s is authoritative for no zone containing it; set zone explicitly", name, c.addr())
}

// UpdateError is a refused or failed UPDATE, explained in words.
type UpdateError struct {
	Zone     string
	Rcode    int
	TSIGCode uint16 // BADKEY, BADSIG, BADTIME... from the reply's TSIG record, 0 if none
	Server   string
	KeyName  string
	Reason   string // the server's Extended DNS Error text (the quota gateway names its rule there)
}

func (e *UpdateError) Error() string {
	rc := dns.RcodeToString[e.Rcode]
	if e.TSIGCode != 0 {
		rc += "(" + dns.RcodeToString[int(e.TSIGCode)] + ")"
	}
	var why string
	switch {
	case e.Reason != "":
		why = e.Reason
	case e.Rcode == dns.RcodeNotAuth && e.TSIGCode == dns.RcodeBadKey:
		why = fmt.Sprintf("the server does not know key %q (or not with this algorithm)", e.KeyName)
	case e.Rcode == dns.RcodeNotAuth && e.TSIGCode == dns.RcodeBadSig:
		why = fmt.Sprintf("the signature with key %q did not verify: key_secret is wrong", e.KeyName)
	case e.Rcode == dns.RcodeNotAuth && e.TSIGCode == dns.RcodeBadTime:
		why = "the signature time is outside the server's fudge window: check the clocks"
	case e.Rcode == dns.RcodeNotAuth:
		why = "the server is not authoritative for the zone, or refuses the key"
	case e.Rcode == dns.RcodeRefused:
		why = fmt.Sprintf("the server refuses updates to this zone with key %q: the key is not allowed on the zone, or is unknown/wrong (PowerDNS answers REFUSED for both)", e.KeyName)
	case e.Rcode == dns.RcodeNotZone:
		why = "a record name is outside the zone"
	case e.Rcode == dns.RcodeYXRrset || e.Rcode == dns.RcodeNXRrset || e.Rcode == dns.RcodeYXDomain || e.Rcode == dns.RcodeNameError:
		why = "a prerequisite failed: the records changed on the server since they were read (a concurrent writer); run again"
	case e.Rcode == dns.RcodeServerFailure:
		why = "the server failed to apply the update"
	case e.Rcode == dns.RcodeNotImplemented:
		why = "the server does not implement dynamic updates for this zone (dnsupdate off?)"
	default:
		why = "update rejected"
	}
	return fmt.Sprintf("UPDATE of zone %s at %s was answered %s: %s", strings.TrimSuffix(e.Zone, "."), e.Server, rc, why)
}

// Update sends the prepared UPDATE message m (signed with the key) and interprets the reply.
func (c *Client) Update(ctx context.Context, m *dns.Msg) error {
	zone := m.Question[0].Name
	if c.Key != nil {
		m.SetTsig(c.keyName(), algorithms[strings.ToLower(c.Key.Algorithm)], 300, time.Now().Unix())
	}
	c.Sent.Updates++
	// A fresh connection: miekg/dns chains the previous request MAC into the next signature on a
	// reused connection (meant for AXFR), which a server rightly calls BADSIG.
	dc, err := c.dnsClient()
	if err != nil {
		return err
	}
	r, _, err := dc.ExchangeContext(ctx, m, c.addr())
	err = c.netError(err)
	if r != nil && (r.Rcode != dns.RcodeSuccess || err != nil) {
		ue := &UpdateError{Zone: zone, Rcode: r.Rcode, Server: c.addr()}
		if c.Key != nil {
			ue.KeyName = strings.TrimSuffix(c.keyName(), ".")
		}
		if t := r.IsTsig(); t != nil {
			ue.TSIGCode = t.Error
		}
		ue.Reason = edeText(r)
		if r.Rcode != dns.RcodeSuccess {
			return ue
		}
	}
	if err != nil {
		if errors.Is(err, dns.ErrSig) || errors.Is(err, dns.ErrAuth) {
			return fmt.Errorf("UPDATE of zone %s: the reply's TSIG signature did not verify (wrong key_secret, or a reply not from the server): %w", zone, err)
		}
		return fmt.Errorf("UPDATE of zone %s: %w", zone, err)
	}
	return nil
}

// edeText is the reply's Extended DNS Error text (RFC 8914), if any.
func edeText(r *dns.Msg) string {
	if o := r.IsEdns0(); o != nil {
		for _, op := range o.Option {
			if e, ok := op.(*dns.EDNS0_EDE); ok && e.ExtraText != "" {
				return e.ExtraText
			}
		}
	}
	return ""
}
