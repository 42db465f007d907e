package pveschema

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Params are request parameters as PVE sees them: a string, or a []string for
// repeated form keys and JSON arrays.
type Params map[string]any

// Str returns a parameter as a string ("" when absent; arrays joined with commas).
func (p Params) Str(k string) string {
	switch v := p[k].(type) {
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	}
	return ""
}

// Has reports whether a parameter was given.
func (p Params) Has(k string) bool { _, ok := p[k]; return ok }

// Int returns an integer parameter (0 when absent or malformed; validated earlier).
func (p Params) Int(k string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(p.Str(k), "+"), 10, 64)
	return n
}

// Bool returns a boolean parameter already checked to be 0/1.
func (p Params) Bool(k string) bool { return p.Str(k) == "1" }

var (
	intRe = regexp.MustCompile(`^[+-]?\d+$`)
	numRe = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)
)

// Validate checks params against a method's parameter schema in PVE's order
// and returns PVE's per-parameter error texts (empty when valid).
func (s *Schema) Validate(schema *Param, params Params) map[string]string {
	errs := map[string]string{}
	if schema == nil {
		return errs
	}
	strict := schema.AdditionalProperties != nil && !bool(*schema.AdditionalProperties)
	for k, v := range params {
		p := schema.Lookup(k)
		if p == nil {
			if strict {
				errs[k] = "property is not defined in schema and the schema does not allow additional properties"
			}
			continue
		}
		if p = s.Instance(p, params); p == nil {
			errs[k] = "property is not defined in schema and the schema does not allow additional properties"
			continue
		}
		if m := s.checkValue(k, p, v); m != "" {
			errs[k] = m
		}
	}
	for k, p := range schema.Properties {
		if indexedKey.MatchString(k) || p.IsOptional() {
			continue
		}
		if p = s.Instance(p, params); p == nil {
			continue
		}
		if _, ok := params[k]; !ok {
			errs[k] = "property is missing and it is not optional"
		}
	}
	return errs
}

// Instance resolves protocol-dependent ("instance-types") properties: nil when
// the property does not apply to the discriminator's value.
func (s *Schema) Instance(p *Param, params Params) *Param {
	if len(p.OneOf) > 0 {
		for _, v := range p.OneOf {
			if slices.Contains(v.InstanceTypes, params.Str(p.TypeProperty)) {
				return v
			}
		}
		return nil
	}
	if len(p.InstanceTypes) > 0 && p.TypeProperty != "" && !slices.Contains(p.InstanceTypes, params.Str(p.TypeProperty)) {
		return nil
	}
	return p
}

func (s *Schema) checkValue(path string, p *Param, v any) string {
	if p.Type == "array" {
		items, ok := v.([]string)
		if !ok {
			items = []string{v.(string)}
		}
		if p.Items == nil {
			return ""
		}
		for _, it := range items {
			if m := s.checkScalar(path, p.Items, it); m != "" {
				return m
			}
		}
		return ""
	}
	sv, ok := v.(string)
	if !ok {
		arr := v.([]string)
		if strings.HasSuffix(p.formatName, "-list") {
			sv = strings.Join(arr, ",")
		} else {
			return fmt.Sprintf("type check ('%s') failed - got ARRAY", typeName(p))
		}
	}
	return s.checkScalar(path, p, sv)
}

func typeName(p *Param) string {
	if p.Type == "" {
		return "string"
	}
	return p.Type
}

