package jsonval

import (
	"encoding/json"
	"testing"
)

func TestStringInt(t *testing.T) {
	for _, c := range []struct {
		v any
		s string
		n int
	}{
		{nil, "", 0}, {"x", "x", 0}, {float64(4096), "4096", 4096}, {0.5, "0.5", 0},
		{json.Number("12"), "12", 12}, {true, "1", 1}, {false, "0", 0}, {" 7 ", " 7 ", 7}, {int64(3), "3", 3},
	} {
		if got := String(c.v); got != c.s {
			t.Errorf("String(%#v) = %q, want %q", c.v, got, c.s)
		}
		if got := Int(c.v); got != c.n {
			t.Errorf("Int(%#v) = %d, want %d", c.v, got, c.n)
		}
	}
}
