// Package guard is the substrate's start guard (docs/adr/0014-tenant-envelope.md, decision 3):
// the rule, with no I/O, by which cmd/envelope_guard, PVE's hookscript at pre-start, refuses a
// start that would take a tenant's running VMs over its envelope, or that would make the VM read
// a snippet. PVE 9 has no pool quota and checks only whether a caller may change cores, memory or
// cicustom, never to what value (qemu-server API2/Qemu.pm $check_vm_modify_config_perm), so the
// start is where the substrate, as root, can still say no.
package guard

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deevnet/tenant/internal/cgroupslice"
	"github.com/deevnet/tenant/internal/envelope"
	"github.com/deevnet/tenant/internal/jsonval"
)

// File is the envelope file the substrate writes beside the guard on every node: per tenant, its
// pool and envelope. It holds no secret: it sits in a snippets directory.
type File struct {
	Tenants map[string]Tenant `json:"tenants"`
}

// Tenant is one tenant of the envelope file. VG is the volume group of its thin pool
// <vg>/tenant-<name> on every node (ADR-0014, decision 2), whose devices its disk I/O rates cap;
// a file from before it has none, and no I/O is capped.
type Tenant struct {
	Pool     string   `json:"pool"`
	VG       string   `json:"vg,omitempty"`
	Envelope Envelope `json:"envelope"`
}

// Envelope is the attachment's envelope: memory in MiB, disk in GiB.
type Envelope = envelope.Envelope

// TenantPoolPrefix starts every tenant's pool (tenant-<name>): a VM in such a pool that the
// envelope file does not know is refused, not waved through.
const TenantPoolPrefix = "tenant-"

// Parse reads an envelope file, refusing a tenant without a pool or with a limit below 1.
func Parse(b []byte) (File, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, fmt.Errorf("not an envelope file (JSON {\"tenants\": {name: {pool, envelope}}}): %w", err)
	}
	// A rate of 0 reads as not given once decoded: one written as 0 is refused here, by its key.
	var given struct {
		Tenants map[string]struct {
			Envelope map[string]json.RawMessage `json:"envelope"`
		} `json:"tenants"`
	}
	if err := json.Unmarshal(b, &given); err != nil {
		return File{}, fmt.Errorf("not an envelope file: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(f.Tenants)) {
		t := f.Tenants[name]
		if t.Pool == "" {
			return File{}, fmt.Errorf("tenants.%s.pool: missing", name)
		}
		for _, key := range envelope.Rates {
			if _, ok := given.Tenants[name].Envelope[key]; ok && t.Envelope.Rates()[key] < 1 {
				return File{}, fmt.Errorf("tenants.%s.envelope.%s %d must be at least 1 (or not given: no cap)", name, key, t.Envelope.Rates()[key])
			}
		}
		if err := t.Envelope.Validate("tenants." + name + ".envelope"); err != nil {
			return File{}, err
		}
	}
	return f, nil
}

// Resource is one guest of `pvesh get /cluster/resources --type vm` (maxmem in bytes).
type Resource struct {
	Type     string `json:"type"` // qemu or lxc
	Template int    `json:"template"`
	VMID     int    `json:"vmid"`
	Node     string `json:"node"`
	Pool     string `json:"pool"`
	Status   string `json:"status"`
	MaxCPU   int    `json:"maxcpu"`
	MaxMem   int64  `json:"maxmem"`
}

// TenantOf names the tenant whose pool holds vmid ("" when it is in no tenant's pool) and the
// resource itself.
func (f File) TenantOf(resources []Resource, vmid int) (string, Resource, error) {
	for _, r := range resources {
		if r.VMID != vmid {
			continue
		}
		for name, t := range f.Tenants {
			if t.Pool == r.Pool {
				return name, r, nil
			}
		}
		if strings.HasPrefix(r.Pool, TenantPoolPrefix) {
			return "", r, fmt.Errorf("VM %d is in pool %s, a tenant's pool with no envelope in the envelope file", vmid, r.Pool)
		}
		return "", r, nil
	}
	return "", Resource{}, fmt.Errorf("VM %d is not in /cluster/resources", vmid)
}

