package dnsupdate

// The nsupdate_tsig Ansible module: it turns the task's options into a converge and the
// converge's outcome into the module result.

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/miekg/dns"
)

func algChoices() []any {
	var out []any
	for _, a := range AlgorithmNames() {
		out = append(out, a)
	}
	return out
}

func recordOptions(top bool) map[string]*module.Option {
	o := map[string]*module.Option{
		"record": {Type: module.TypeStr, Aliases: []string{"name"}},
		"type":   {Type: module.TypeStr, Default: "A"},
		"ttl":    {Type: module.TypeInt},
		// raw: a string is one value; Ansible's list type would split a TXT value on commas.
		"values": {Type: module.TypeRaw, Aliases: []string{"value"}},
		"state":  {Type: module.TypeStr, Choices: []any{"present", "absent", "exact"}},
		"ptr":    {Type: module.TypeBool},
	}
	if top {
		o["state"].Default = "present"
		o["ptr"].Default = false
	} else {
		o["record"].Required = true
	}
	return o
}

// Options are nsupdate_tsig's options (spec declares their rules). The embedded Record is the
// single record set given at the top level; Records is the list form (exactly one is given).
type Options struct {
	Record
	Endpoint
	Zone        string    `opt:"zone"`
	Timeout     int       `opt:"timeout"`
	Read        string    `opt:"read"`
	Owner       string    `opt:"owner"`
	OwnerPrefix string    `opt:"owner_prefix"`
	Adopt       bool      `opt:"adopt"`
	Records     *[]Record `opt:"records"`
	Reverse     *Reverse  `opt:"reverse"`
	DNSRecords  int       `opt:"dns_records"`
}

// Record is one record set; nil is "not given" (an entry of records then takes the top level's).
type Record struct {
	TTL    *int    `opt:"ttl"`
	Record string  `opt:"record"`
	State  *string `opt:"state"`
	Type   string  `opt:"type"`
	PTR    *bool   `opt:"ptr"`
	Values any     `opt:"values"`
}

// Endpoint is the server a zone's updates go to and the key that signs them. The top level's
// serves the forward zone (its spec gives the defaults, so Port is set); reverse's overrides
// what differs for the reverse zone ("" and nil: the forward one's).
type Endpoint struct {
	Server       string `opt:"server"`
	Port         *int   `opt:"port"`
	KeyName      string `opt:"key_name"`
	KeySecret    string `opt:"key_secret"`
	KeyAlgorithm string `opt:"key_algorithm"`
	Protocol     string `opt:"protocol"`
}

// endpointOptions declares Endpoint's options; at the top level they have their defaults and
// the server and key are required.
func endpointOptions(top bool) map[string]*module.Option {
	o := map[string]*module.Option{
		"server":        {Type: module.TypeStr},
		"port":          {Type: module.TypeInt},
		"key_name":      {Type: module.TypeStr},
		"key_secret":    {Type: module.TypeStr, NoLog: true},
		"key_algorithm": {Type: module.TypeStr, Choices: algChoices()},
		"protocol":      {Type: module.TypeStr, Choices: []any{"tcp", "udp"}},
	}
	if top {
		o["server"].Required, o["key_name"].Required, o["key_secret"].Required = true, true, true
		o["port"].Default, o["key_algorithm"].Default, o["protocol"].Default = 53, "hmac-sha256", "tcp"
	}
	return o
}

// Reverse is the reverse zone and how its endpoint differs from the forward one.
type Reverse struct {
	Endpoint
	Zone string `opt:"zone"`
}

// Module is nsupdate_tsig: plugins/modules/nsupdate_tsig.py documents it.
func Module() module.Entry { return module.Declare(spec(), handle) }

func spec() module.Spec {
	reverse := endpointOptions(false)
	reverse["zone"] = &module.Option{Type: module.TypeStr}
	opts := map[string]*module.Option{
		"zone":         {Type: module.TypeStr},
		"timeout":      {Type: module.TypeInt, Default: 10},
		"read":         {Type: module.TypeStr, Default: "auto", Choices: []any{"auto", "query", "axfr"}},
		"owner":        {Type: module.TypeStr},
		"owner_prefix": {Type: module.TypeStr, Default: "_dvt-"},
		"adopt":        {Type: module.TypeBool, Default: false},
		"records":      {Type: module.TypeList, Elements: module.TypeDict, Options: recordOptions(false)},
		"reverse":      {Type: module.TypeDict, Options: reverse, RequiredTogether: [][]string{{"key_name", "key_secret"}}},
		"dns_records":  {Type: module.TypeInt, Default: 0},
	}
	maps.Copy(opts, endpointOptions(true))
	maps.Copy(opts, recordOptions(true))
	return module.Spec{
		Options:           opts,
		SupportsCheckMode: true,
		MutuallyExclusive: [][]string{{"record", "records"}},
		RequiredOneOf:     [][]string{{"record", "records"}},
		// Adopting means writing this owner's registry records: without an owner there is none.
		RequiredIf: []module.RequiredIf{{Key: "adopt", Value: true, Requires: []string{"owner"}}},
	}
}

