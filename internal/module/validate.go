package module

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// validator walks a spec over user values, collecting every error and warning, and the values
// that must be masked.
type validator struct {
	module   string
	getenv   func(string) string
	errs     []string
	warnings []string
	secrets  []string
	// given records the options the user set (after aliases), by path ("vms[0].cores"), for Opt.
	given map[string]bool
}

// where names a suboption's place for messages: "" at the top level, else " (found in vms[0])".
func where(path string) string {
	if path == "" {
		return ""
	}
	return " (found in " + path + ")"
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// validateOptions validates raw against opts and returns the coerced, defaulted parameters.
// In order: names (aliases, unknown options), environment fallbacks, secrets and what was
// given, the rules between options, then each option's value, then required_if on the result.
func (v *validator) validateOptions(opts map[string]*Option, raw map[string]any, path string, rules ruleSet) map[string]any {
	in := v.canonical(opts, raw, path)
	v.fallBack(opts, in)
	// No-log values are collected before any check, so that even an error message that quotes
	// the value is masked.
	for name, o := range opts {
		if o.NoLog {
			v.collectSecrets(in[name])
		}
	}
	for k, val := range in {
		if val != nil {
			v.given[join(path, k)] = true
		}
	}
	v.checkRules(rules, in, path)
	out := v.values(opts, in, path)
	v.checkRequiredIf(rules.requiredIf, out, path)
	return out
}

// canonical returns raw keyed by option names, aliases resolved; an unknown option and an
// alias set to another value than its option are errors. Ansible's own keys (_ansible_*) at
// the top level are dropped.
func (v *validator) canonical(opts map[string]*Option, raw map[string]any, path string) map[string]any {
	aliasOf := map[string]string{}
	for name, o := range opts {
		for _, a := range o.Aliases {
			aliasOf[a] = name
		}
	}
	in := map[string]any{}
	var unknown []string
	for _, k := range sortedKeys(raw) {
		val := raw[k]
		if path == "" && strings.HasPrefix(k, "_ansible_") {
			continue
		}
		name := k
		if _, ok := opts[k]; !ok {
			canon, isAlias := aliasOf[k]
			if !isAlias {
				unknown = append(unknown, join(path, k))
				continue
			}
			name = canon
			if prev, dup := raw[canon]; dup && !reflect.DeepEqual(prev, val) {
				v.errs = append(v.errs, fmt.Sprintf("both option '%s' and its alias '%s' are set, with different values%s", canon, k, where(path)))
				continue
			}
		}
		in[name] = val
	}
	if len(unknown) > 0 {
		v.errs = append(v.errs, fmt.Sprintf("Unsupported parameters for (%s) module: %s. Supported parameters include: %s.",
			v.module, strings.Join(unknown, ", "), strings.Join(supported(opts), ", ")))
	}
	return in
}

// fallBack fills, from the environment, the options the user did not give: the first of an
// option's variables that is set wins.
func (v *validator) fallBack(opts map[string]*Option, in map[string]any) {
	for name, o := range opts {
		if in[name] != nil || len(o.EnvFallback) == 0 {
			continue
		}
		for _, env := range o.EnvFallback {
			if val := v.getenv(env); val != "" {
				in[name] = val
				break
			}
		}
	}
}

// values returns every option's value, coerced and checked, its default when not given; a
// required option not given is an error, listed once for all of them.
func (v *validator) values(opts map[string]*Option, in map[string]any, path string) map[string]any {
	out := map[string]any{}
	var missing []string
	for _, name := range sortedKeys(opts) {
		o := opts[name]
		val, present := in[name]
		if !present || val == nil {
			if o.Required {
				missing = append(missing, name)
				continue
			}
			if o.Default == nil {
				out[name] = nil
				continue
			}
			val = jsonRoundTrip(o.Default)
		}
		out[name] = v.validateValue(name, o, val, path)
	}
	if len(missing) > 0 {
		v.errs = append(v.errs, fmt.Sprintf("missing required arguments: %s%s", strings.Join(missing, ", "), where(path)))
	}
	return out
}

// validateValue coerces one option's value and checks choices, elements and suboptions.
func (v *validator) validateValue(name string, o *Option, val any, path string) any {
	t := o.Type
	if t == "" {
		t = TypeStr
	}
	cv, warn, err := coerce(val, t)
	if err != nil {
		v.errs = append(v.errs, fmt.Sprintf("argument '%s' is of type %s%s and we were unable to convert to %s: %v", name, typeName(val), where(path), t, err))
		return nil
	}
	if warn != "" {
		v.warnings = append(v.warnings, fmt.Sprintf("option '%s'%s: %s", name, where(path), warn))
	}
	if o.NoLog {
		v.collectSecrets(cv)
	}
	switch t {
	case TypeList:
		l := cv.([]any)
		out := make([]any, 0, len(l))
		for i, e := range l {
			epath := fmt.Sprintf("%s[%d]", join(path, name), i)
			et := o.Elements
			if et == "" {
				out = append(out, normalizeNumbers(e))
				continue
			}
			ce, w, err := coerce(e, et)
			if err != nil {
				v.errs = append(v.errs, fmt.Sprintf("elements of argument '%s' are of type %s and we were unable to convert to %s%s: %v", name, typeName(e), et, where(epath), err))
				continue
			}
			if w != "" {
				v.warnings = append(v.warnings, fmt.Sprintf("option %s: %s", epath, w))
			}
			if o.NoLog {
				v.collectSecrets(ce)
			}
			if et == TypeDict && o.Options != nil {
				ce = v.validateOptions(o.Options, ce.(map[string]any), epath, o.rules())
			} else if !v.inChoices(name, o, ce, epath) {
				continue
			}
			out = append(out, ce)
		}
		return out
	case TypeDict:
		if o.Options != nil {
			return v.validateOptions(o.Options, cv.(map[string]any), join(path, name), o.rules())
		}
		return normalizeNumbers(cv)
	}
	v.inChoices(name, o, cv, path)
	return cv
}

func (v *validator) inChoices(name string, o *Option, val any, path string) bool {
	if len(o.Choices) == 0 {
		return true
	}
	strs := make([]string, len(o.Choices))
	for i, c := range o.Choices {
		if equalValue(c, val) {
			return true
		}
		strs[i] = fmt.Sprint(c)
	}
	v.errs = append(v.errs, fmt.Sprintf("value of %s must be one of: %s, got: %v%s", name, strings.Join(strs, ", "), val, where(path)))
	return false
}

// ruleSet is the cross-option rules of one level of the spec.
type ruleSet struct {
	mutuallyExclusive, requiredTogether, requiredOneOf [][]string
	requiredIf                                         []RequiredIf
}

func (o *Option) rules() ruleSet {
	return ruleSet{o.MutuallyExclusive, o.RequiredTogether, o.RequiredOneOf, o.RequiredIf}
}

func (s Spec) rules() ruleSet {
	return ruleSet{s.MutuallyExclusive, s.RequiredTogether, s.RequiredOneOf, s.RequiredIf}
}

func isSet(in map[string]any, k string) bool { return in[k] != nil }

func (v *validator) checkRules(r ruleSet, in map[string]any, path string) {
	for _, group := range r.mutuallyExclusive {
		var set []string
		for _, k := range group {
			if isSet(in, k) {
				set = append(set, k)
			}
		}
		if len(set) > 1 {
			v.errs = append(v.errs, fmt.Sprintf("parameters are mutually exclusive: %s%s", strings.Join(group, "|"), where(path)))
		}
	}
	for _, group := range r.requiredTogether {
		n := 0
		for _, k := range group {
			if isSet(in, k) {
				n++
			}
		}
		if n > 0 && n < len(group) {
			v.errs = append(v.errs, fmt.Sprintf("parameters are required together: %s%s", strings.Join(group, ", "), where(path)))
		}
	}
	for _, group := range r.requiredOneOf {
		found := false
		for _, k := range group {
			found = found || isSet(in, k)
		}
		if !found {
			v.errs = append(v.errs, fmt.Sprintf("one of the following is required: %s%s", strings.Join(group, ", "), where(path)))
		}
	}
}

// checkRequiredIf runs after coercion and defaults, so `state: present` matches a defaulted state.
func (v *validator) checkRequiredIf(rules []RequiredIf, params map[string]any, path string) {
	for _, r := range rules {
		if !equalValue(r.Value, params[r.Key]) {
			continue
		}
		var missing []string
		for _, k := range r.Requires {
			if !isSet(params, k) {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 || (r.Any && len(missing) < len(r.Requires)) {
			continue
		}
		quant := "all"
		if r.Any {
			quant = "any"
		}
		v.errs = append(v.errs, fmt.Sprintf("%s is %v but %s of the following are missing: %s%s", r.Key, r.Value, quant, strings.Join(missing, ", "), where(path)))
	}
}

// equalValue compares a spec value (Go literal) with a coerced value.
func equalValue(spec, got any) bool {
	return reflect.DeepEqual(jsonNormalize(spec), jsonNormalize(got))
}

func jsonNormalize(v any) any {
	return normalizeNumbers(jsonRoundTrip(v))
}

// jsonRoundTrip turns any Go value into the shapes decodeJSON produces ([]any, map[string]any,
// json.Number), so spec defaults go through the same coercion as user input.
func jsonRoundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := decodeJSON(b, &out); err != nil {
		return v
	}
	return out
}

func (v *validator) collectSecrets(val any) {
	switch x := val.(type) {
	case nil:
	case string:
		v.secrets = append(v.secrets, x)
	case json.Number:
		v.secrets = append(v.secrets, x.String())
	case bool:
	case []any:
		for _, e := range x {
			v.collectSecrets(e)
		}
	case map[string]any:
		for _, e := range x {
			v.collectSecrets(e)
		}
	default:
		v.secrets = append(v.secrets, fmt.Sprint(x))
	}
}

func supported(opts map[string]*Option) []string {
	var names []string
	for name, o := range opts {
		names = append(names, name)
		names = append(names, o.Aliases...)
	}
	sort.Strings(names)
	return names
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
