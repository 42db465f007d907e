package preflight

import (
	"fmt"
	"strings"
)

// Lines is the table a human reads: one row per check (name, state, and what differs or what
// was found), each difference on a line of its own under its check, with what it breaks.
func Lines(checks []Check) []string {
	w := len("check")
	for _, c := range checks {
		w = max(w, len(c.Name))
	}
	row := func(a, b, c string) string { return strings.TrimRight(fmt.Sprintf("%-*s  %-8s %s", w, a, b, c), " ") }
	out := []string{row("check", "state", "found"), row(strings.Repeat("-", w), "--------", "-----")}
	for _, c := range checks {
		state := c.Status
		if c.Status == Differs && !c.Fatal {
			state = "warn"
		}
		out = append(out, row(c.Name, state, c.Found))
		if c.Status != Differs {
			continue
		}
		for _, d := range c.Differs {
			out = append(out, row("", "", "differs: "+d))
		}
		out = append(out, row("", "", "breaks: "+c.Breaks))
	}
	return out
}

// Summary is the module's msg: how many checks are ok, and which differ.
func Summary(checks []Check) string {
	n := map[string][]string{}
	for _, c := range checks {
		s := c.Status
		if s == Differs && !c.Fatal {
			s = "warn"
		}
		n[s] = append(n[s], c.Name)
	}
	msg := fmt.Sprintf("preflight: %d of %d checks ok", len(n[OK]), len(checks))
	for _, s := range []string{Differs, "warn", Unknown, Skipped} {
		if len(n[s]) > 0 {
			msg += fmt.Sprintf("; %s: %s", s, strings.Join(n[s], ", "))
		}
	}
	return msg
}
