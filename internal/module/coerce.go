package module

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// typeName names a decoded JSON value the way the error messages speak of it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "str"
	case bool:
		return "bool"
	case json.Number, int, int64, float64:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// coerce converts a decoded JSON value to the option type the way Ansible's own modules do.
// It returns a warning when a value was converted in a way the user may not expect.
func coerce(v any, t Type) (out any, warning string, err error) {
	switch t {
	case TypeStr, "":
		return toStr(v)
	case TypePath:
		s, w, err := toStr(v)
		if err != nil {
			return nil, "", err
		}
		return expandPath(s.(string)), w, nil
	case TypeRaw:
		return normalizeNumbers(v), "", nil
	}
	// These conversions never warn.
	conv, ok := map[Type]func(any) (any, error){
		TypeInt:   func(v any) (any, error) { return toInt(v) },
		TypeFloat: func(v any) (any, error) { return toFloat(v) },
		TypeBool:  func(v any) (any, error) { return toBool(v) },
		TypeList:  func(v any) (any, error) { return toList(v) },
		TypeDict:  func(v any) (any, error) { return toDict(v) },
	}[t]
	if !ok {
		return nil, "", fmt.Errorf("unknown option type %q in the module's spec", t)
	}
	out, err = conv(v)
	return out, "", err
}

func toStr(v any) (any, string, error) {
	switch x := v.(type) {
	case string:
		return x, "", nil
	case json.Number:
		return x.String(), fmt.Sprintf("the value %s (a number) was converted to the string %q; quote it if that is not what you meant", x, x.String()), nil
	case bool:
		s := strconv.FormatBool(x)
		return s, fmt.Sprintf("the value %t (a bool) was converted to the string %q; quote it if that is not what you meant", x, s), nil
	default:
		return nil, "", fmt.Errorf("a %s cannot be converted to a string", typeName(v))
	}
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return int(i), nil
		}
		f, err := x.Float64()
		if err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int(f), nil
		}
		return 0, fmt.Errorf("%s is not a whole number", x)
	case int:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number", x)
		}
		return int(i), nil
	default:
		return 0, fmt.Errorf("a %s cannot be converted to an int", typeName(v))
	}
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		return x.Float64()
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", x)
		}
		return f, nil
	default:
		return 0, fmt.Errorf("a %s cannot be converted to a float", typeName(v))
	}
}

// The strings Ansible accepts as booleans (module_utils.parsing.convert_bool).
var (
	trueWords  = map[string]bool{"yes": true, "on": true, "1": true, "true": true, "y": true, "t": true, "1.0": true}
	falseWords = map[string]bool{"no": true, "off": true, "0": true, "false": true, "n": true, "f": true, "0.0": true}
)

func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		s := strings.ToLower(strings.TrimSpace(x))
		if trueWords[s] {
			return true, nil
		}
		if falseWords[s] {
			return false, nil
		}
		return false, fmt.Errorf("%q is not a boolean (use true/false, yes/no, on/off or 1/0)", x)
	case json.Number:
		switch x.String() {
		case "1", "1.0":
			return true, nil
		case "0", "0.0":
			return false, nil
		}
		return false, fmt.Errorf("%s is not a boolean (only 1 and 0 are)", x)
	default:
		return false, fmt.Errorf("a %s cannot be converted to a bool", typeName(v))
	}
}

func toList(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		// ansible-core 2.19+ hands a templated list to a binary module as its JSON text.
		if strings.HasPrefix(s, "[") {
			var l []any
			if err := decodeJSON([]byte(s), &l); err != nil {
				return nil, fmt.Errorf("looks like a JSON list but does not parse: %w", err)
			}
			return l, nil
		}
		if s == "" {
			return []any{}, nil
		}
		parts := strings.Split(x, ",")
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out, nil
	case json.Number, bool:
		s, _, _ := toStr(x)
		return []any{s}, nil
	default:
		return nil, fmt.Errorf("a %s cannot be converted to a list", typeName(v))
	}
}

func toDict(v any) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		if strings.HasPrefix(s, "{") {
			var d map[string]any
			if err := decodeJSON([]byte(s), &d); err != nil {
				return nil, fmt.Errorf("looks like a JSON object but does not parse: %w", err)
			}
			return d, nil
		}
		if s == "" {
			return map[string]any{}, nil
		}
		return parseKeyValues(s)
	default:
		return nil, fmt.Errorf("a %s cannot be converted to a dict", typeName(v))
	}
}

// parseKeyValues reads Ansible's "k1=v1, k2=v2" dict shorthand.
func parseKeyValues(s string) (map[string]any, error) {
	out := map[string]any{}
	for _, field := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		k, val, ok := strings.Cut(field, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is neither JSON nor key=value pairs", s)
		}
		out[k] = val
	}
	return out, nil
}

// expandPath expands ~ and environment variables as Ansible's path type does.
func expandPath(p string) string {
	p = os.ExpandEnv(p)
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = home + p[1:]
		}
	}
	return p
}

// normalizeNumbers turns json.Number leaves into int or float64 so handlers never see them.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeNumbers(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeNumbers(e)
		}
		return out
	default:
		return v
	}
}

// decodeJSON decodes with numbers kept exact, so "8" and 8 and 8.0 coerce the same way.
func decodeJSON(data []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}
