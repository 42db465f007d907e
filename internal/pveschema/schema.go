// Package pveschema is the embedded Proxmox VE API schema (subset.json plus a
// few paths of apidata.json, and formats.json) compiled into a router and a
// validator that refuses what PVE refuses, with PVE's messages. pvesim routes
// and validates with it and sdnrender reads its formats, so it sits below both
// rather than inside the simulator.
package pveschema

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The schema is embedded so that the binary validates exactly like the
// PVE version it was generated from, without the shared directory at run time.
//
//go:embed subset.json extra.json quorum.json formats.json
var schemaFS embed.FS

// Flag is PVE's 0/1 schema Flag; JSON carries it as a number or a boolean.
type Flag bool

func (f *Flag) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	*f = s == "1" || s == "true"
	return nil
}

// Num is a schema number; a few are strings in the generated schema.
type Num float64

func (n *Num) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(strings.Trim(string(b), `"`), 64)
	if err != nil {
		return fmt.Errorf("schema number %s: %w", b, err)
	}
	*n = Num(f)
	return nil
}

// Param is one JSON-schema-like node of the PVE API schema.
type Param struct {
	Type                 string            `json:"type"`
	Optional             *Flag             `json:"optional"`
	Format               json.RawMessage   `json:"format"`
	Pattern              string            `json:"pattern"`
	MaxLength            *Num              `json:"maxLength"`
	MinLength            *Num              `json:"minLength"`
	Minimum              *Num              `json:"minimum"`
	Maximum              *Num              `json:"maximum"`
	Enum                 []string          `json:"enum"`
	Items                *Param            `json:"items"`
	Properties           map[string]*Param `json:"properties"`
	AdditionalProperties *Flag             `json:"additionalProperties"`
	Requires             string            `json:"requires"`
	Alias                string            `json:"alias"`
	KeyAlias             string            `json:"keyAlias"`
	DefaultKey           Flag              `json:"default_key"`
	InstanceTypes        []string          `json:"instance-types"`
	TypeProperty         string            `json:"type-property"`
	Default              any               `json:"default"`
	OneOf                []*Param          `json:"oneOf"`

	// compiled
	re         *regexp.Regexp
	formatName string            // named format
	formatObj  map[string]*Param // inline property-string schema
	indexed    []indexedProp     // "net[n]" style keys of Properties
}

type indexedProp struct {
	prefix string
	max    int
	p      *Param
	name   string
}

// Method is the schema of one METHOD on one path.
type Method struct {
	Method      string          `json:"method"`
	Name        string          `json:"name"`
	AllowToken  *Flag           `json:"allowtoken"`
	Protected   Flag            `json:"protected"`
	Parameters  *Param          `json:"parameters"`
	Permissions json.RawMessage `json:"permissions"`
	Returns     json.RawMessage `json:"returns"`
	// ProxyTo names the parameter whose node pveproxy forwards the call to ("" when the
	// node answering the API handles it).
	ProxyTo string `json:"proxyto"`

	// Parsed Permissions: HasPermissions is false when the schema has none
	// (root only); Check is the "check" expression, User e.g. "all".
	HasPermissions bool   `json:"-"`
	Check          []any  `json:"-"`
	User           string `json:"-"`
}

type pathNode struct {
	Info map[string]*Method `json:"info"`
}

// Schema is the compiled API schema: routes plus parameter validators.
type Schema struct {
	paths   map[string]*pathNode
	routes  []route
	formats map[string]formatDef
}

type route struct {
	template string
	segs     []string
	literals int
}

// indexMax bounds the N of "key[n]" properties (net0..net31 ...), as qemu-server does.
var indexMax = map[string]int{
	"net": 31, "ipconfig": 31, "scsi": 30, "virtio": 15, "ide": 3, "sata": 5,
	"unused": 255, "usb": 13, "hostpci": 15, "serial": 3, "parallel": 2, "numa": 7,
	"virtiofs": 9, "mp": 255,
}

