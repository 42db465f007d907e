// Package dnsgate is the RFC 2136 gateway in front of the shared authoritative server
// (docs/adr/0017-dns-quota.md). Tenants send their UPDATEs to it with their own TSIG key; it
// verifies the key, refuses whole what the tenant contract or the tenant's quota does not allow,
// and forwards the rest signed with its own key, the only key the server accepts updates of the
// tenants' zones from. Queries are relayed; transfers are refused.
package dnsgate

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/deevnet/tenant/internal/dnsquota"
)

// Gate is the gateway's state. Set the fields, then Load, then serve it (Server).
type Gate struct {
	Upstream  string     // the authoritative server, host:port
	Forward   Key        // the gateway's own key, allowed to update every tenant zone
	Substrate []Key      // keys not bound by any tenant's contract or quota
	Reader    ZoneReader // the zones' current records
	TenantDir string     // one file per tenant (Tenant)
	Log       io.Writer  // one line per refusal; never a secret
	Timeout   time.Duration

	ring  keyring
	mu    sync.RWMutex
	conf  *Config
	seen  string // the tenant directory's files, names, sizes and times, when last loaded
	rate  *dnsquota.Rate
	zones sync.Map // canonical zone -> *sync.Mutex: one update of a zone at a time
}

// Load (re)reads the tenant directory. On an error the previous configuration stays. After
// the first Load, every message's key lookup reloads the directory when a file in it changed,
// so a tenant onboarded while the gateway runs is served at once.
func (g *Gate) Load() error {
	seen := dirState(g.TenantDir)
	c, err := LoadDir(g.TenantDir)
	if err != nil {
		return err
	}
	keys := c.keys()
	for _, k := range g.Substrate {
		keys[dns.CanonicalName(k.Name)] = k
	}
	g.mu.Lock()
	g.conf, g.seen = c, seen
	if g.rate == nil {
		g.rate = dnsquota.NewRate(nil)
	}
	g.ring.refresh = g.refresh
	g.mu.Unlock()
	g.ring.set(keys)
	return nil
}

func (g *Gate) refresh() {
	g.mu.RLock()
	same := g.seen == dirState(g.TenantDir)
	g.mu.RUnlock()
	if same {
		return
	}
	if err := g.Load(); err != nil {
		g.logf("keeping the previous tenants: %v", err)
		g.mu.Lock()
		g.seen = dirState(g.TenantDir) // said once, not at every message
		g.mu.Unlock()
	}
}

// dirState names every tenant file with its size and modification time.
func dirState(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
	var b strings.Builder
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", f, st.Size(), st.ModTime().UnixNano())
		}
	}
	return b.String()
}

// Server is a miekg/dns server for the gateway on addr and network ("udp" or "tcp").
func (g *Gate) Server(addr, network string) *dns.Server {
	return &dns.Server{Addr: addr, Net: network, Handler: g, TsigProvider: &g.ring, MsgAcceptFunc: accept}
}

// accept takes queries and updates with one question (miekg/dns's default refuses updates);
// a message's size is bounded by the transport (64 KB over TCP).
func accept(h dns.Header) dns.MsgAcceptAction {
	const qr = 1 << 15
	if h.Bits&qr != 0 {
		return dns.MsgIgnore
	}
	switch op := int(h.Bits>>11) & 0xF; {
	case op != dns.OpcodeQuery && op != dns.OpcodeUpdate:
		return dns.MsgRejectNotImplemented
	case h.Qdcount != 1:
		return dns.MsgReject
	}
	return dns.MsgAccept
}

func (g *Gate) timeout() time.Duration {
	if g.Timeout <= 0 {
		return 10 * time.Second
	}
	return g.Timeout
}

func (g *Gate) logf(format string, a ...any) {
	if g.Log != nil {
		_, _ = fmt.Fprintf(g.Log, "dnsgate: "+format+"\n", a...)
	}
}

func (g *Gate) substrate(name string) bool {
	for _, k := range g.Substrate {
		if dns.CanonicalName(k.Name) == dns.CanonicalName(name) {
			return true
		}
	}
	return false
}

// ServeDNS implements dns.Handler.
func (g *Gate) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	switch {
	case req.Opcode == dns.OpcodeUpdate:
		g.update(w, req)
	case req.Opcode == dns.OpcodeQuery && len(req.Question) == 1 &&
		(req.Question[0].Qtype == dns.TypeAXFR || req.Question[0].Qtype == dns.TypeIXFR):
		// tenants may not transfer their zones (docs/security.md); the substrate reads the server
		g.reply(w, req, dns.RcodeNotAuth, "")
	case req.Opcode == dns.OpcodeQuery:
		g.query(w, req)
	default:
		g.reply(w, req, dns.RcodeNotImplemented, "")
	}
}

// query relays a query to the server unsigned and its answer back (signed when the query was).
func (g *Gate) query(w dns.ResponseWriter, req *dns.Msg) {
	q := req.Copy()
	if t := q.IsTsig(); t != nil {
		q.Extra = q.Extra[:len(q.Extra)-1]
	}
	c := &dns.Client{Net: "tcp", Timeout: g.timeout()}
	r, _, err := c.Exchange(q, g.Upstream)
	if err != nil {
		g.reply(w, req, dns.RcodeServerFailure, "")
		return
	}
	r.Id = req.Id
	g.sign(w, req, r)
	_ = w.WriteMsg(r)
}