// handle is nsupdate_tsig's handler.
func handle(m *module.Module, o *Options) (module.Result, error) {
	m.AddSecret(o.KeySecret)
	rev := o.Reverse
	if rev != nil && rev.KeySecret != "" {
		m.AddSecret(rev.KeySecret)
	}
	// Checked before any query: a secret that is not base64 would only fail at UPDATE time, and
	// not at all when nothing needs changing. The messages never quote the secret.
	if err := checkSecret("key_secret", o.KeySecret); err != nil {
		return module.Result{}, err
	}
	if rev != nil && rev.KeySecret != "" {
		if err := checkSecret("reverse.key_secret", rev.KeySecret); err != nil {
			return module.Result{}, err
		}
	}
	if o.Timeout <= 0 {
		return module.Result{}, fmt.Errorf("timeout must be a positive number of seconds, got %d", o.Timeout)
	}
	if o.DNSRecords < 0 {
		return module.Result{}, fmt.Errorf("dns_records must be at least 1 (the tenant's envelope.dns_records), or 0 for none; got %d", o.DNSRecords)
	}
	fwd := &Client{
		Server: o.Server, Port: *o.Port, Protocol: o.Protocol,
		Timeout: time.Duration(o.Timeout) * time.Second,
		Key:     &Key{Name: o.KeyName, Algorithm: o.KeyAlgorithm, Secret: o.KeySecret},
	}
	defer func() { _ = fwd.Close() }()
	if err := checkPort("port", fwd.Port); err != nil {
		return module.Result{}, err
	}
	zone := o.Zone
	req := Request{
		Forward:    fwd,
		Zone:       zone,
		Read:       ReadMode(o.Read),
		Ownership:  Ownership{Owner: o.Owner, Prefix: o.OwnerPrefix, Adopt: o.Adopt},
		PTR:        map[string]bool{},
		CheckMode:  m.CheckMode,
		MaxRecords: o.DNSRecords,
	}
	if req.Read == ReadAXFR && zone == "" {
		return module.Result{}, fmt.Errorf("read=axfr needs zone: the zone to transfer must be named")
	}
	if owner := req.Ownership.Owner; owner != "" && strings.ContainsAny(owner, ",= \"") {
		return module.Result{}, fmt.Errorf("owner %q: must not contain commas, '=', quotes or spaces", owner)
	}
	// record and records are mutually exclusive and one is required: no list means one record.
	single := o.Records == nil
	entries := []Record{o.Record}
	if !single {
		entries = *o.Records
	}
	for i, e := range entries {
		d, ptr, err := desired(e, &o.Record, zone)
		if err != nil {
			if len(entries) > 1 || !single {
				return module.Result{}, fmt.Errorf("records[%d]: %w", i, err)
			}
			return module.Result{}, err
		}
		req.Sets = append(req.Sets, d)
		if ptr {
			req.PTR[d.Set.Key()] = true
		}
	}
	if len(req.PTR) > 0 && rev != nil {
		rc, err := reverseClient(rev, fwd)
		if err != nil {
			return module.Result{}, err
		}
		defer func() { _ = rc.Close() }()
		req.Reverse = rc
		req.ReverseZone = rev.Zone
	}

	res, err := Converge(m.Context(), req)
	out := result(res, m.CheckMode)
	if err != nil {
		return out, module.Fail(err.Error(), out.Values)
	}
	return out, nil
}

// checkSecret refuses a TSIG secret that is not base64 (RFC 8945 keys are base64 in every
// server's configuration) or decodes to nothing.
func checkSecret(field, s string) error {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) == 0 {
		return fmt.Errorf("%s: not a base64 TSIG secret (%d characters given; copy it from the attachment file or the server's key)", field, len(s))
	}
	return nil
}

func checkPort(name string, p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("%s must be between 1 and 65535, got %d", name, p)
	}
	return nil
}

