package main

import (
	"fmt"
	"net/http"
)

// The exhaustion probes (issue 35, docs/adr/0014-tenant-envelope.md): what the tenant's token may
// configure (PVE grants it VM.Config.Memory, VM.Config.CPU, VM.Allocate on its pool) and what then
// binds it: the envelope guard the hypervisor plays install, refusing the start at pre-start, and
// the tenant's own thin pool. The guard's refusal is PVE's exec_hookscript message; the reason is
// the guard's line in the task log.

// guardExit is the start task's exit status when the envelope guard refuses vmid at pre-start.
func guardExit(vmid int) string {
	return fmt.Sprintf("hookscript error for %d on pre-start: command '/var/lib/vz/snippets/deevnet-envelope-guard %d pre-start' failed: exit code 1 ", vmid, vmid)
}

// exhaustionIDs are the vmids the exhaustion probes make, in the tenant's own range and clear of
// apiProbes' (free, free+1) and the plan's first VMs: a VM cloned from the template, one made
// without it, and the clones of the count probe.
type exhaustionIDs struct {
	big, bare int
	count     []int
}

func (e *env) exhaustionIDs() exhaustionIDs {
	base := e.own.VMs[0].VMID + 60
	ids := exhaustionIDs{big: base, bare: base + 1}
	for i := 0; i <= e.att.Envelope.VMs-1; i++ { // as many clones as the envelope admits VMs, beside tdemo-1
		ids.count = append(ids.count, base+2+i)
	}
	return ids
}

