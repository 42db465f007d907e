package pvesim

import (
	"fmt"
	"github.com/deevnet/tenant/internal/pveschema"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sample returns a schema-valid value for a parameter.
func sample(name string, p *pveschema.Param) string {
	byName := map[string]string{"size": "+1G", "tokenid": "tk1", "trunks": "10", "subnet": "10.0.0.0/24",
		"disk": "scsi0", "upid": "UPID:" + node + ":00000001:00000001:00000001:qmstart:1:root@pam:", "digest": "0",
		"snapname": "s1", "path": "/", "vlan-protocol": "802.1q", "protocol": "openfabric"}
	if v, ok := byName[name]; ok {
		return v
	}
	byFormat := map[string]string{
		"pve-node": node, "pve-node-list": node, "pve-vmid": "100", "pve-vmid-list": "100",
		"pve-sdn-zone-id": "zz1", "pve-sdn-vnet-id": "vv1", "pve-sdn-fabric-id": "ff1", "pve-sdn-controller-id": "cc1",
		"pve-sdn-ipam-id": "pve", "pve-sdn-dns-id": "dns1", "pve-sdn-subnet-id": "10.0.0.0/24",
		"pve-poolid": "p1", "dns-name": "host1", "ip": "10.0.0.1", "ipv4": "10.0.0.1", "ipv6": "fd00::1",
		"ip-list": "10.0.0.1", "address-list": "10.0.0.1", "CIDR": "10.0.0.0/24", "CIDRv4": "10.0.0.0/24",
		"pve-storage-id": "local-lvm", "pve-storage-id-list": "local-lvm", "pve-configid": "cores",
		"pve-configid-list": "cores", "pve-userid": "u1@pve", "pve-userid-list": "u1@pve", "pve-roleid": "R1",
		"pve-roleid-list": "R1", "pve-groupid-list": "g1", "pve-tokenid-list": "u1@pve!tk1", "pve-priv-list": "VM.Audit",
		"mac-addr": "BC:24:11:00:00:01", "pve-tag-list": "t1", "pve-iface": "eth0", "pve-iface-list": "eth0",
		"pve-volume-id": "local:iso/x.iso", "urlencoded": "abc", "pve-sdn-bgp-rt-list": "65000:1",
		"pve-task-status-type-list": "ok",
	}
	if len(p.Enum) > 0 {
		return p.Enum[0]
	}
	if p.FormatName() != "" {
		if v, ok := byFormat[p.FormatName()]; ok {
			return v
		}
	}
	if p.FormatObject() != nil {
		var parts []string
		for _, k := range sortedKeys(p.FormatObject()) {
			sp := p.FormatObject()[k]
			if sp.Alias != "" || sp.IsOptional() || sp.Type == "" {
				continue
			}
			v := sample(k, sp)
			if sp.DefaultKey {
				parts = append([]string{v}, parts...)
			} else {
				parts = append(parts, k+"="+v)
			}
		}
		return strings.Join(parts, ",")
	}
	if len(p.Enum) > 0 {
		return p.Enum[0]
	}
	switch p.Type {
	case "boolean":
		return "1"
	case "integer", "number":
		if p.Minimum != nil {
			return fmtNum(float64(*p.Minimum))
		}
		return "1"
	case "array":
		if p.Items != nil {
			return sample(name, p.Items)
		}
	}
	return "x1"
}

func isSchemaError(msg string) bool {
	for _, s := range []string{"property is missing", "type check", "not defined in schema", "invalid format",
		"does not match the regex", "characters long", "minimum value", "maximum value", "enumeration"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// TestSchemaWalk sends, for every METHOD and path of the embedded schema that
// has a handler, one schema-valid request (it must pass validation) and
// invalid ones (unknown, missing, mistyped and out-of-enum parameters) that
// must be refused with PVE's 400 and per-parameter message.
func TestSchemaWalk(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	tmpls := s.schema.Templates()
	keys := sortedKeys(tmpls)
	checked := 0
	for _, tmpl := range keys {
		for _, method := range tmpls[tmpl] {
			if s.handlers[method+" "+tmpl] == nil {
				continue
			}
			mi := s.schema.Method(tmpl, method)
			pathVars := map[string]bool{}
			path := placeholderRe.ReplaceAllStringFunc(tmpl, func(m string) string {
				name := m[1 : len(m)-1]
				pathVars[name] = true
				if name == "vmid" {
					return "9000"
				}
				if name == "userid" {
					// an existing user: the user and token checks look the user up before
					// the schema is validated, as PVE does (RPCEnvironment.pm check_user_exist)
					return "root@pam"
				}
				if name == "subnet" {
					return "zz1-10.0.0.0-24"
				}
				if name == "upid" {
					return url.PathEscape(sample(name, &pveschema.Param{}))
				}
				return sample(name, mi.Parameters.Properties[name])
			})
			valid := url.Values{}
			var props []string
			if mi.Parameters != nil {
				props = sortedKeys(mi.Parameters.Properties)
			}
			for _, k := range props {
				p := mi.Parameters.Properties[k]
				if pathVars[k] || p.IsOptional() || pveschema.IsIndexedKey(k) {
					continue
				}
				if p = s.schema.Instance(p, Params{"protocol": "openfabric"}); p == nil {
					continue
				}
				valid.Set(k, sample(k, p))
			}
			if mi.Parameters != nil && mi.Parameters.Properties["protocol"] != nil {
				valid.Set("protocol", "openfabric")
			}
			name := method + " " + tmpl
			t.Run(name, func(t *testing.T) {
				checked++
				s.Reset()
				c = rootClient(t, s)
				if mi.AllowToken != nil && !bool(*mi.AllowToken) {
					c = anonClient(t, s) // a ticket-only method open to the world (POST /access/ticket)
				}
				r := c.do(method, path, valid)
				if r.Status == 501 || (r.Status == 400 && isSchemaError(fmt.Sprint(r.Errors))) {
					t.Errorf("valid %v refused: %d %q %v", valid, r.Status, r.Message, r.Errors)
				}
				if mi.Parameters == nil {
					return
				}
				if mi.Parameters.Strict() {
					bad := cloneVals(valid)
					bad.Set("pvesimbogus", "1")
					r = c.do(method, path, bad)
					if r.Status != 400 || r.Message != "Parameter verification failed.\n" || r.Reason != "Parameter verification failed." ||
						r.Errors["pvesimbogus"] != "property is not defined in schema and the schema does not allow additional properties" {
						t.Errorf("unknown parameter: %d %v", r.Status, r.Errors)
					}
				}
				for _, k := range props {
					p := mi.Parameters.Properties[k]
					if pathVars[k] || pveschema.IsIndexedKey(k) || len(p.InstanceTypes) > 0 || len(p.OneOf) > 0 {
						continue
					}
					if !p.IsOptional() {
						bad := cloneVals(valid)
						bad.Del(k)
						r = c.do(method, path, bad)
						if r.Status != 400 || r.Errors[k] != "property is missing and it is not optional" {
							t.Errorf("missing %s: %d %v", k, r.Status, r.Errors)
						}
					}
					var badVal, want string
					switch {
					case p.Type == "boolean":
						badVal, want = "true", "type check ('boolean') failed - got 'true'"
					case p.Type == "integer":
						badVal, want = "abc", "type check ('integer') failed - got 'abc'"
					case len(p.Enum) > 0 && p.FormatName() == "" && p.Type == "string":
						badVal, want = "notinenum", fmt.Sprintf("value 'notinenum' does not have a value in the enumeration '%s'", strings.Join(p.Enum, ", "))
					case p.Maximum != nil && p.Type == "number":
						badVal, want = fmtNum(float64(*p.Maximum)+1), fmt.Sprintf("value must have a maximum value of %s", fmtNum(float64(*p.Maximum)))
					default:
						continue
					}
					bad := cloneVals(valid)
					bad.Set(k, badVal)
					r = c.do(method, path, bad)
					if r.Status != 400 || r.Errors[k] != want {
						t.Errorf("%s=%s: %d %v, want %q", k, badVal, r.Status, r.Errors, want)
					}
				}
			})
		}
	}
	if checked < 80 {
		t.Fatalf("only %d methods walked", checked)
	}
	t.Logf("walked %d METHOD+path pairs", checked)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func cloneVals(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// TestEveryUsedRouteHasAHandler lists the schema routes without a handler, so
// a missing one is a deliberate choice (they answer 501).
func TestEveryUsedRouteHasAHandler(t *testing.T) {
	s := startSim(t)
	var missing []string
	for tmpl, methods := range s.schema.Templates() {
		for _, m := range methods {
			if s.handlers[m+" "+tmpl] == nil {
				missing = append(missing, m+" "+tmpl)
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		if strings.Contains(m, "/sdn/zones") || strings.Contains(m, "/qemu/{vmid}/config") || strings.Contains(m, "/clone") || strings.Contains(m, "/cluster/sdn/vnets/{vnet}/subnets") {
			t.Errorf("core route without handler: %s", m)
		}
	}
	t.Logf("schema routes answering 501 (not simulated): %d\n%s", len(missing), strings.Join(missing, "\n"))
}

// TestRouteRegisteredTwice: two resources claiming one "METHOD /path" stop the server from being
// built, where a map alone would silently keep one of the two handlers.
func TestRouteRegisteredTwice(t *testing.T) {
	rs := routes{"GET /version": nil}
	defer func() {
		if recover() == nil {
			t.Error("a second handler for GET /version was accepted")
		}
	}()
	rs.add(routes{"GET /version": nil})
}
