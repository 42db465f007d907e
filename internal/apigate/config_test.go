package apigate

import (
	"math"
	"strings"
	"testing"
)

const goodConfig = `
listen: 127.0.0.1:8007
upstream: https://127.0.0.1:8006
upstream_ca: /etc/pve/pve-root-ca.pem
cert: /etc/pve/local/pve-ssl.pem
key: /etc/pve/local/pve-ssl.key
tenants: {rate: 20, burst: 40, concurrent: 2}
overrides:
  tdemo: {rate: 50, burst: 100, concurrent: 3}
others: {rate: 5, burst: 10, concurrent: 1}
unverified: {rate: 2, burst: 5, concurrent: 1}
exempt: [root@pam, substrate@pve]
`

func TestConfigAccepted(t *testing.T) {
	c, err := ParseConfig([]byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, key string
		limit     Limit
		bound     bool
	}{
		{"tenant-tdemo@pve", "tenant tdemo", Limit{50, 100, 3}, true},
		{"tenant-tother@pve", "tenant tother", Limit{20, 40, 2}, true},
		{"tenant-x@pam", "user tenant-x@pam", Limit{5, 10, 1}, true},
		{"alice@pve", "user alice@pve", Limit{5, 10, 1}, true},
		{"root@pam", "", Limit{}, false},
	} {
		key, l, bound := c.limitFor(tc.user)
		if key != tc.key || l != tc.limit || bound != tc.bound {
			t.Errorf("%s: %q %v %v, want %q %v %v", tc.user, key, l, bound, tc.key, tc.limit, tc.bound)
		}
	}
}

func TestConfigErrorsNameTheFieldAndRule(t *testing.T) {
	for _, tc := range []struct{ edit, old, want string }{
		{"rate: 0,", "rate: 20,", "tenants.rate: 0 is not a finite number above 0"},
		{"rate: .inf,", "rate: 20,", "tenants.rate: +Inf is not a finite number above 0"},
		{"burst: 0,", "burst: 40,", "tenants.burst: 0 is below 1"},
		{"concurrent: 0}", "concurrent: 2}", "tenants.concurrent: 0 is below 1"},
		{"  Bad_Name:", "  tdemo:", "overrides.Bad_Name: is not a tenant name"},
		{"exempt: [root]", "exempt: [root@pam, substrate@pve]", `exempt[0]: "root" is not user@realm`},
		{"upstream: http://127.0.0.1:8006", "upstream: https://127.0.0.1:8006", "upstream: \"http://127.0.0.1:8006\" is not https://host:port"},
		{"listen: ''", "listen: 127.0.0.1:8007", "listen: is required"},
		{"tenants: {rate: 20, burst: 40, concurrent: 2, ratee: 3}", "tenants: {rate: 20, burst: 40, concurrent: 2}", "field ratee not found"},
	} {
		if !strings.Contains(goodConfig, tc.old) {
			t.Fatalf("case %q: %q not in the good config", tc.want, tc.old)
		}
		_, err := ParseConfig([]byte(strings.Replace(goodConfig, tc.old, tc.edit, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to say %q", tc.edit, err, tc.want)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(goodConfig))
	f.Add([]byte("tenants: {rate: .nan, burst: 1, concurrent: 1}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			return
		}
		for _, l := range []Limit{c.Tenants, c.Others, c.Unverified} {
			if !(l.Rate > 0) || math.IsInf(l.Rate, 1) || l.Burst < 1 || l.Concurrent < 1 {
				t.Fatalf("accepted a limit that refuses every call: %+v", l)
			}
		}
	})
}
