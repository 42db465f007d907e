package pveschema

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Privileges is PVE 9's privilege list (no VM.Monitor; VM.Replicate is new).
var Privileges = []string{
	"Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.AllocateTemplate", "Datastore.Audit",
	"Group.Allocate", "Mapping.Audit", "Mapping.Modify", "Mapping.Use", "Permissions.Modify",
	"Pool.Allocate", "Pool.Audit", "Realm.Allocate", "Realm.AllocateUser",
	"SDN.Allocate", "SDN.Audit", "SDN.Use",
	"Sys.AccessNetwork", "Sys.Audit", "Sys.Console", "Sys.Incoming", "Sys.Modify", "Sys.PowerMgmt", "Sys.Syslog",
	"User.Modify", "VM.Allocate", "VM.Audit", "VM.Backup", "VM.Clone",
	"VM.Config.CDROM", "VM.Config.CPU", "VM.Config.Cloudinit", "VM.Config.Disk", "VM.Config.HWType",
	"VM.Config.Memory", "VM.Config.Network", "VM.Config.Options", "VM.Console",
	"VM.GuestAgent.Audit", "VM.GuestAgent.FileRead", "VM.GuestAgent.FileSystemMgmt", "VM.GuestAgent.FileWrite",
	"VM.GuestAgent.Unrestricted", "VM.Migrate", "VM.PowerMgmt", "VM.Replicate", "VM.Snapshot", "VM.Snapshot.Rollback",
}

// formatDef is one named string format of formats.json.
type formatDef struct {
	Kind      string `json:"kind"`
	Regex     string `json:"regex"`
	MinLength int    `json:"minLength"`
	MaxLength int    `json:"maxLength"`
	Error     string `json:"error"`
	Family    any    `json:"family"`
	PrefixMin int    `json:"prefix_min"`
	Schema    map[string]struct {
		Type     string `json:"type"`
		Format   string `json:"format"`
		Optional bool   `json:"optional"`
		Required bool   `json:"required"`
		Requires string `json:"requires"`
	} `json:"schema"`

	re    *regexp.Regexp
	props map[string]*Param // property-string formats
}

func loadFormats(b []byte) (map[string]formatDef, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("parse formats: %w", err)
	}
	out := map[string]formatDef{}
	for name, r := range raw {
		if strings.HasPrefix(name, "_") {
			continue
		}
		var f formatDef
		if err := json.Unmarshal(r, &f); err != nil {
			return nil, fmt.Errorf("format %s: %w", name, err)
		}
		if f.Regex != "" {
			re, err := regexp.Compile(f.Regex)
			if err != nil {
				return nil, fmt.Errorf("format %s regex: %w", name, err)
			}
			f.re = re
		}
		if f.Kind == "property-string" {
			f.props = map[string]*Param{}
			for k, d := range f.Schema {
				p := &Param{Type: "string", formatName: d.Format, Requires: d.Requires}
				if d.Type == "ip" {
					p.formatName = "ip"
				}
				opt := Flag(!d.Required)
				p.Optional = &opt
				f.props[k] = p
			}
		}
		out[name] = f
	}
	return out, nil
}

// errMsg picks the validator message of a format ("a | b" alternatives) and fills in <v>.
func errMsg(tmpl string, idx int, v string) string {
	alts := strings.Split(tmpl, " | ")
	if idx >= len(alts) {
		idx = len(alts) - 1
	}
	return strings.ReplaceAll(alts[idx], "<v>", v)
}

// CheckFormat validates v against a named format. It returns "" when valid,
// else the validator's message (without the "invalid format - " prefix).
func (s *Schema) CheckFormat(path, name, v string) string {
	if base, ok := strings.CutSuffix(name, "-list"); ok {
		for _, item := range SplitList(v) {
			if m := s.CheckFormat(path, base, item); m != "" {
				return m
			}
		}
		return ""
	}
	if base, ok := strings.CutSuffix(name, "-opt"); ok {
		if v == "" {
			return ""
		}
		return s.CheckFormat(path, base, v)
	}
	if m, ok := s.checkIDFormat(name, v); ok {
		return m
	}
	if m, ok := s.checkAltFormat(path, name, v); ok {
		return m
	}
	f, ok := s.formats[name]
	if !ok {
		// Formats not described in formats.json (qemu disk/boot specs, firewall
		// specs...) are accepted as-is: the project does not send them.
		return ""
	}
	return s.checkByKind(path, f, v)
}

// firstFailure is PVE's way with an identifier: checks tried in order, the first that fails
// answers with its own alternative (by position) of the format's error text.
func firstFailure(f formatDef, v string, fails ...bool) string {
	for i, fail := range fails {
		if fail {
			return errMsg(f.Error, i, v) + "\n"
		}
	}
	return ""
}

