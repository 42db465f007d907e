// Package udiff produces unified diffs the way `diff -u` prints them (GNU
// diffutils): two header lines, @@ hunks with 3 lines of context, hunks
// closer than 2*context lines merged, and "\ No newline at end of file"
// markers. Options.IgnoreSpaceChange is `diff -b`. An empty result means the
// texts are equal (under the options).
package udiff

import (
	"fmt"
	"strings"
)

// Options control the comparison and the header lines.
type Options struct {
	From, To          string // header names, including any tab and timestamp
	Context           int    // lines of context; 0 means 3
	IgnoreSpaceChange bool   // diff -b: runs of blanks compare equal, trailing blanks ignored
}

type line struct {
	text  string // without the newline
	eol   bool   // ends with a newline
	match string // the comparison key
}

func split(s string, o Options) []line {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([]line, len(parts))
	for i, p := range parts {
		l := line{text: strings.TrimSuffix(p, "\n"), eol: strings.HasSuffix(p, "\n")}
		l.match = l.text
		if o.IgnoreSpaceChange {
			l.match = squeeze(l.text)
		}
		if !l.eol && !o.IgnoreSpaceChange {
			l.match += "\x00noeol" // a missing final newline is a change, except under -b
		}
		out[i] = l
	}
	return out
}

// squeeze is diff -b's view of a line: blank runs become one space, trailing blanks go.
func squeeze(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\r' || r == '\v' || r == '\f' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		} else if space {
			b.WriteByte(' ') // leading blanks count as one blank
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

type op struct {
	kind byte // ' ', '-', '+'
	l    line
}

// script is a shortest edit script by LCS (the texts here are small).
func script(a, b []line) []op {
	n, m := len(a), len(b)
	// lcs[i][j] = LCS length of a[i:], b[j:]
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i].match == b[j].match {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i].match == b[j].match:
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, op{'+', b[j]})
			j++
		default:
			ops = append(ops, op{'-', a[i]})
			i++
		}
	}
	return ops
}

// Unified returns the unified diff from a to b, or "" when they are equal.
func Unified(a, b string, o Options) string {
	ctx := o.Context
	if ctx <= 0 {
		ctx = 3
	}
	ops := script(split(a, o), split(b, o))
	changed := false
	for _, x := range ops {
		changed = changed || x.kind != ' '
	}
	if !changed {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", o.From, o.To)
	// positions (1-based line numbers) before each op
	type pos struct{ a, b int }
	at := make([]pos, len(ops)+1)
	pa, pb := 1, 1
	for i, x := range ops {
		at[i] = pos{pa, pb}
		if x.kind != '+' {
			pa++
		}
		if x.kind != '-' {
			pb++
		}
	}
	at[len(ops)] = pos{pa, pb}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		// extend while the next change is within 2*ctx unchanged lines
		end := i
		for k := i; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				end = k
				continue
			}
			if k-end > 2*ctx {
				break
			}
		}
		stop := min(end+ctx+1, len(ops))
		na, nb := 0, 0
		for _, x := range ops[start:stop] {
			if x.kind != '+' {
				na++
			}
			if x.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", rng(at[start].a, na), rng(at[start].b, nb))
		for _, x := range ops[start:stop] {
			out.WriteByte(x.kind)
			out.WriteString(x.l.text)
			out.WriteByte('\n')
			if !x.l.eol {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return out.String()
}

// rng prints a hunk range as GNU diff does: "l,n", "l" when n is 1, and the
// line before the hunk with ",0" when it is empty.
func rng(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