// CheckStart refuses the start of vmid, with config (GET .../config: the values the start
// applies, pending ones included), when it would take the tenant's running guests over an
// envelope limit, or when its cicustom names any snippet. One line naming the tenant, the totals
// and each limit; nil when the VM is no tenant's.
//
// Counted: this VM's sockets x cores and memory (the most it can hotplug up to, not its vcpus),
// plus the same of each of the tenant pool's other running guests (RunningPeers), read from
// peers, their running configurations (GET .../config with current=1), never from
// /cluster/resources: PVE's vmstatus caps maxcpu at the node's CPU count and replaces it with
// vcpus when set (qemu-server QemuServer.pm), so a running guest of 64 vCPUs on a 16-CPU node
// reads as 16, and one with vcpus=1 as 1 while it may hotplug up to its cores. A running peer
// whose configuration is missing from peers is refused, not guessed. A VM already running
// elsewhere (a live migration's target start) is not counted twice.
//
// Snippets: a tenant's own snippet does not exist. PVE's upload API takes only iso, vztmpl and
// import content (pve-storage API2/Storage/Status.pm upload), so no tenant can write a snippet,
// and every snippet on a node is root's: the substrate's (this guard and its envelope file) or a
// site's. cicustom is not checked against the caller's storage privileges and its files are read
// by root at start (qemu-server Cloudinit.pm read_cloudinit_snippets_file), so any cicustom on a
// tenant's VM is refused.
func (f File) CheckStart(resources []Resource, vmid int, config map[string]any, peers map[int]map[string]any) (string, error) {
	name, self, err := f.TenantOf(resources, vmid)
	if err != nil || name == "" {
		return name, err
	}
	t := f.Tenants[name]
	if cc := str(config["cicustom"]); cc != "" {
		return name, fmt.Errorf("tenant %s: VM %d's cicustom %q names a snippet; a tenant's VM may use none (snippets are root's, read by root at start), refused by the substrate's envelope guard", name, vmid, cc)
	}
	starting, err := envelope.GuestFromConfig(config, true)
	if err != nil {
		return name, fmt.Errorf("VM %d: %w", vmid, err)
	}
	vms, cores, mem := 1, starting.Cores, starting.Memory
	for _, r := range runningPeers(resources, self) {
		peer, ok := peers[r.VMID]
		if !ok {
			return name, fmt.Errorf("tenant %s: VM %d runs in pool %s and its configuration was not read; refusing to start %d without counting it", name, r.VMID, self.Pool, vmid)
		}
		g, err := envelope.GuestFromConfig(peer, true)
		if err != nil {
			return name, fmt.Errorf("VM %d (running): %w", r.VMID, err)
		}
		vms, cores, mem = vms+1, cores+g.Cores, mem+g.Memory
	}
	var over []string
	for _, l := range []struct {
		key         string
		used, limit int
		unit        string
	}{
		{"vms", vms, t.Envelope.VMs, " VMs"}, {"cores", cores, t.Envelope.Cores, " vCPUs"}, {"memory", mem, t.Envelope.Memory, " MiB"},
	} {
		if l.used > l.limit {
			over = append(over, fmt.Sprintf("makes %d%s running, over its envelope of %d%s (envelope.%s)", l.used, l.unit, l.limit, l.unit, l.key))
		}
	}
	if len(over) > 0 {
		return name, fmt.Errorf("tenant %s: starting %d %s", name, vmid, strings.Join(over, "; "))
	}
	return name, nil
}

// RunningPeers are the guests of vmid's tenant pool, other than vmid, that run: those whose
// running configurations CheckStart needs. None when vmid is no tenant's.
func (f File) RunningPeers(resources []Resource, vmid int) ([]Resource, error) {
	name, self, err := f.TenantOf(resources, vmid)
	if err != nil || name == "" {
		return nil, err
	}
	return runningPeers(resources, self), nil
}

func runningPeers(resources []Resource, self Resource) []Resource {
	var out []Resource
	for _, r := range resources {
		if r.Pool == self.Pool && r.VMID != self.VMID && r.Status == "running" {
			out = append(out, r)
		}
	}
	return out
}

// str is a config value as text: pvesh prints numbers as JSON numbers, strings as strings.
func str(v any) string { return jsonval.String(v) }

