package envelope

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/deevnet/tenant/internal/jsonval"
	"github.com/deevnet/tenant/internal/pveprop"
)

// Guest is what one VM takes of an envelope, as its configuration says: vCPUs (sockets x cores,
// the most it can hotplug, whatever vcpus starts it with), memory in MiB (PVE 9's memory
// property's current value) and disk in bytes (the size of every disk but a CD-ROM).
type Guest struct {
	Cores     int
	Memory    int
	DiskBytes int64
	Running   bool
}

// PVE's defaults when a key is absent (qemu-server PVE/QemuServer.pm confdesc: sockets and cores
// default 1; PVE/QemuServer/Memory.pm: memory defaults to 512 MiB).
const (
	defaultCores  = 1
	defaultMemory = 512
)

// diskKey matches the config keys that hold a disk (qemu-server PVE/QemuServer/Drive.pm
// is_valid_drivename: ide0-3, sata0-5, scsi0-30, virtio0-15, efidisk0, tpmstate0).
var diskKey = regexp.MustCompile(`^(ide|sata|scsi|virtio)\d+$|^efidisk0$|^tpmstate0$`)

// GuestFromConfig reads a VM's use from its configuration as GET /nodes/{node}/qemu/{vmid}/config
// returns it. A value PVE would not have written is refused, naming the key.
func GuestFromConfig(cfg map[string]any, running bool) (Guest, error) {
	g := Guest{Cores: defaultCores, Memory: defaultMemory, Running: running}
	sockets, cores := 1, 1
	for key, into := range map[string]*int{"sockets": &sockets, "cores": &cores} {
		if v, ok := cfg[key]; ok {
			n, err := strconv.Atoi(jsonval.String(v))
			if err != nil || n < 1 {
				return Guest{}, fmt.Errorf("config %s %q is not a whole number of at least 1", key, jsonval.String(v))
			}
			*into = n
		}
	}
	g.Cores = sockets * cores
	if v, ok := cfg["memory"]; ok {
		m, err := memoryMiB(jsonval.String(v))
		if err != nil {
			return Guest{}, err
		}
		g.Memory = m
	}
	for key, v := range cfg {
		if !diskKey.MatchString(key) {
			continue
		}
		size, err := diskBytes(jsonval.String(v))
		if err != nil {
			return Guest{}, fmt.Errorf("config %s: %w", key, err)
		}
		g.DiskBytes += size
	}
	return g, nil
}

// memoryMiB reads PVE 9's memory property string: "[current=]<MiB>[,...]".
func memoryMiB(prop string) (int, error) {
	n, err := pveprop.ParseMemory(prop)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("config memory %q has no whole number of MiB", prop)
	}
	return n, nil
}

// diskBytes is a drive's size= in bytes; a CD-ROM (media=cdrom, the cloud-init drive among them)
// and "none" take nothing.
func diskBytes(drive string) (int64, error) {
	p := pveprop.ParseProps(drive)
	size, ok := p["size"]
	if p["media"] == "cdrom" || !ok {
		return 0, nil
	}
	n, err := pveprop.ParseSize(size)
	if err != nil {
		return 0, fmt.Errorf("size %q is not a size", size)
	}
	return n, nil
}

// Use is what a tenant's VMs take, configured (all of them) and running.
type Use struct {
	VMs, RunningVMs       int
	Cores, RunningCores   int
	Memory, RunningMemory int // MiB
	Disk                  int // GiB, rounded up: every disk allocates, running or not
}

// UseOf adds the guests up.
func UseOf(guests []Guest) Use {
	var u Use
	var disk int64
	for _, g := range guests {
		u.VMs++
		u.Cores += g.Cores
		u.Memory += g.Memory
		disk += g.DiskBytes
		if g.Running {
			u.RunningVMs++
			u.RunningCores += g.Cores
			u.RunningMemory += g.Memory
		}
	}
	u.Disk = int((disk + 1<<30 - 1) >> 30)
	return u
}

// String is the use as the verify check and the site report show it.
func (u Use) String() string {
	return fmt.Sprintf("%d VMs (%d running), %d vCPUs (%d running), %d MiB (%d running), %d GiB",
		u.VMs, u.RunningVMs, u.Cores, u.RunningCores, u.Memory, u.RunningMemory, u.Disk)
}

// String is the envelope as the verify check and the site report show it.
func (e Envelope) String() string {
	s := fmt.Sprintf("%d VMs, %d vCPUs, %d MiB, %d GiB", e.VMs, e.Cores, e.Memory, e.Disk)
	if e.Bandwidth > 0 {
		s += fmt.Sprintf(", %d Mbit/s", e.Bandwidth)
	}
	if e.Broadcast > 0 {
		s += fmt.Sprintf(", %d broadcast frames/s", e.Broadcast)
	}
	return s
}

// Over names every limit the tenant's use goes over: what runs for VMs, vCPUs and memory (a
// stopped VM takes no CPU or memory; the start guard refuses the start that would), what is
// allocated for disk. Empty when the use is inside the envelope.
func (e Envelope) Over(u Use) []string {
	var over []string
	for _, c := range []struct {
		used, limit int
		what, key   string
	}{
		{u.RunningVMs, e.VMs, "running VMs", "vms"},
		{u.RunningCores, e.Cores, "running vCPUs", "cores"},
		{u.RunningMemory, e.Memory, "MiB of running memory", "memory"},
		{u.Disk, e.Disk, "GiB of disk", "disk"},
	} {
		if c.used > c.limit {
			over = append(over, fmt.Sprintf("%d %s, over the envelope's %d (envelope.%s)", c.used, c.what, c.limit, c.key))
		}
	}
	return over
}
