package vm

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/pveprop"
)

// EncodeSSHKeys percent-encodes keys the way PVE's "urlencoded" format wants: every byte
// outside [-a-zA-Z0-9_.!~*'()] becomes %XX, so a space is %20 (never "+") and a newline %0A.
// Keys are joined one per line; the value is sent and stored in this encoded form.
func EncodeSSHKeys(keys []string) string {
	const safe = "-_.!~*'()"
	s := strings.Join(normalizeKeyLines(keys), "\n")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(safe, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// DecodeSSHKeys turns PVE's stored (encoded) sshkeys back into one key per element.
// A value that is not valid percent-encoding is taken literally rather than failing, so a
// hand-edited config still compares (and is then rewritten in the canonical form).
func DecodeSSHKeys(stored string) []string {
	dec, err := url.PathUnescape(stored)
	if err != nil {
		dec = stored
	}
	return normalizeKeyLines(strings.Split(dec, "\n"))
}

// normalizeKeyLines trims every line, drops empty ones and splits elements that hold several
// lines, so "a\nb" and ["a","b"] compare equal. Order is kept: it is the order in authorized_keys.
func normalizeKeyLines(keys []string) []string {
	var out []string
	for _, k := range keys {
		for _, line := range strings.Split(strings.ReplaceAll(k, "\r", ""), "\n") {
			line = strings.Join(strings.Fields(line), " ")
			if line != "" {
				out = append(out, line)
			}
		}
	}
	return out
}

var tagRE = regexp.MustCompile(`^[a-z0-9_][a-z0-9_+.-]*$`)

// NormalizeTags applies PVE's tag storage rule: split on ';', ',' or spaces, lowercase,
// sort, de-duplicate. It returns an error naming the first invalid tag.
func NormalizeTags(tags []string) ([]string, error) {
	set := map[string]bool{}
	for _, t := range tags {
		for _, f := range splitList(t) {
			f = strings.ToLower(f)
			if !tagRE.MatchString(f) {
				return nil, fmt.Errorf("tag %q: must match [a-z0-9_][a-z0-9_+.-]*", f)
			}
			set[f] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// ParseTags reads a stored tags value; invalid tags (set by hand) are kept lowercased so they
// show up in the diff instead of breaking the comparison.
func ParseTags(stored string) []string {
	set := map[string]bool{}
	for _, f := range splitList(stored) {
		set[strings.ToLower(f)] = true
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// splitList splits on PVE's list separators: ';', ',' and white space.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n'
	})
}

// NormalizeAddressList reads PVE's nameserver value (addresses separated by spaces, commas or
// semicolons) into a list, order kept.
func NormalizeAddressList(s string) []string { return splitList(s) }

// ParseSize reads a PVE size ("32G", "512M", "2048K", "10737418240") into bytes
// (internal/pveprop).
func ParseSize(s string) (int64, error) { return pveprop.ParseSize(s) }

// FormatSize writes bytes the way PVE accepts them in resize: the largest exact unit.
func FormatSize(b int64) string {
	for _, u := range []struct {
		s string
		n int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.n && b%u.n == 0 {
			return strconv.FormatInt(b/u.n, 10) + u.s
		}
	}
	return strconv.FormatInt(b, 10)
}

// ParseMemory reads PVE 9's memory property string ("[current=]<MiB>") into MiB
// (internal/pveprop).
func ParseMemory(s string) (int, error) { return pveprop.ParseMemory(s) }

// DiskVolume is one disk line of a VM config, e.g. "local-lvm:vm-10101-disk-0,size=2G".
type DiskVolume struct {
	Key     string // scsi0
	Storage string // local-lvm
	Size    int64  // bytes, 0 when unknown
	Media   string // "cdrom" for CD drives
	Volume  string // local-lvm:vm-10101-disk-0
}

// diskKeyRE lists the bus keys in the order PVE boots from by default.
var diskKeyRE = regexp.MustCompile(`^(scsi|virtio|sata|ide)(\d+)$`)

// BootDisk picks the disk the module resizes: the first non-CD, non-cloud-init disk in
// bus order scsi, virtio, sata, ide, by number. ok is false when the VM has no such disk.
func BootDisk(cfg map[string]string) (DiskVolume, bool) {
	order := map[string]int{"scsi": 0, "virtio": 1, "sata": 2, "ide": 3}
	var keys []string
	for k := range cfg {
		if diskKeyRE.MatchString(k) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := diskKeyRE.FindStringSubmatch(keys[i]), diskKeyRE.FindStringSubmatch(keys[j])
		if order[a[1]] != order[b[1]] {
			return order[a[1]] < order[b[1]]
		}
		na, _ := strconv.Atoi(a[2])
		nb, _ := strconv.Atoi(b[2])
		return na < nb
	})
	for _, k := range keys {
		d := ParseDisk(k, cfg[k])
		if d.Media == "cdrom" || strings.Contains(d.Volume, "cloudinit") || d.Volume == "none" {
			continue
		}
		return d, true
	}
	return DiskVolume{}, false
}

// HasCloudInitDrive tells whether a cloud-init drive is attached: without one PVE accepts the
// cloud-init keys but nothing reaches the guest.
func HasCloudInitDrive(cfg map[string]string) bool {
	for k, v := range cfg {
		if diskKeyRE.MatchString(k) && strings.Contains(ParseDisk(k, v).Volume, "cloudinit") {
			return true
		}
	}
	return false
}

// ParseDisk reads a disk config value.
func ParseDisk(key, v string) DiskVolume {
	p := ParseProps(v)
	d := DiskVolume{Key: key, Volume: p[""], Media: p["media"]}
	if d.Volume == "" {
		d.Volume = p["file"]
	}
	if st, _, ok := strings.Cut(d.Volume, ":"); ok {
		d.Storage = st
	}
	if s, ok := p["size"]; ok {
		if n, err := ParseSize(s); err == nil {
			d.Size = n
		}
	}
	return d
}