// Share is one tenant's limits in its cgroup group on one node: memory in MiB, vCPUs.
type Share struct {
	MemoryMiB, Cores int
	// QEMUMiB is what the QEMU processes of the VMs counted here take above their guest RAM
	// (QEMUOverheadMiB each): the group's memory.max is MemoryMiB + QEMUMiB (MemoryMaxMiB).
	QEMUMiB int
	// What it was computed from, for the line that reports a change: the envelope and the
	// tenant's configured use running on the other nodes and on this one.
	Envelope                  Envelope
	ElsewhereMiB, HereMiB     int
	ElsewhereCores, HereCores int
	HereVMs                   int
	// The disk I/O cap of the group here: the envelope's rates, in bytes and operations a second
	// (0: none), on the devices behind ThinData, the device-mapper name of the tenant's thin
	// pool's data device ("" when the envelope file names no VG). Not shared out between nodes:
	// each node's pool is on that node's own disks.
	ReadBps, WriteBps, ReadIOPS, WriteIOPS int64
	ThinData                               string
}

// CapsIO says whether the group here gets an io.max: a rate given, and the tenant's VG known.
func (s Share) CapsIO() bool {
	return s.ThinData != "" && s.ReadBps+s.WriteBps+s.ReadIOPS+s.WriteIOPS > 0
}

// MemoryMaxMiB is the group's memory.max in MiB: the share of guest RAM plus what QEMU itself
// takes for each VM running here, so that VMs filling their share are not OOM-killed by the
// guard's own limit, while a tenant past its envelope by more than QEMU's own memory still is.
func (s Share) MemoryMaxMiB() int { return s.MemoryMiB + s.QEMUMiB }

// QEMU's own memory per VM, above its guest RAM (docs/adr/0014-tenant-envelope.md, decision 3,
// "QEMU's own memory"). Measured: a qemu-system-x86_64 with the template's machine and devices
// and its guest RAM all touched has VmRSS - RAM of 53-59 MiB outside TCG's code buffer at 512
// MiB to 4 GiB and 1 to 8 vCPUs (the same at every size, about 1 MiB per vCPU: QEMU's binary,
// libraries, devices, ROMs, VGA, threads), plus page tables (VmPTE) of 2 MiB per GiB of guest
// RAM (test/guest/qemu-overhead.sh, QEMU 7.2 under TCG; in a tenant's group in the guest's
// kernel, paused before any guest code, memory.current is RAM + 16 MiB: TestQEMUMemoryGuest,
// which also sees it OOM-killed under its RAM alone); KVM's own, charged to the
// group too and not measurable without KVM here, is about 4 MiB per GiB more (its memslot rmap
// and EPT tables, 8 bytes per 4 KiB page each). PVE reserves nothing for it (qemu-server
// Memory.pm: -m <memory>, no limit on the VM's scope). The rule: 128 MiB (over twice the
// measured constant: PVE 9's QEMU 10 links more libraries than the 7.2 measured, and ~70 vCPUs
// fit) plus 1/128 of the guest RAM (8 MiB per GiB against about 6).
const (
	qemuBaseMiB  = 128
	qemuRAMShare = 128 // 1/qemuRAMShare of the guest RAM
	// With kvm: 0 the VM runs under TCG, whose code buffer (1 GiB, QEMU's default tb-size, which
	// PVE does not set) fills as the guest runs and stays resident.
	qemuTCGMiB = 1024
)

// QEMUOverheadMiB is what the QEMU process of a VM of memoryMiB guest RAM takes above it, with
// config its configuration (kvm: 0 adds TCG's code buffer).
func QEMUOverheadMiB(memoryMiB int, config map[string]any) int {
	mib := qemuBaseMiB + (memoryMiB+qemuRAMShare-1)/qemuRAMShare
	if str(config["kvm"]) == "0" {
		mib += qemuTCGMiB
	}
	return mib
}