// Load parses and compiles the embedded schema.
func Load() (*Schema, error) {
	s := &Schema{paths: map[string]*pathNode{}}
	for _, f := range []string{"subset.json", "extra.json", "quorum.json"} {
		b, err := schemaFS.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		var doc struct {
			Paths map[string]*pathNode `json:"paths"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		for p, n := range doc.Paths {
			s.paths[p] = n
		}
	}
	fb, err := schemaFS.ReadFile("formats.json")
	if err != nil {
		return nil, fmt.Errorf("read formats: %w", err)
	}
	if s.formats, err = loadFormats(fb); err != nil {
		return nil, err
	}
	for p, n := range s.paths {
		segs := splitPath(p)
		lit := 0
		for _, sg := range segs {
			if !strings.HasPrefix(sg, "{") {
				lit++
			}
		}
		s.routes = append(s.routes, route{template: p, segs: segs, literals: lit})
		for m, mi := range n.Info {
			if mi.Parameters != nil {
				if err := s.compile(mi.Parameters); err != nil {
					return nil, fmt.Errorf("%s %s: %w", m, p, err)
				}
			}
			if err := mi.parsePermissions(); err != nil {
				return nil, fmt.Errorf("%s %s permissions: %w", m, p, err)
			}
		}
	}
	// Literal segments win over placeholders (".../fabrics/all" vs ".../{x}").
	sort.Slice(s.routes, func(i, j int) bool {
		if len(s.routes[i].segs) != len(s.routes[j].segs) {
			return len(s.routes[i].segs) < len(s.routes[j].segs)
		}
		if s.routes[i].literals != s.routes[j].literals {
			return s.routes[i].literals > s.routes[j].literals
		}
		return s.routes[i].template < s.routes[j].template
	})
	return s, nil
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// Match finds the route template for a concrete path and extracts its placeholders.
func (s *Schema) Match(path string) (string, map[string]string, bool) {
	segs := splitPath(path)
	for _, r := range s.routes {
		if len(r.segs) != len(segs) {
			continue
		}
		vars := map[string]string{}
		ok := true
		for i, sg := range r.segs {
			if strings.HasPrefix(sg, "{") {
				if segs[i] == "" {
					ok = false
					break
				}
				vars[strings.Trim(sg, "{}")] = segs[i]
			} else if sg != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return r.template, vars, true
		}
	}
	return "", nil, false
}

// Method returns the schema of METHOD on a route template (nil if none).
func (s *Schema) Method(template, method string) *Method {
	n := s.paths[template]
	if n == nil {
		return nil
	}
	return n.Info[method]
}

// Templates lists every route template with its methods, sorted.
func (s *Schema) Templates() map[string][]string {
	out := map[string][]string{}
	for p, n := range s.paths {
		for m := range n.Info {
			out[p] = append(out[p], m)
		}
		sort.Strings(out[p])
	}
	return out
}

var indexedKey = regexp.MustCompile(`^([a-z]+)\[n\]$`)

func (s *Schema) compile(p *Param) error {
	if p.Pattern != "" {
		re, err := CompilePerlRegex(p.Pattern)
		if err != nil {
			return fmt.Errorf("pattern %q: %w", p.Pattern, err)
		}
		p.re = re
	}
	if len(p.Format) > 0 {
		if p.Format[0] == '"' {
			if err := json.Unmarshal(p.Format, &p.formatName); err != nil {
				return err
			}
		} else {
			if err := json.Unmarshal(p.Format, &p.formatObj); err != nil {
				return fmt.Errorf("inline format: %w", err)
			}
			for _, sub := range p.formatObj {
				if err := s.compile(sub); err != nil {
					return err
				}
			}
		}
	}
	if p.Items != nil {
		if err := s.compile(p.Items); err != nil {
			return err
		}
	}
	for _, v := range p.OneOf {
		if err := s.compile(v); err != nil {
			return err
		}
	}
	for k, sub := range p.Properties {
		if err := s.compile(sub); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if m := indexedKey.FindStringSubmatch(k); m != nil {
			mx, ok := indexMax[m[1]]
			if !ok {
				mx = 31
			}
			p.indexed = append(p.indexed, indexedProp{prefix: m[1], max: mx, p: sub, name: k})
		}
	}
	return nil
}

// CompilePerlRegex translates a PVE (Perl) pattern to an anchored Go regexp,
// following formats.json's _rules.perl_regex_translation.
func CompilePerlRegex(p string) (*regexp.Regexp, error) {
	p = strings.ReplaceAll(p, "(?^:", "(?:")
	p = regexp.MustCompile(`\(\?\^([a-z]+):`).ReplaceAllString(p, "(?$1:")
	p = strings.ReplaceAll(p, "(?>", "(?:")
	p = regexp.MustCompile(`\{,(\d+)\}`).ReplaceAllString(p, "{0,$1}")
	p = strings.ReplaceAll(p, `\0`, `\x00`)
	// RE2 caps repeats at 1000; the length is checked separately by maxLength.
	p = regexp.MustCompile(`\{(\d+),(\d+)\}`).ReplaceAllStringFunc(p, func(m string) string {
		var a, b int
		_, _ = fmt.Sscanf(m, "{%d,%d}", &a, &b)
		if b > 1000 {
			if a == 0 {
				return "*"
			}
			return "+"
		}
		return m
	})
	return regexp.Compile("^(?:" + p + ")$")
}

// Lookup finds the schema of a parameter name, resolving "net0" to "net[n]".
func (p *Param) Lookup(name string) *Param {
	if sub, ok := p.Properties[name]; ok {
		return sub
	}
	for _, ip := range p.indexed {
		if strings.HasPrefix(name, ip.prefix) {
			rest := name[len(ip.prefix):]
			if rest == "" || (len(rest) > 1 && rest[0] == '0') {
				continue
			}
			n, err := strconv.Atoi(rest)
			if err == nil && n >= 0 && n <= ip.max {
				return ip.p
			}
		}
	}
	return nil
}

// IsOptional: an absent or 0 "optional" means required.
func (p *Param) IsOptional() bool { return p.Optional != nil && bool(*p.Optional) }

// Strict reports additionalProperties 0: unknown parameters are refused.
func (p *Param) Strict() bool { return p.AdditionalProperties != nil && !bool(*p.AdditionalProperties) }

// FormatName is the named format ("pve-node"), "" for none or an inline one.
func (p *Param) FormatName() string { return p.formatName }

// FormatObject is the inline property-string schema, nil when there is none.
func (p *Param) FormatObject() map[string]*Param { return p.formatObj }

// IsIndexedKey reports schema keys like "net[n]" that stand for net0..netN.
func IsIndexedKey(k string) bool { return indexedKey.MatchString(k) }

func (mi *Method) parsePermissions() error {
	if len(mi.Permissions) == 0 || string(mi.Permissions) == "null" {
		return nil
	}
	var ps struct {
		Check []any  `json:"check"`
		User  string `json:"user"`
	}
	if err := json.Unmarshal(mi.Permissions, &ps); err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	mi.HasPermissions, mi.Check, mi.User = true, ps.Check, ps.User
	return nil
}
