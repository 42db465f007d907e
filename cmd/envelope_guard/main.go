// Command envelope_guard is the substrate's hookscript on every PVE node
// (docs/adr/0014-tenant-envelope.md, decision 3). PVE runs it as root, as `<script> <vmid> <phase>`
// (pve-guest-common GuestHelpers.pm exec_hookscript); at pre-start a non-zero exit aborts the start.
//
//	envelope_guard <vmid> pre-start    refuse a start over the tenant's envelope or naming a snippet;
//	                                   else set the tenant's group here to its share, counting the VM
//	envelope_guard <vmid> post-start   place the VM's QEMU process in the tenant's cgroup v2 group,
//	                                   whose limits are the tenant's share of its envelope on this node
//	envelope_guard <vmid> <phase>      any other phase: nothing (exit 0)
//	envelope_guard place <vmid>        post-start's work alone
//	envelope_guard [-check] [-template N] [-away NODES] sweep
//	                                   set the guard as the hookscript of every tenant VM lacking it
//	                                   (and of template N, which every tenant clones)
//	envelope_guard [-check] [-node NAME] contain
//	                                   set each tenant's group on this node to its share, then place
//	                                   every tenant VM running here outside its tenant's group into it
//	                                   (one started before a sweep guarded it)
//
// A tenant's share on a node is max(envelope - what its VMs running on other nodes are configured
// with, what its VMs running here are configured with), memory and vCPUs alike (internal/guard
// NodeShare), so the nodes' groups do not each grant the whole envelope; memory.max adds QEMU's
// own memory for each VM running here (guard.QEMUOverheadMiB). The envelope's disk I/O rates are
// the group's io.max on each disk under the tenant's thin pool here (found in sysfs).
//
// Flags, before the arguments (PVE passes none): -envelopes (default deevnet-envelopes.json
// beside this executable), -cgroup-root (/sys/fs/cgroup), -run-dir (/var/run/qemu-server),
// -volume (sweep's hookscript, local:snippets/deevnet-envelope-guard), -check (sweep, contain: change nothing),
// -template (sweep: the shared template too), -away (sweep: nodes in maintenance, left alone),
// -node (contain: this node's name, default the host name up to its first dot), -sys-root (/sys:
// where the disks under a tenant's thin pool are found).
// Cluster state comes from `pvesh` on PATH, as root needs no token on its own node.
package main

import (
	"os"

	"github.com/deevnet/tenant/internal/guard/hookcli"
)

func main() { os.Exit(hookcli.Main(os.Args[1:])) }