// checkIDFormat checks the identifier formats whose PVE validator is hand-written (length
// checks around a regex); ok is false for any other format.
func (s *Schema) checkIDFormat(name, v string) (msg string, ok bool) {
	f := s.formats[name]
	switch name {
	case "pve-sdn-zone-id", "pve-sdn-vnet-id", "pve-sdn-controller-id":
		return firstFailure(f, v, !f.re.MatchString(v), len(v) > f.MaxLength), true
	case "pve-storage-id":
		return firstFailure(f, v, len(v) < 2, !f.re.MatchString(v)), true
	case "pve-poolid":
		return firstFailure(f, v, strings.Count(v, "/") > 2, !f.re.MatchString(v)), true
	case "pve-userid":
		m := firstFailure(f, v, len(v) < 3, len(v) > 64, !f.re.MatchString(v))
		return strings.ReplaceAll(m, "<n>", strconv.Itoa(len(v))), true
	case "pve-vmid":
		if !f.re.MatchString(v) {
			return "value does not look like a valid VM ID\n", true
		}
		return "", true
	}
	return "", false
}

// checkAltFormat checks the formats PVE accepts in several shapes (a keyword or an address, a
// subnet id or a CIDR, ...); ok is false for any other format.
func (s *Schema) checkAltFormat(path, name, v string) (msg string, ok bool) {
	valid := func(format string) bool { return s.CheckFormat(path, format, v) == "" }
	fail := func(bad bool) (string, bool) {
		if bad {
			return s.formats[name].Error + "\n", true
		}
		return "", true
	}
	switch name {
	case "pve-ipv4-config":
		return fail(v != "dhcp" && v != "manual" && !valid("CIDRv4"))
	case "pve-ipv6-config":
		return fail(v != "dhcp" && v != "manual" && v != "auto" && !valid("CIDRv6"))
	case "address":
		if valid("ip") || valid("dns-name") {
			return "", true
		}
		return errMsg(s.formats[name].Error, 0, v) + "\n", true
	case "pve-sdn-subnet-id":
		cidr := v
		if !strings.Contains(v, "/") {
			parts := strings.Split(v, "-")
			if len(parts) < 3 {
				return fail(true)
			}
			cidr = strings.Join(parts[1:len(parts)-1], "-") + "/" + parts[len(parts)-1]
		}
		return fail(s.CheckFormat(path, "CIDR", cidr) != "")
	case "pve-sdn-bgp-rt":
		m := s.formats[name].re.FindStringSubmatch(v)
		if m == nil {
			return fail(true)
		}
		for _, n := range m[1:] {
			if x, err := strconv.ParseUint(n, 10, 64); err != nil || x > 4294967295 {
				return fail(true)
			}
		}
		return "", true
	case "pve-volume-id-or-qm-path":
		if v == "none" || v == "cdrom" || strings.HasPrefix(v, "/") || valid("pve-volume-id") {
			return "", true
		}
		return fmt.Sprintf("unable to parse volume ID '%s'\n", v), true
	case "pve-priv":
		if !slices.Contains(Privileges, v) {
			return fmt.Sprintf("invalid privilege '%s'\n", v), true
		}
		return "", true
	}
	return "", false
}

// checkByKind checks a format described in formats.json by its kind.
func (s *Schema) checkByKind(path string, f formatDef, v string) string {
	switch f.Kind {
	case "property-string":
		if _, err := s.ParsePropertyString(path, f.props, v); err != nil {
			return err.Error()
		}
	case "regex":
		if f.MinLength > 0 && len(v) < f.MinLength || !f.re.MatchString(v) || f.MaxLength > 0 && len(v) > f.MaxLength {
			return errMsg(f.Error, 0, v) + "\n"
		}
	case "ip":
		a, err := netip.ParseAddr(v)
		if err != nil || a.Zone() != "" || !familyOK(f.Family, a) {
			return f.Error + "\n"
		}
	case "cidr":
		pfx, err := netip.ParsePrefix(v)
		if err != nil || pfx.Addr().Zone() != "" || !familyOK(f.Family, pfx.Addr()) || (f.PrefixMin > 0 && pfx.Bits() < f.PrefixMin) {
			return f.Error + "\n"
		}
	}
	return ""
}

func familyOK(fam any, a netip.Addr) bool {
	switch fam {
	case float64(4):
		return a.Is4()
	case float64(6):
		return a.Is6() && !a.Is4In6()
	}
	return true
}

// SplitList splits a "-list" value the way PVE does: on NUL if present, else on
// commas, semicolons and whitespace; empty items are dropped.
func SplitList(v string) []string {
	var f func(r rune) bool
	if strings.ContainsRune(v, 0) {
		f = func(r rune) bool { return r == 0 }
	} else {
		f = func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }
	}
	return strings.FieldsFunc(v, f)
}
