package sdnrender

import (
	"fmt"
	"strings"
)

// lineDiff shows the first differing line of two texts, for test failures.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d:\n want %q\n got  %q\n--- got:\n%s", i+1, a, b, got)
		}
	}
	return "(equal)"
}
