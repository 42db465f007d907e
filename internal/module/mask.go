package module

import (
	"sort"
	"strings"
)

// Ansible's own markers for masked values.
const (
	maskedParam = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
	maskedText  = "********"
)

// masker replaces every secret wherever it appears in a result: whole values, substrings of
// messages, diff text, map keys, nested lists and maps.
type masker struct {
	secrets []string // longest first, so a secret that contains another is masked whole
}

func newMasker(secrets []string) *masker {
	seen := map[string]bool{}
	var list []string
	for _, s := range secrets {
		// An empty or one-character secret would mask every occurrence of that character;
		// Ansible masks those too, but an empty one would loop.
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	return &masker{secrets: list}
}

func (m *masker) add(secrets ...string) {
	*m = *newMasker(append(m.secrets, secrets...))
}

func (m *masker) text(s string) string {
	for _, sec := range m.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, maskedText)
		}
	}
	return s
}

// value masks secrets in any JSON-shaped value.
func (m *masker) value(v any) any {
	if len(m.secrets) == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		return m.text(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.value(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.text(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[m.text(k)] = m.value(e)
		}
		return out
	default:
		return v
	}
}

// invocation masks the module's own parameters: a no_log option shows Ansible's marker, and any
// other value that contains a secret is masked as text.
func (m *masker) invocation(opts map[string]*Option, params map[string]any) map[string]any {
	out := make(map[string]any, len(params))
	for k, val := range params {
		o := opts[k]
		switch {
		case o != nil && o.NoLog && val != nil:
			out[k] = maskedParam
		case o != nil && o.Options != nil:
			out[k] = m.invocationNested(o, val)
		default:
			out[k] = m.value(val)
		}
	}
	return out
}

func (m *masker) invocationNested(o *Option, val any) any {
	switch x := val.(type) {
	case map[string]any:
		return m.invocation(o.Options, x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if d, ok := e.(map[string]any); ok {
				out[i] = m.invocation(o.Options, d)
			} else {
				out[i] = m.value(e)
			}
		}
		return out
	default:
		return m.value(val)
	}
}
