// Package jsonval reads the loosely typed values of decoded JSON (PVE answers numbers as numbers
// or strings, booleans as 0/1 or true/false) as the strings and integers the callers compare.
package jsonval

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// String is v as PVE would write it in a config: "" for nil, numbers without exponent or
// trailing zeros, booleans as "1"/"0".
func String(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "1"
		}
		return "0"
	default:
		return fmt.Sprint(x)
	}
}

// Int is v as an integer, 0 when it is none.
func Int(v any) int {
	n, err := strconv.Atoi(strings.TrimSpace(String(v)))
	if err != nil {
		return 0
	}
	return n
}