// NodeShare is tenant's share of its envelope on node, the limits of its group there:
//
//	memory = max(envelope.memory - memory of its guests running on other nodes, memory of those running on node)
//	cores  = the same with vCPUs (sockets x cores, as the envelope counts them)
//	memory.max = memory + QEMUOverheadMiB of each guest running on node (MemoryMaxMiB)
//
// Each node's group gets the whole envelope no more: with the whole envelope on every node the
// kernel let a tenant running on n nodes use n envelopes (VMs started before a sweep guarded them,
// memory hotplugged into a running VM, neither seen by pre-start). With the share, the caps of all
// nodes add up to the envelope whenever the tenant runs within it; and a node's cap never goes
// below what runs there as configured, so a converge never stops or starves what already runs (a
// tenant over its envelope keeps what it runs, and each node caps it there).
//
// The guests are the tenant pool's running ones in resources, each counted from its running
// configuration in configs (GET .../config with current=1, as CheckStart counts peers); a running
// guest whose configuration is missing is refused, not guessed. starting (0: none) is a VM about to
// run on node (pre-start, post-start): counted on node whatever resources says. Each limit is at
// least 1 (1 MiB, 1 vCPU): the kernel takes no cpu.max quota of 0, and a group with nothing running
// here holds nothing anyway.
func (f File) NodeShare(resources []Resource, tenant, node string, configs map[int]map[string]any, starting int) (Share, error) {
	t, ok := f.Tenants[tenant]
	if !ok {
		return Share{}, fmt.Errorf("tenant %s: not in the envelope file", tenant)
	}
	s := Share{Envelope: t.Envelope,
		ReadBps: int64(t.Envelope.DiskReadMBps) << 20, WriteBps: int64(t.Envelope.DiskWriteMBps) << 20,
		ReadIOPS: int64(t.Envelope.DiskReadIOPS), WriteIOPS: int64(t.Envelope.DiskWriteIOPS)}
	if t.VG != "" {
		s.ThinData = cgroupslice.DMName(t.VG, TenantPoolPrefix+tenant) + "_tdata"
	}
	for _, r := range resources {
		if r.Pool != t.Pool || (r.Status != "running" && r.VMID != starting) {
			continue
		}
		c, ok := configs[r.VMID]
		if !ok {
			return Share{}, fmt.Errorf("tenant %s: VM %d runs in pool %s and its configuration was not read; its share on node %s is not computed without it", tenant, r.VMID, t.Pool, node)
		}
		g, err := envelope.GuestFromConfig(c, true)
		if err != nil {
			return Share{}, fmt.Errorf("VM %d (running): %w", r.VMID, err)
		}
		if r.Node == node || r.VMID == starting {
			s.HereMiB, s.HereCores = s.HereMiB+g.Memory, s.HereCores+g.Cores
			s.HereVMs++
			s.QEMUMiB += QEMUOverheadMiB(g.Memory, c)
		} else {
			s.ElsewhereMiB, s.ElsewhereCores = s.ElsewhereMiB+g.Memory, s.ElsewhereCores+g.Cores
		}
	}
	s.MemoryMiB = max(t.Envelope.Memory-s.ElsewhereMiB, s.HereMiB, 1)
	s.Cores = max(t.Envelope.Cores-s.ElsewhereCores, s.HereCores, 1)
	return s, nil
}

// String says where the share comes from, as the guard reports a change of it.
func (s Share) String() string {
	return fmt.Sprintf("%d MiB, %d vCPUs: envelope %d MiB, %d vCPUs less %d MiB, %d vCPUs running on other nodes; %d MiB, %d vCPUs run here; memory.max %d MiB: %d MiB more for QEMU itself, its VM(s) here %d",
		s.MemoryMiB, s.Cores, s.Envelope.Memory, s.Envelope.Cores, s.ElsewhereMiB, s.ElsewhereCores, s.HereMiB, s.HereCores, s.MemoryMaxMiB(), s.QEMUMiB, s.HereVMs) + s.ioString()
}

// ioString is the disk I/O part of String, "" when the group gets no io.max.
func (s Share) ioString() string {
	if !s.CapsIO() {
		return ""
	}
	var r []string
	for _, v := range []struct {
		what string
		n    int64
		unit string
	}{{"read", s.ReadBps >> 20, " MiB/s"}, {"write", s.WriteBps >> 20, " MiB/s"}, {"read", s.ReadIOPS, " IOPS"}, {"write", s.WriteIOPS, " IOPS"}} {
		if v.n > 0 {
			r = append(r, fmt.Sprintf("%s %d%s", v.what, v.n, v.unit))
		}
	}
	return fmt.Sprintf("; disk I/O %s on the devices under %s", strings.Join(r, ", "), s.ThinData)
}

// Running are the guests of tenant's pool that run: those whose running configurations NodeShare
// needs.
func (f File) Running(resources []Resource, tenant string) []Resource {
	pool := f.Tenants[tenant].Pool
	var out []Resource
	for _, r := range resources {
		if pool != "" && r.Pool == pool && r.Status == "running" {
			out = append(out, r)
		}
	}
	return out
}
