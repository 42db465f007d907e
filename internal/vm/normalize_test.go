package vm

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const key1 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuBgRI8GCpQ1Li2FMavVoVf+RzPLi477unNJvv4IwTL ops@deevnet"
const key2 = "ssh-rsa AAAAB3NzaC1yc2E= second+key@host"

func TestEncodeSSHKeysPercentEncodesLikePVE(t *testing.T) {
	got := EncodeSSHKeys([]string{key1, key2})
	if strings.Contains(got, "+") || strings.Contains(got, " ") {
		t.Fatalf("encoded keys contain '+' or ' ': %s", got)
	}
	for _, want := range []string{"ssh-ed25519%20AAAA", "Vf%2BRzPLi477unNJvv4IwTL%20ops%40deevnet%0Assh-rsa", "yc2E%3D%20second%2Bkey%40host"} {
		if !strings.Contains(got, want) {
			t.Errorf("encoded %q lacks %q", got, want)
		}
	}
	// Only the characters PVE's "urlencoded" format accepts.
	for _, c := range got {
		if !pveURLSafe(c) {
			t.Fatalf("encoded value holds %q, which PVE rejects", c)
		}
	}
	// What Python's urllib.parse.quote(keys, safe='') produces must decode to the same keys.
	py := strings.ReplaceAll(url.PathEscape(key1+"\n"+key2), "+", "%2B")
	if !slices.Equal(DecodeSSHKeys(py), []string{key1, key2}) {
		t.Errorf("DecodeSSHKeys(%q) = %q", py, DecodeSSHKeys(py))
	}
	if !slices.Equal(DecodeSSHKeys(got), []string{key1, key2}) {
		t.Errorf("round trip lost keys: %q", DecodeSSHKeys(got))
	}
}

func TestNormalizeKeyLinesIgnoresBlankLinesAndSpacing(t *testing.T) {
	got := normalizeKeyLines([]string{"  " + key1 + "  \r\n\n", key2 + "\n"})
	if !slices.Equal(got, []string{key1, key2}) {
		t.Fatalf("got %q", got)
	}
}

func TestNormalizeTags(t *testing.T) {
	got, err := NormalizeTags([]string{"Tenant-tdemo;web", "web, db"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"db", "tenant-tdemo", "web"}) {
		t.Fatalf("got %q", got)
	}
	if _, err := NormalizeTags([]string{"-bad"}); err == nil || !strings.Contains(err.Error(), `"-bad"`) {
		t.Fatalf("want an error naming the bad tag, got %v", err)
	}
	if !slices.Equal(ParseTags("web;Tenant-tdemo db"), []string{"db", "tenant-tdemo", "web"}) {
		t.Fatal("ParseTags does not normalise like PVE")
	}
}

func TestParseNICReadsEverySpelling(t *testing.T) {
	cases := map[string]NIC{
		"virtio=BC:24:11:5E:7A:01,bridge=tn01v0,firewall=1": {Model: "virtio", MAC: "BC:24:11:5E:7A:01", Bridge: "tn01v0", Other: Props{"firewall": "1"}},
		"virtio,bridge=vmbr0":                               {Model: "virtio", Bridge: "vmbr0", Other: Props{}},
		"model=e1000,macaddr=bc:24:11:00:00:01,bridge=x":    {Model: "e1000", MAC: "BC:24:11:00:00:01", Bridge: "x", Other: Props{}},
	}
	for in, want := range cases {
		got := ParseNIC(in)
		if got.Model != want.Model || got.MAC != want.MAC || got.Bridge != want.Bridge || !maps.Equal(got.Other, want.Other) {
			t.Errorf("ParseNIC(%q) = %+v, want %+v", in, got, want)
		}
	}
	n := ParseNIC("virtio=BC:24:11:5E:7A:01,firewall=1,bridge=vmbr0,tag=5")
	n.Bridge = "tn01v0"
	if got := n.String(); got != "virtio=BC:24:11:5E:7A:01,bridge=tn01v0,firewall=1,tag=5" {
		t.Errorf("String() = %q, want PVE's stored order", got)
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"2G": 2 << 30, "512M": 512 << 20, "1.5G": 3 << 29, "10737418240": 10 << 30, "1T": 1 << 40} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseSize("ten gigs"); err == nil {
		t.Error("ParseSize accepted garbage")
	}
	if FormatSize(20<<30) != "20G" || FormatSize(1536<<20) != "1536M" || FormatSize(1000) != "1000" {
		t.Error("FormatSize does not pick the largest exact unit")
	}
	for in, want := range map[string]int{"2048": 2048, "current=1024": 1024} {
		if got, err := ParseMemory(in); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v", in, got, err)
		}
	}
}

func TestBootDiskSkipsCDROMAndCloudInit(t *testing.T) {
	cfg := map[string]string{
		"ide2":    "local-lvm:vm-10101-cloudinit,media=cdrom",
		"ide0":    "none,media=cdrom",
		"virtio1": "local-lvm:vm-10101-disk-1,size=8G",
		"scsi0":   "local-lvm:base-9000-disk-0/vm-10101-disk-0,size=2G",
	}
	d, ok := BootDisk(cfg)
	if !ok || d.Key != "scsi0" || d.Size != 2<<30 || d.Storage != "local-lvm" {
		t.Fatalf("BootDisk = %+v, %v", d, ok)
	}
	if !HasCloudInitDrive(cfg) {
		t.Error("cloud-init drive not found")
	}
	delete(cfg, "ide2")
	if HasCloudInitDrive(cfg) {
		t.Error("cloud-init drive found where there is none")
	}
}

func FuzzParseNIC(f *testing.F) {
	for _, s := range []string{"virtio=BC:24:11:5E:7A:01,bridge=tn01v0,firewall=1", "virtio,bridge=vmbr0", ",,=,", "e1000=x,model=virtio"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := ParseNIC(s)
		// Rendering and re-reading must be stable: Compare relies on it to see no change.
		again := ParseNIC(n.String())
		if nicModels[n.Model] && !strings.ContainsAny(n.Model+n.MAC+n.Bridge, ",=") && !hasSpecial(n.Other) {
			if again.Model != n.Model || again.MAC != n.MAC || again.Bridge != n.Bridge {
				t.Fatalf("%q -> %q -> %+v, want %+v", s, n.String(), again, n)
			}
		}
	})
}

func hasSpecial(p Props) bool {
	for k, v := range p {
		if strings.ContainsAny(k+v, ",=") || nicModels[k] || k == "model" || k == "macaddr" || k == "bridge" || k == "" {
			return true
		}
	}
	return false
}

func FuzzSSHKeys(f *testing.F) {
	f.Add(key1 + "\n" + key2)
	f.Add("%zz%20a")
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeSSHKeys([]string{s})
		for _, c := range enc {
			if !pveURLSafe(c) {
				t.Fatalf("EncodeSSHKeys(%q) holds %q", s, c)
			}
		}
		if got, want := DecodeSSHKeys(enc), normalizeKeyLines([]string{s}); !slices.Equal(got, want) {
			t.Fatalf("round trip of %q: %q, want %q", s, got, want)
		}
		_ = DecodeSSHKeys(s) // never panics on stored garbage
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"2G", "1.5T", "100", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n >= 0 && n < 1<<50 {
			if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
				t.Fatalf("%q = %d -> %q -> %d, %v", s, n, FormatSize(n), back, err)
			}
		}
	})
}

// pveURLSafe is the character set of PVE's "urlencoded" format.
func pveURLSafe(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-%_.!~*'()", c)
}