// checkScalar applies type, format, pattern, maxLength, minLength,
// minimum/maximum, enum: the first failure wins.
func (s *Schema) checkScalar(path string, p *Param, v string) string {
	switch p.Type {
	case "boolean":
		if v != "0" && v != "1" {
			return fmt.Sprintf("type check ('boolean') failed - got '%s'", v)
		}
	case "integer":
		if !intRe.MatchString(v) {
			return fmt.Sprintf("type check ('integer') failed - got '%s'", v)
		}
	case "number":
		if !numRe.MatchString(v) {
			return fmt.Sprintf("type check ('number') failed - got '%s'", v)
		}
	}
	if p.formatName != "" {
		if m := s.CheckFormat(path, p.formatName, v); m != "" {
			return "invalid format - " + m
		}
	} else if p.formatObj != nil {
		if _, err := s.ParsePropertyString(path, p.formatObj, v); err != nil {
			return "invalid format - " + err.Error()
		}
	}
	if p.re != nil && !p.re.MatchString(v) {
		return "value does not match the regex pattern"
	}
	if p.MaxLength != nil && len(v) > int(*p.MaxLength) {
		return fmt.Sprintf("value may only be %d characters long", int(*p.MaxLength))
	}
	if p.MinLength != nil && len(v) < int(*p.MinLength) {
		return fmt.Sprintf("value must be at least %d characters long", int(*p.MinLength))
	}
	if p.Type == "integer" || p.Type == "number" {
		f, _ := strconv.ParseFloat(v, 64)
		if p.Minimum != nil && f < float64(*p.Minimum) {
			return fmt.Sprintf("value must have a minimum value of %s", fmtNum(float64(*p.Minimum)))
		}
		if p.Maximum != nil && f > float64(*p.Maximum) {
			return fmt.Sprintf("value must have a maximum value of %s", fmtNum(float64(*p.Maximum)))
		}
	}
	if len(p.Enum) > 0 && !slices.Contains(p.Enum, v) {
		return fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", v, strings.Join(p.Enum, ", "))
	}
	return ""
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// textError is a PVE message used verbatim (it ends in a newline, as Perl dies do).
type textError string

func (e textError) Error() string { return string(e) }

// PropError is a property-string parse failure; Error() is PVE's text.
type PropError struct{ Errors map[string]string }

func (e *PropError) Error() string {
	keys := make([]string, 0, len(e.Errors))
	for k := range e.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("format error\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, e.Errors[k])
	}
	return b.String()
}

// ParsePropertyString parses "k=v,k=v" against an inline format the way
// PVE::JSONSchema::parse_property_string does: a bare item goes to the
// default_key, alias keys are renamed (keyAlias records the original key),
// unknown keys are refused and "requires" is enforced. path prefixes error keys.
func (s *Schema) ParsePropertyString(path string, format map[string]*Param, v string) (map[string]string, error) {
	res, err := splitPropertyString(format, v)
	if err != nil {
		return nil, err
	}
	full := func(k string) string {
		if path != "" {
			return path + "." + k
		}
		return k
	}
	errs := map[string]string{}
	for k, val := range res {
		p, ok := format[k]
		if !ok || p.Alias != "" {
			errs[full(k)] = "property is not defined in schema and the schema does not allow additional properties"
			continue
		}
		if p.Type == "boolean" {
			val = normalBool(val)
			res[k] = val
		}
		if m := s.checkScalar(full(k), p, val); m != "" {
			errs[full(k)] = m
		}
		if p.Requires != "" {
			if _, ok := res[p.Requires]; !ok {
				errs[full(p.Requires)] = fmt.Sprintf("missing property - '%s' requires this property", full(k))
			}
		}
	}
	for k, p := range format {
		if p.Alias != "" || p.IsOptional() || p.Type == "" {
			continue
		}
		if _, ok := res[k]; !ok {
			errs[full(k)] = "property is missing and it is not optional"
		}
	}
	if len(errs) > 0 {
		return nil, &PropError{Errors: errs}
	}
	return res, nil
}

// splitPropertyString splits "k=v,k2=v2" into its keys, a bare value going to the format's
// default key and an alias to the key it stands for; a key given twice is an error.
func splitPropertyString(format map[string]*Param, v string) (map[string]string, error) {
	res := map[string]string{}
	dupErr := func(k string) error { return textError("duplicate key in comma-separated list property: " + k + "\n") }
	for _, part := range strings.Split(v, ",") {
		if part == "" {
			continue
		}
		k, val, hasEq := strings.Cut(part, "=")
		if !hasEq {
			dk := ""
			for name, p := range format {
				if p.DefaultKey {
					dk = name
				}
			}
			if dk == "" {
				return nil, textError("value without key, but schema does not define a default key\n")
			}
			if _, dup := res[dk]; dup {
				return nil, dupErr(dk)
			}
			res[dk] = part
			continue
		}
		p, ok := format[k]
		if ok && p.Alias != "" {
			if p.KeyAlias != "" {
				if _, dup := res[p.KeyAlias]; dup {
					return nil, dupErr(p.KeyAlias)
				}
				res[p.KeyAlias] = k
			}
			k = p.Alias
		}
		if _, dup := res[k]; dup {
			return nil, dupErr(k)
		}
		res[k] = val
	}
	return res, nil
}

// normalBool is a boolean property's value as PVE stores it: 1 or 0 for its spellings.
func normalBool(val string) string {
	switch strings.ToLower(val) {
	case "1", "on", "yes", "true":
		return "1"
	case "0", "off", "no", "false":
		return "0"
	}
	return val
}
