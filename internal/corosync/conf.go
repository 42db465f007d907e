// Package corosync reads and edits corosync.conf as corosync's own parser reads it, keeping every
// line it does not change (comments, order, indentation), so an edit's diff is the edit alone.
//
// The syntax (corosync exec/coroparse.c, man corosync.conf(5)): one item per line; `name {` opens
// a section and nothing may follow the brace on its line; `}` closes one; `key: value` is an item,
// the value running to the end of the line with its surrounding blanks trimmed; a line whose first
// non-blank is `#` is a comment. PVE writes the cluster's copy as /etc/pve/corosync.conf
// (PVE::Corosync::write_conf) and pmxcfs copies it to each node's /etc/corosync/corosync.conf.
package corosync

import (
	"errors"
	"fmt"
	"strings"
)

// Node is one line of the file and, for a section, everything up to its closing brace.
type Node struct {
	// Kind is the line's kind.
	Kind Kind
	// Key is a section's name or an item's key; Value an item's value.
	Key, Value string
	// Raw is the line as read (without its newline); rendered unchanged while the node is.
	Raw string
	// Close is a section's closing line as read.
	Close string
	// Children are a section's lines, in order.
	Children []*Node
	// Line is the 1-based line number the node was read from (0: added by an edit).
	Line int
}

// Kind is what a line is.
type Kind int

// The kinds of line.
const (
	// Other is a blank line or a comment.
	Other Kind = iota
	Item
	Section
)

// Conf is a parsed corosync.conf: its top-level lines.
type Conf struct {
	Top []*Node
	// trailingNewline: the file ended with a newline (corosync's files do; kept as found).
	trailingNewline bool
}

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("corosync.conf syntax")

// Parse reads text as corosync's parser does, naming the line of the first error.
func Parse(text string) (*Conf, error) {
	c := &Conf{trailingNewline: strings.HasSuffix(text, "\n")}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	type open struct{ node *Node }
	var stack []open
	add := func(n *Node) {
		if len(stack) == 0 {
			c.Top = append(c.Top, n)
			return
		}
		p := stack[len(stack)-1].node
		p.Children = append(p.Children, n)
	}
	for i, raw := range lines {
		no := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			add(&Node{Kind: Other, Raw: raw, Line: no})
		case line == "}":
			if len(stack) == 0 {
				return nil, fmt.Errorf("%w: line %d: '}' closes no section", ErrSyntax, no)
			}
			stack[len(stack)-1].node.Close = raw
			stack = stack[:len(stack)-1]
		case strings.HasSuffix(line, "{"):
			name := strings.TrimSpace(strings.TrimSuffix(line, "{"))
			if name == "" || strings.ContainsAny(name, "{}:") || strings.ContainsAny(name, " \t") {
				return nil, fmt.Errorf("%w: line %d: %q is not a section name followed by '{'", ErrSyntax, no, line)
			}
			n := &Node{Kind: Section, Key: name, Raw: raw, Line: no}
			add(n)
			stack = append(stack, open{n})
		case strings.Contains(line, "{"):
			// corosync: "Unexpected data after '{'"
			return nil, fmt.Errorf("%w: line %d: nothing may follow '{' on its line (%q)", ErrSyntax, no, line)
		default:
			key, value, ok := strings.Cut(line, ":")
			key = strings.TrimSpace(key)
			if !ok || key == "" || strings.ContainsAny(key, " \t}") {
				return nil, fmt.Errorf("%w: line %d: %q is neither 'key: value', 'name {', '}' nor a comment", ErrSyntax, no, line)
			}
			add(&Node{Kind: Item, Key: key, Value: strings.TrimSpace(value), Raw: raw, Line: no})
		}
	}
	if len(stack) > 0 {
		n := stack[len(stack)-1].node
		return nil, fmt.Errorf("%w: line %d: section %q is never closed", ErrSyntax, n.Line, n.Key)
	}
	return c, nil
}

