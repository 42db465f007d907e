package cgroupslice

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSys lays out sysfs's block devices as the kernel does: /sys/class/block/<name> a symlink
// to the device's directory (a partition's inside its disk's), dm devices with dm/name and
// slaves/<name> entries.
func fakeSys(t *testing.T) string {
	t.Helper()
	sys := t.TempDir()
	dev := func(path, number string, files map[string]string, slaves ...string) {
		t.Helper()
		d := filepath.Join(sys, "devices", path)
		if err := os.MkdirAll(filepath.Join(d, "slaves"), 0o755); err != nil {
			t.Fatal(err)
		}
		files["dev"] = number
		for f, body := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(d, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, f), []byte(body+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range slaves {
			if err := os.WriteFile(filepath.Join(d, "slaves", s), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(sys, "class", "block", filepath.Base(path))
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(d, link); err != nil {
			t.Fatal(err)
		}
	}
	// pve on sda3 and nvme0n1 (a partition and a whole disk); tdemo's pool's data striped over
	// both, through a dm-crypt layer on sda3; tother's on nvme0n1 alone; an md array for tnext
	dev("sda", "8:0", map[string]string{})
	dev("sda/sda3", "8:3", map[string]string{"partition": "3"})
	dev("nvme0n1", "259:0", map[string]string{})
	dev("md0", "9:0", map[string]string{}, "sdb", "sdc")
	dev("virtual/dm-0", "254:0", map[string]string{"dm/name": "crypt-sda3"}, "sda3")
	dev("virtual/dm-1", "254:1", map[string]string{"dm/name": "pve-tenant--tdemo_tdata"}, "dm-0", "nvme0n1")
	dev("virtual/dm-2", "254:2", map[string]string{"dm/name": "pve-tenant--tother_tdata"}, "nvme0n1")
	dev("virtual/dm-3", "254:3", map[string]string{"dm/name": "pve-tenant--tnext_tdata"}, "md0")
	return sys
}

func TestDevices(t *testing.T) {
	sys := fakeSys(t)
	for _, c := range []struct{ name, want string }{
		{DMName("pve", "tenant-tdemo") + "_tdata", "259:0 8:0"},
		{"pve-tenant--tother_tdata", "259:0"},
		{"pve-tenant--tnext_tdata", "9:0"}, // the md array, not its members: md issues its own bios
		{"pve-tenant--tgone_tdata", ""},    // not active here
	} {
		got, err := Devices(sys, c.name)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("Devices(%s) = %q %v, want %q", c.name, got, err, c.want)
		}
	}
	if got := DMName("my-vg", "tenant-tdemo"); got != "my--vg-tenant--tdemo" {
		t.Errorf("DMName %q", got)
	}
	// a slave whose number cannot be read is an error naming it
	if err := os.Remove(filepath.Join(sys, "devices", "nvme0n1", "dev")); err != nil {
		t.Fatal(err)
	}
	if _, err := Devices(sys, "pve-tenant--tother_tdata"); err == nil || !strings.Contains(err.Error(), "nvme0n1/dev") {
		t.Errorf("error %v, want the unreadable device named", err)
	}
}