// exhaustionProbes: a bigger VM (memory, vCPUs), a snippet, disk growth, the VM count, and a VM
// made without the template; each ends refused or capped, except the last, which PVE starts: a VM
// made with POST /qemu has no hookscript until the next sweep (the window ADR-0014 names), so
// tests/adversary/run.sh runs the tenant converge and then sweptProbes.
func exhaustionProbes(e *env) []apiProbe {
	ids := e.exhaustionIDs()
	env := e.att.Envelope
	node := e.node
	cfg := func(vmid int) string { return fmt.Sprintf("/nodes/%s/qemu/%d/config", node, vmid) }
	start := func(vmid int) string { return fmt.Sprintf("/nodes/%s/qemu/%d/status/start", node, vmid) }
	clone := fmt.Sprintf("/nodes/%s/qemu/%d/clone", node, e.template)
	guarded := "the envelope guard, the template's hookscript (a clone copies it), at pre-start"
	ps := []apiProbe{
		{name: "clone the template for the exhaustion probes", method: "POST", path: clone,
			params: map[string]any{"newid": ids.big, "name": "exhaust", "pool": e.own.Pool, "full": 1, "storage": e.own.Storage}, status: http.StatusOK, task: true,
			why: "VM.Allocate on its pool, space on its own storage"},
		{name: "memory 4 TiB (PVE allows it)", method: "PUT", path: cfg(ids.big), params: map[string]any{"memory": 4194304}, status: http.StatusOK,
			why: "VM.Config.Memory via the pool: PVE has no per-pool limit"},
		{name: "start with 4 TiB", method: "POST", path: start(ids.big), taskExit: guardExit(ids.big),
			logHas: fmt.Sprintf("over its envelope of %d MiB (envelope.memory)", env.Memory), why: guarded},
		{name: "512 vCPUs (PVE allows it)", method: "PUT", path: cfg(ids.big), params: map[string]any{"memory": 2048, "cores": 128, "sockets": 4}, status: http.StatusOK,
			why: "VM.Config.CPU via the pool"},
		{name: "start with 512 vCPUs", method: "POST", path: start(ids.big), taskExit: guardExit(ids.big),
			logHas: fmt.Sprintf("makes %d vCPUs running, over its envelope of %d vCPUs (envelope.cores)", 512+e.runningCores, env.Cores), why: guarded},
		{name: "cicustom naming the substrate's snippet (PVE allows it)", method: "PUT", path: cfg(ids.big),
			params: map[string]any{"cores": 1, "sockets": 1, "cicustom": "user=local:snippets/deevnet-envelopes.json"}, status: http.StatusOK,
			why: "cicustom needs VM.Config.Cloudinit, and no storage privilege (docs/security.md)"},
		{name: "start reading a snippet", method: "POST", path: start(ids.big), taskExit: guardExit(ids.big),
			logHas: fmt.Sprintf("VM %d's cicustom \"user=local:snippets/deevnet-envelopes.json\" names a snippet", ids.big), why: guarded},
		{name: "drop the cicustom", method: "PUT", path: cfg(ids.big), params: map[string]any{"delete": "cicustom"}, status: http.StatusOK, why: "VM.Config.Cloudinit"},
		{name: "grow its disk by 10 TiB (thin: PVE allows it)", method: "PUT", path: fmt.Sprintf("/nodes/%s/qemu/%d/resize", node, ids.big),
			params: map[string]any{"disk": "scsi0", "size": "+10240G"}, status: http.StatusOK, task: true,
			why: "LVM-thin grows the virtual size: the tenant's own pool caps what it can write (the lab fills it: ENOSPC there only), verify fails it over envelope.disk"},
		{name: "remove the grown VM", method: "DELETE", path: fmt.Sprintf("/nodes/%s/qemu/%d", node, ids.big), status: http.StatusOK, task: true, why: "VM.Allocate"},
	}
	// The count: clones are not limited (PVE has no count per pool; each takes space on the
	// tenant's own storage only), starts are: beside what already runs, the envelope's VMs.
	for i, id := range ids.count {
		ps = append(ps, apiProbe{name: fmt.Sprintf("clone %d of %d", i+1, len(ids.count)), method: "POST", path: clone,
			params: map[string]any{"newid": id, "name": fmt.Sprintf("count-%d", i+1), "pool": e.own.Pool, "storage": e.own.Storage, "full": 1},
			status: http.StatusOK, task: true, why: "VM.Allocate on the pool: PVE counts nothing"})
		// one vCPU each, so the count is what binds (the template has 2)
		ps = append(ps, apiProbe{name: fmt.Sprintf("clone %d: one vCPU", i+1), method: "PUT", path: cfg(id), params: map[string]any{"cores": 1, "memory": 512},
			status: http.StatusOK, why: "VM.Config.CPU"})
		p := apiProbe{name: fmt.Sprintf("start clone %d (%d running)", i+1, e.running+i+1), method: "POST", path: start(id), status: http.StatusOK, task: true,
			why: "inside the envelope: the guard lets it through"}
		if e.running+i+1 > env.VMs {
			p.status, p.task, p.taskExit = 0, false, guardExit(id)
			p.logHas = fmt.Sprintf("makes %d VMs running, over its envelope of %d VMs (envelope.vms)", e.running+i+1, env.VMs)
			p.why = guarded
		}
		ps = append(ps, p)
	}
	for _, id := range ids.count {
		stop := fmt.Sprintf("/nodes/%s/qemu/%d/status/stop", node, id)
		if id != ids.count[len(ids.count)-1] {
			ps = append(ps, apiProbe{name: fmt.Sprintf("stop %d", id), method: "POST", path: stop, status: http.StatusOK, task: true, why: "VM.PowerMgmt"})
		}
		ps = append(ps, apiProbe{name: fmt.Sprintf("remove %d", id), method: "DELETE", path: fmt.Sprintf("/nodes/%s/qemu/%d", node, id), status: http.StatusOK, task: true, why: "VM.Allocate"})
	}
	return append(ps,
		apiProbe{name: fmt.Sprintf("a VM made without the template (vmid %d), 32 vCPUs", ids.bare), method: "POST", path: "/nodes/" + node + "/qemu",
			params: map[string]any{"vmid": ids.bare, "name": "bare", "pool": e.own.Pool, "cores": 32, "memory": 1024}, status: http.StatusOK, task: true,
			why: "VM.Allocate on the pool; it has no hookscript (only root sets one)"},
		apiProbe{name: "start it before a sweep (the window: PVE starts it)", method: "POST", path: start(ids.bare), status: http.StatusOK, task: true,
			why: "no hookscript until the substrate's next sweep (ADR-0014 names the window); verify fails the tenant while it runs over"},
	)
}

// sweptProbes run after the tenant converge's sweep set the guard on the VM made without the
// template: its next start is refused, and the probes' VMs are removed.
func sweptProbes(e *env) []apiProbe {
	ids := e.exhaustionIDs()
	node := e.node
	vm := fmt.Sprintf("/nodes/%s/qemu/%d", node, ids.bare)
	return []apiProbe{
		{name: "stop it (the sweep stopped nothing)", method: "POST", path: vm + "/status/stop", status: http.StatusOK, task: true, why: "VM.PowerMgmt"},
		{name: "its next start", method: "POST", path: vm + "/status/start", taskExit: guardExit(ids.bare),
			logHas: fmt.Sprintf("over its envelope of %d vCPUs (envelope.cores)", e.att.Envelope.Cores), why: "the sweep set the guard as its hookscript"},
		{name: "remove it", method: "DELETE", path: vm, status: http.StatusOK, task: true, why: "VM.Allocate"},
	}
}