// Render writes the file back: unchanged lines exactly as read, new ones indented as their
// siblings are.
func (c *Conf) Render() string {
	var b strings.Builder
	var walk func(nodes []*Node, depth int)
	walk = func(nodes []*Node, depth int) {
		for _, n := range nodes {
			b.WriteString(n.Raw)
			b.WriteByte('\n')
			if n.Kind == Section {
				walk(n.Children, depth+1)
				b.WriteString(n.Close)
				b.WriteByte('\n')
			}
		}
	}
	walk(c.Top, 0)
	out := b.String()
	if !c.trailingNewline {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}

// Section returns the first section at path (e.g. "quorum", "device"), or nil.
func (c *Conf) Section(path ...string) *Node {
	nodes := c.Top
	var found *Node
	for _, name := range path {
		found = nil
		for _, n := range nodes {
			if n.Kind == Section && n.Key == name {
				found = n
				break
			}
		}
		if found == nil {
			return nil
		}
		nodes = found.Children
	}
	return found
}

// Sections returns every section named name directly in parent's children (top level when nil).
func (c *Conf) Sections(parent *Node, name string) []*Node {
	nodes := c.Top
	if parent != nil {
		nodes = parent.Children
	}
	var out []*Node
	for _, n := range nodes {
		if n.Kind == Section && n.Key == name {
			out = append(out, n)
		}
	}
	return out
}

// Get returns the value of key in section s (the last one wins, as in corosync's cmap) and
// whether it is set.
func Get(s *Node, key string) (string, bool) {
	v, ok := "", false
	if s == nil {
		return v, ok
	}
	for _, n := range s.Children {
		if n.Kind == Item && n.Key == key {
			v, ok = n.Value, true
		}
	}
	return v, ok
}

// Set makes key's value in s value: every item of that key is rewritten (keeping its indent),
// or one is added after the section's last item. It reports whether anything changed.
func Set(s *Node, key, value string) bool {
	changed, seen := false, false
	for _, n := range s.Children {
		if n.Kind == Item && n.Key == key {
			seen = true
			if n.Value != value {
				n.Value, n.Raw, n.Line = value, indentOf(n.Raw)+key+": "+value, 0
				changed = true
			}
		}
	}
	if seen {
		return changed
	}
	insertItem(s, &Node{Kind: Item, Key: key, Value: value, Raw: childIndent(s) + key + ": " + value})
	return true
}

// Unset removes every item key from s and reports whether there was one.
func Unset(s *Node, key string) bool {
	return remove(s, func(n *Node) bool { return n.Kind == Item && n.Key == key })
}

// Subsection returns s's first section name, creating it (empty) after s's items when create.
func Subsection(s *Node, name string, create bool) *Node {
	for _, n := range s.Children {
		if n.Kind == Section && n.Key == name {
			return n
		}
	}
	if !create {
		return nil
	}
	ind := childIndent(s)
	n := &Node{Kind: Section, Key: name, Raw: ind + name + " {", Close: ind + "}"}
	s.Children = append(trimTrailingBlank(s.Children), n)
	return n
}

// RemoveSection removes every section name directly in s and reports whether there was one.
func RemoveSection(s *Node, name string) bool {
	return remove(s, func(n *Node) bool { return n.Kind == Section && n.Key == name })
}

func remove(s *Node, match func(*Node) bool) bool {
	kept := s.Children[:0]
	removed := false
	for _, n := range s.Children {
		if match(n) {
			removed = true
			continue
		}
		kept = append(kept, n)
	}
	s.Children = kept
	return removed
}

// insertItem puts n after s's last item (before its subsections and trailing comments), where
// corosync's own files keep their items.
func insertItem(s *Node, n *Node) {
	at := 0
	for i, c := range s.Children {
		if c.Kind == Item {
			at = i + 1
		}
	}
	s.Children = append(s.Children[:at], append([]*Node{n}, s.Children[at:]...)...)
}

func trimTrailingBlank(nodes []*Node) []*Node {
	for len(nodes) > 0 {
		last := nodes[len(nodes)-1]
		if last.Kind != Other || strings.TrimSpace(last.Raw) != "" {
			break
		}
		nodes = nodes[:len(nodes)-1]
	}
	return nodes
}

func indentOf(raw string) string { return raw[:len(raw)-len(strings.TrimLeft(raw, " \t"))] }

// childIndent is the indent of s's first child that has one, else s's own plus one level of the
// file's unit (PVE writes two spaces; corosync's example file a tab).
func childIndent(s *Node) string {
	for _, c := range s.Children {
		if c.Kind != Other {
			return indentOf(c.Raw)
		}
	}
	own := indentOf(s.Raw)
	if strings.Contains(own, "\t") {
		return own + "\t"
	}
	return own + "  "
}