// sign signs r with the request's key when the request's signature verified.
func (g *Gate) sign(w dns.ResponseWriter, req, r *dns.Msg) {
	if t := req.IsTsig(); t != nil && w.TsigStatus() == nil {
		r.SetTsig(t.Hdr.Name, t.Algorithm, 300, time.Now().Unix())
	}
}

// reply answers req with rcode; why, when given, goes in an Extended DNS Error (RFC 8914,
// Prohibited) so the client can name the rule.
func (g *Gate) reply(w dns.ResponseWriter, req *dns.Msg, rcode int, why string) {
	r := new(dns.Msg)
	r.SetRcode(req, rcode)
	if why != "" {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(dns.DefaultMsgSize)
		o.Option = append(o.Option, &dns.EDNS0_EDE{InfoCode: dns.ExtendedErrorCodeProhibited, ExtraText: why})
		r.Extra = append(r.Extra, o)
	}
	g.sign(w, req, r)
	_ = w.WriteMsg(r)
}

func (g *Gate) refuse(w dns.ResponseWriter, req *dns.Msg, who, why string) {
	g.logf("REFUSED update from %s (key %s): %s", w.RemoteAddr(), who, why)
	g.reply(w, req, dns.RcodeRefused, why)
}

func (g *Gate) update(w dns.ResponseWriter, req *dns.Msg) {
	t := req.IsTsig()
	if t == nil || w.TsigStatus() != nil {
		// unsigned, unknown key, bad signature: PowerDNS's unsigned REFUSED
		g.logf("REFUSED update from %s: not signed with a key the gateway knows", w.RemoteAddr())
		r := new(dns.Msg)
		r.SetRcode(req, dns.RcodeRefused)
		_ = w.WriteMsg(r)
		return
	}
	keyName := strings.TrimSuffix(t.Hdr.Name, ".")
	if len(req.Question) != 1 {
		g.refuse(w, req, keyName, "an UPDATE names exactly one zone")
		return
	}
	zone := dns.CanonicalName(req.Question[0].Name)
	if g.substrate(t.Hdr.Name) {
		g.forward(w, req, zone)
		return
	}
	g.mu.RLock()
	conf, rate := g.conf, g.rate
	g.mu.RUnlock()
	if conf.byZone[zone] == nil {
		// as PowerDNS answers for a zone it does not serve (the site zone, say)
		g.logf("NOTAUTH update from %s (key %s): zone %s is no tenant's", w.RemoteAddr(), keyName, zone)
		g.reply(w, req, dns.RcodeNotAuth, fmt.Sprintf("zone %s is no tenant's zone at this gateway", strings.TrimSuffix(zone, ".")))
		return
	}
	tn, ok := conf.byKey[dns.CanonicalName(t.Hdr.Name)]
	if !ok || conf.byZone[zone] != tn {
		g.refuse(w, req, keyName, fmt.Sprintf("key %s may not update zone %s", keyName, strings.TrimSuffix(zone, ".")))
		return
	}
	if err := dnsquota.CheckUpdate(zone, req); err != nil {
		g.refuse(w, req, keyName, err.Error())
		return
	}
	if err := rate.Take(tn.Tenant, tn.DNSUpdates); err != nil {
		g.refuse(w, req, keyName, err.Error())
		return
	}
	lock, _ := g.zones.LoadOrStore(zone, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout())
	defer cancel()
	rrs, err := g.Reader.Records(ctx, zone)
	if err != nil {
		g.logf("SERVFAIL update of %s (key %s): %v", zone, keyName, err)
		g.reply(w, req, dns.RcodeServerFailure, "the gateway could not read the zone")
		return
	}
	z := dnsquota.NewZone(zone, rrs)
	before := z.Count()
	z.Apply(req)
	if err := dnsquota.CheckRecords(zone, before, z.Count(), tn.DNSRecords); err != nil {
		g.refuse(w, req, keyName, err.Error())
		return
	}
	g.forward(w, req, zone)
}

// forward sends the update to the server signed with the gateway's key and answers the
// tenant with the server's rcode.
func (g *Gate) forward(w dns.ResponseWriter, req *dns.Msg, zone string) {
	m := new(dns.Msg)
	m.SetUpdate(zone)
	m.Answer = req.Answer // prerequisites
	m.Ns = req.Ns
	for _, rr := range req.Extra {
		if rr.Header().Rrtype != dns.TypeTSIG && rr.Header().Rrtype != dns.TypeOPT {
			m.Extra = append(m.Extra, rr)
		}
	}
	m.SetTsig(dns.CanonicalName(g.Forward.Name), g.Forward.algorithm(), 300, time.Now().Unix())
	c := &dns.Client{Net: "tcp", Timeout: g.timeout(), TsigSecret: map[string]string{dns.CanonicalName(g.Forward.Name): g.Forward.Secret}}
	r, _, err := c.Exchange(m, g.Upstream)
	if r == nil {
		g.logf("SERVFAIL update of %s: forwarding: %v", zone, err)
		g.reply(w, req, dns.RcodeServerFailure, "")
		return
	}
	g.reply(w, req, r.Rcode, "")
}
