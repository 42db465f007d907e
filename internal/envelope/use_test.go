package envelope

import (
	"strings"
	"testing"
)

func TestGuestFromConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  map[string]any
		want Guest
	}{
		{"PVE's defaults", map[string]any{}, Guest{Cores: 1, Memory: 512}},
		{"sockets x cores, memory as a number",
			map[string]any{"sockets": 2, "cores": "4", "memory": "4096"}, Guest{Cores: 8, Memory: 4096}},
		{"memory as PVE 9's property string", map[string]any{"memory": "current=2048"}, Guest{Cores: 1, Memory: 2048}},
		{"every disk counts, a CD-ROM and the cloud-init drive do not",
			map[string]any{
				"scsi0":     "local-lvm:vm-101-disk-0,size=32G",
				"virtio1":   "local-lvm:vm-101-disk-1,iothread=1,size=512M",
				"efidisk0":  "local-lvm:vm-101-disk-2,efitype=4m,size=4M",
				"ide2":      "local-lvm:vm-101-cloudinit,media=cdrom",
				"sata0":     "none,media=cdrom",
				"net0":      "virtio=BC:24:11:00:00:01,bridge=tn01v0,size=99G",
				"unused0":   "local-lvm:vm-101-disk-3",
				"scsihw":    "virtio-scsi-pci",
				"ipconfig0": "ip=10.20.129.10/24,gw=10.20.129.1",
			},
			Guest{Cores: 1, Memory: 512, DiskBytes: 32<<30 + 512<<20 + 4<<20}},
	} {
		got, err := GuestFromConfig(c.cfg, false)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestGuestFromConfigRefusesWhatPVEWouldNotWrite(t *testing.T) {
	for cfg, want := range map[string]map[string]any{
		`config cores "0"`:        {"cores": 0},
		`config sockets "two"`:    {"sockets": "two"},
		`config memory "lots"`:    {"memory": "lots"},
		`config scsi0: size "xG"`: {"scsi0": "local-lvm:vm-1-disk-0,size=xG"},
	} {
		if _, err := GuestFromConfig(want, false); err == nil || !strings.Contains(err.Error(), cfg) {
			t.Errorf("%v: got %v, want an error naming %s", want, err, cfg)
		}
	}
}

func TestUseAndOver(t *testing.T) {
	env := Envelope{VMs: 2, Cores: 8, Memory: 8192, Disk: 64}
	guests := []Guest{
		{Cores: 4, Memory: 4096, DiskBytes: 32 << 30, Running: true},
		{Cores: 4, Memory: 4096, DiskBytes: 32 << 30, Running: true},
		// stopped: takes disk, not CPU or memory
		{Cores: 16, Memory: 65536, DiskBytes: 1, Running: false},
	}
	u := UseOf(guests)
	want := Use{VMs: 3, RunningVMs: 2, Cores: 24, RunningCores: 8, Memory: 73728, RunningMemory: 8192, Disk: 65}
	if u != want {
		t.Fatalf("UseOf: got %+v, want %+v", u, want)
	}
	over := env.Over(u)
	if len(over) != 1 || over[0] != "65 GiB of disk, over the envelope's 64 (envelope.disk)" {
		t.Errorf("Over: got %q, want only the disk, rounded up", over)
	}
	u = UseOf(append(guests[:2:2], Guest{Cores: 1, Memory: 512, Running: true}))
	if over := env.Over(u); len(over) != 3 || !strings.HasPrefix(over[0], "3 running VMs") ||
		!strings.HasPrefix(over[1], "9 running vCPUs") || !strings.HasPrefix(over[2], "8704 MiB of running memory") {
		t.Errorf("Over: got %q, want running VMs, vCPUs and memory", over)
	}
	if got := UseOf(nil); got != (Use{}) || len(env.Over(got)) != 0 {
		t.Errorf("no VMs: got %+v %q", got, env.Over(got))
	}
}
