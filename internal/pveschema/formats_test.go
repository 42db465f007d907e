package pveschema

import (
	"strings"
	"testing"
)

func TestNamedFormats(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ format, value, want string }{
		{"pve-sdn-zone-id", "tn01", ""},
		{"pve-sdn-zone-id", "tn-01", "zone ID 'tn-01' contains illegal characters\n"},
		{"pve-sdn-zone-id", "t", "zone ID 't' contains illegal characters\n"},
		{"pve-sdn-zone-id", "abcdefghi", "zone ID 'abcdefghi' can't be more length than 8 characters\n"},
		{"pve-sdn-vnet-id", "tn01v0", ""},
		{"pve-sdn-vnet-id", "v_1", "vnet ID 'v_1' contains illegal characters\n"},
		{"pve-sdn-controller-id", "evpn-ctl_1", ""},
		{"pve-sdn-fabric-id", "ufab", ""},
		{"pve-sdn-fabric-id", "u_fab", "Fabric ID 'u_fab' contains illegal characters\n"},
		{"pve-storage-id", "l", "storage ID 'l' cannot be shorter than 2 characters\n"},
		{"pve-storage-id", "local-lvm", ""},
		{"pve-storage-id", "local-", "storage ID 'local-' contains illegal characters\n"},
		{"pve-userid", "a@", "user name 'a@' is too short\n"},
		{"pve-userid", strings.Repeat("a", 61) + "@pve", "user name '" + strings.Repeat("a", 61) + "@pve' is too long (65 > 64)\n"},
		{"pve-userid", "tenant-tdemo@pve", ""},
		{"pve-userid", "no-realm", "value 'no-realm' does not look like a valid user name\n"},
		{"pve-poolid", "a/b/c", ""},
		{"pve-poolid", "a/b/c/d", "pool name 'a/b/c/d' nested too deeply (max levels = 3)\n"},
		{"pve-poolid", "a b", "pool name 'a b' contains invalid characters\n"},
		{"mac-addr", "BC:24:11:00:00:01", ""},
		{"mac-addr", "01:24:11:00:00:01", "value does not look like a valid unicast MAC address\n"},
		{"ipv4", "10.0.0.1", ""},
		{"ipv4", "010.0.0.1", "value does not look like a valid IPv4 address\n"},
		{"ipv4", "fd00::1", "value does not look like a valid IPv4 address\n"},
		{"ipv6", "fe80::1%eth0", "value does not look like a valid IPv6 address\n"},
		{"CIDRv4", "10.0.0.5/24", ""},
		{"CIDRv4", "10.0.0.0/7", "value does not look like a valid IPv4 CIDR network\n"},
		{"CIDR", "fd00:10::/64", ""},
		{"dns-name", "tdemo-1.tdemo.mobile.deevnet.net", ""},
		{"dns-name", "foo_bar", "value does not look like a valid DNS name\n"},
		{"dns-name", "foo.", "value does not look like a valid DNS name\n"},
		{"urlencoded", "ssh-ed25519%20AAAA", ""},
		{"urlencoded", "ssh-ed25519 AAAA", "invalid urlencoded string: ssh-ed25519 AAAA\n"},
		{"pve-tag-list", "a;B c,d", ""},
		{"pve-tag-list", "ok;-bad", "invalid characters in tag\n"},
		{"pve-node-list", "", ""},
		{"ip-list", "10.0.0.1 10.0.0.2;fd00::1", ""},
		{"address-list", "10.20.99.1 ns1.example.net", ""},
		{"address-list", "10.20.99.1 bad_name", "value does not look like a valid address: bad_name\n"},
		{"pve-sdn-bgp-rt-list", "65000:1,4294967295:4294967295", ""},
		{"pve-sdn-bgp-rt-list", "65000:4294967296", "value does not look like a valid bgp route-target\n"},
		{"pve-sdn-subnet-id", "tn01-10.20.129.0-24", ""},
		{"pve-sdn-subnet-id", "tn01-fd00:10::-64", ""},
		{"pve-sdn-subnet-id", "10.20.129.0/33", "value does not look like a valid CIDR network\n"},
		{"pve-ipv4-config", "dhcp", ""},
		{"pve-ipv6-config", "auto", ""},
		{"pve-ipv4-config", "10.0.0.1", "value does not look like a valid ipv4 network configuration\n"},
		{"pve-qm-ipconfig", "ip=10.20.129.10/24,gw=10.20.129.1", ""},
		{"pve-qm-ipconfig", "gw=10.20.129.1", "format error\nipconfig0.ip: missing property - 'ipconfig0.gw' requires this property\n"},
		{"pve-qm-ipconfig", "ip=10.20.129.10/24,foo=1", "format error\nipconfig0.foo: property is not defined in schema and the schema does not allow additional properties\n"},
		{"pve-priv-list", "VM.Audit,SDN.Use", ""},
		{"pve-priv-list", "VM.Monitor", "invalid privilege 'VM.Monitor'\n"},
	}
	for _, tc := range cases {
		if got := s.CheckFormat("ipconfig0", tc.format, tc.value); got != tc.want {
			t.Errorf("%s %q: got %q, want %q", tc.format, tc.value, got, tc.want)
		}
	}
}

func TestPerlRegexTranslation(t *testing.T) {
	alias, err := CompilePerlRegex(`(?^i:[\(\)-_.\w\d\s]{0,256})`)
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{"Tenant A (prod)", "a=b;c", ""} {
		if !alias.MatchString(ok) {
			t.Errorf("alias %q refused", ok)
		}
	}
	if alias.MatchString("tab\x7f") {
		t.Error("DEL accepted by alias pattern")
	}
	big, err := CompilePerlRegex(`[^\0]{0,4096}`)
	if err != nil {
		t.Fatalf("repeat over RE2's limit: %v", err)
	}
	if big.MatchString("a\x00b") {
		t.Error(`\0 not translated`)
	}
}

// FuzzParsePropertyString: the property-string parser never panics, and what
// it accepts has only schema keys.
func FuzzParsePropertyString(f *testing.F) {
	for _, s := range []string{"ip=10.0.0.1/24,gw=10.0.0.1", "virtio,bridge=vmbr0", "a=b=c", ",", "=", "ip6=auto,gw6=fe80::1"} {
		f.Add(s)
	}
	s, err := Load()
	if err != nil {
		f.Fatal(err)
	}
	ipc := s.formats["pve-qm-ipconfig"].props
	net := s.Method("/nodes/{node}/qemu/{vmid}/config", "POST").Parameters.Lookup("net0").FormatObject()
	f.Fuzz(func(t *testing.T, v string) {
		for _, format := range []map[string]*Param{ipc, net} {
			res, err := s.ParsePropertyString("x", format, v)
			if err != nil {
				continue
			}
			for k := range res {
				if format[k] == nil {
					t.Fatalf("%q: accepted unknown key %q", v, k)
				}
			}
		}
	})
}
