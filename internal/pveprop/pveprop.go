// Package pveprop reads and writes PVE's property strings and sizes ("virtio=...,bridge=...",
// "32G", PVE 9's "current=2048" memory), with no I/O and no dependency: tenant_vm, the envelope
// and the start guard read VM configurations with the same rules.
package pveprop

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Props is a parsed PVE property string such as "virtio=BC:24:11:AA:BB:CC,bridge=tn01v0".
// A bare value (no "=") is stored under the empty key, PVE's "default key".
type Props map[string]string

// ParseProps splits a PVE property string. It does not know the schema, so the caller decides
// what the default key means (for net0 a bare "virtio" is the model, for memory a number).
func ParseProps(s string) Props {
	p := Props{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			p[""] = k
			continue
		}
		p[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return p
}

// Format renders props with the given leading keys first, in order, then the rest sorted,
// the way PVE writes them back (net0: "<model>=<mac>,bridge=...,<rest sorted>").
func (p Props) Format(lead ...string) string {
	var out []string
	seen := map[string]bool{}
	for _, k := range lead {
		if v, ok := p[k]; ok {
			out = append(out, k+"="+v)
			seen[k] = true
		}
	}
	rest := make([]string, 0, len(p))
	for k := range p {
		if !seen[k] && k != "" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, k+"="+p[k])
	}
	return strings.Join(out, ",")
}

var sizeRE = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*([KMGT]?)$`)

// ParseSize reads a PVE size ("32G", "512M", "2048K", "10737418240") into bytes.
// A bare number is bytes for disks, as PVE writes them in volume strings.
func ParseSize(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil {
		return 0, fmt.Errorf("size %q: want a number with an optional K, M, G or T suffix", s)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[2]]
	return int64(f * mult), nil
}

// ParseMemory reads PVE 9's memory property string ("[current=]<MiB>") into MiB.
func ParseMemory(s string) (int, error) {
	p := ParseProps(s)
	v, ok := p["current"]
	if !ok {
		v = p[""]
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("memory %q: not a number of MiB", s)
	}
	return n, nil
}