func reverseClient(rev *Reverse, fwd *Client) (*Client, error) {
	rc := &Client{Server: fwd.Server, Port: fwd.Port, Protocol: fwd.Protocol, Timeout: fwd.Timeout}
	k := *fwd.Key
	rc.Key = &k
	if rev.Port != nil {
		if err := checkPort("reverse.port", *rev.Port); err != nil {
			return nil, err
		}
		rc.Port = *rev.Port
	}
	if rev.KeyName != "" {
		rc.Key.Name, rc.Key.Secret = rev.KeyName, rev.KeySecret
	}
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&rc.Server, rev.Server}, {&rc.Protocol, rev.Protocol}, {&rc.Key.Algorithm, rev.KeyAlgorithm},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	return rc, nil
}

// desired converts one record entry into a dnsupdate request, naming the field on error.
func desired(e Record, top *Record, zone string) (Desired, bool, error) {
	var d Desired
	name := e.Record
	if name == "" {
		return d, false, fmt.Errorf("record: a name is required")
	}
	if zone == "" && !strings.HasSuffix(name, ".") && !strings.Contains(name, ".") {
		return d, false, fmt.Errorf("record %q: without zone, give a fully qualified name", name)
	}
	typName := e.Type
	if typName == "" {
		typName = "A"
	}
	t, err := ParseType(typName)
	if err != nil {
		return d, false, fmt.Errorf("type: %w", err)
	}
	st := ""
	for _, s := range []*string{e.State, top.State} {
		if st == "" && s != nil {
			st = *s
		}
	}
	d.State = State(st)
	values, err := valueList(e.Values)
	if err != nil {
		return d, false, fmt.Errorf("values of %s: %w", name, err)
	}
	if len(values) == 0 && d.State != Absent {
		return d, false, fmt.Errorf("values of %s: state=%s needs at least one value (only state=absent may omit them, to remove the whole set)", name, st)
	}
	var ttl uint32
	if e.TTL != nil {
		n := *e.TTL
		if n < 0 || n > math.MaxInt32 {
			return d, false, fmt.Errorf("ttl of %s: must be a whole number from 0 to 2147483647, got %v", name, n)
		}
		ttl, d.TTLSet = uint32(n), true
	}
	d.Set, err = NewSet(Fqdn(name, zone), t, ttl, values, zone)
	if err != nil {
		return d, false, err
	}
	ptrOpt := e.PTR
	if ptrOpt == nil {
		ptrOpt = top.PTR
	}
	ptr := ptrOpt != nil && *ptrOpt
	if ptr && t != dns.TypeA && t != dns.TypeAAAA {
		return d, false, fmt.Errorf("ptr: only A and AAAA records get PTR records, not %s (%s)", typName, name)
	}
	return d, ptr, nil
}

// valueList accepts one string or a list of scalars.
func valueList(v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{x}, nil
	case []any:
		out := make([]string, 0, len(x))
		for i, e := range x {
			switch s := e.(type) {
			case string:
				out = append(out, s)
			case nil, map[string]any, []any:
				return nil, fmt.Errorf("item %d is a %T, not a value", i, e)
			default:
				out = append(out, fmt.Sprint(s))
			}
		}
		return out, nil
	default:
		return []string{fmt.Sprint(x)}, nil
	}
}

// result turns a converge into the module result: diff, changes, counters, a message.
func result(res *Result, check bool) module.Result {
	out := module.Result{Values: map[string]any{}}
	if res == nil {
		return out
	}
	out.Changed = res.Changed
	before, after := Diff(res.Plans)
	out.Diffs = []module.Diff{{Before: before, After: after}}
	var changes []map[string]any
	var zones []string
	for _, p := range res.Plans {
		zones = append(zones, strings.TrimSuffix(p.Zone, "."))
		for _, c := range p.Changes {
			s := c.After
			if s.Name == "" {
				s = c.Before
			}
			changes = append(changes, map[string]any{
				"zone":   strings.TrimSuffix(p.Zone, "."),
				"record": strings.TrimSuffix(s.Name, "."),
				"type":   dns.TypeToString[s.Type],
				"before": View(c.Before),
				"after":  View(c.After),
			})
		}
	}
	sort.Strings(zones)
	if changes == nil {
		changes = []map[string]any{}
	}
	out.Values["changes"] = changes
	out.Values["zones"] = zones
	out.Values["dns_messages"] = res.Sent
	switch {
	case len(changes) == 0:
		out.Msg = "all record sets are already as requested"
	case check:
		out.Msg = fmt.Sprintf("%d record set(s) would change (check mode, nothing sent)", len(changes))
	default:
		out.Msg = fmt.Sprintf("%d record set(s) changed in %d UPDATE(s)", len(changes), len(res.Applied))
	}
	return out
}
