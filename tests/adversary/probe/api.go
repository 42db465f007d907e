package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/deevnet/tenant/internal/pve"
)

// apiProbe is one call with the tenant's token and the outcome PVE 9 gives it: status 200 (a
// task, when task is set, that ends OK), or status and message exactly as PVE words them.
type apiProbe struct {
	name   string
	method string
	path   string
	params map[string]any
	status int
	msg    string
	task   bool
	// taskExit: PVE accepts the call (200) and its task fails with this exit status, its log
	// holding logHas (the envelope guard's refusal at pre-start, for instance).
	taskExit, logHas string
	why              string // what enforces it (docs/security.md): PVE's check, or the project's grant
}

// perm is PVE's 403 text (PVE::Exception::raise_perm_exc): "Permission check failed (<what>)".
func perm(what string) string { return "Permission check failed (" + what + ")" }

// apiProbes is the table. The squat clone stays: tests/adversary/run.sh then checks that tenant_vm,
// verify and the site report name its holder.
func apiProbes(e *env) []apiProbe {
	own, oth := e.own, e.other
	vm := own.VMs[0].VMID
	cfg := fmt.Sprintf("/nodes/%s/qemu/%d/config", e.node, vm)
	vnet, ovnet := own.VNets[0].ID, oth.VNets[0].ID
	bridge := e.bridge
	nic := func(extra string) string { return "virtio=" + e.mac + ",bridge=" + extra }
	brPath := "/sdn/zones/localnetwork/" + bridge
	free := own.VMs[0].VMID + 50 // in the tenant's own range, unused by the plan's first VMs
	squat := oth.VMs[1].VMID     // the other tenant's second VM: free while it has one
	clone := fmt.Sprintf("/nodes/%s/qemu/%d/clone", e.node, e.template)
	otherNode := e.node
	for _, n := range e.site.Nodes {
		if n != e.node {
			otherNode = n
		}
	}
	return []apiProbe{
		// What the token is for (the tenant's own automation): these must work.
		{name: "read own VM config", method: "GET", path: cfg, status: 200, why: "VM.Audit via /pool/" + own.Pool},
		{name: "set own VM description", method: "PUT", path: cfg, params: map[string]any{"description": "adversary probe"}, status: 200,
			why: "VM.Config.Options via the pool"},
		{name: "net1 on own VNet", method: "PUT", path: cfg, params: map[string]any{"net1": "virtio,bridge=" + vnet}, status: 200,
			why: "SDN.Use on /sdn/zones/" + own.Zone},
		{name: "remove net1", method: "PUT", path: cfg, params: map[string]any{"delete": "net1"}, status: 200, why: "VM.Config.Network"},

		// NICs on every bridge that is not the tenant's VNet (update, create).
		{name: "net0 moved to " + bridge, method: "PUT", path: cfg, params: map[string]any{"net0": nic(bridge)},
			status: 403, msg: perm(brPath + ", SDN.Use"), why: "no SDN.Use on the site bridge (adv-access: no grant on it)"},
		{name: "net1 on " + bridge, method: "PUT", path: cfg, params: map[string]any{"net1": "virtio,bridge=" + bridge},
			status: 403, msg: perm(brPath + ", SDN.Use"), why: "as above"},
		{name: "net1 on " + bridge + " tag transit VLAN", method: "PUT", path: cfg,
			params: map[string]any{"net1": fmt.Sprintf("virtio,bridge=%s,tag=%d", bridge, e.site.TransitVLAN)},
			status: 403, msg: perm(fmt.Sprintf("%s/%d, SDN.Use", brPath, e.site.TransitVLAN)), why: "check_vnet_access: the VLAN's path"},
		{name: "net1 on " + bridge + " trunks 1-4094", method: "PUT", path: cfg, params: map[string]any{"net1": "virtio,bridge=" + bridge + ",trunks=1-4094"},
			status: 403, msg: perm(brPath + "/1, SDN.Use"), why: "check_vnet_access checks every VLAN of a trunk (sorted as strings: 1 first)"},
		{name: "net1 on the other tenant's VNet " + ovnet, method: "PUT", path: cfg, params: map[string]any{"net1": "virtio,bridge=" + ovnet},
			status: 403, msg: perm("/sdn/zones/" + oth.Zone + "/" + ovnet + ", SDN.Use"), why: "SDN.Use only on its own zone"},
		{name: "new VM in own pool on " + bridge, method: "POST", path: "/nodes/" + e.node + "/qemu",
			params: map[string]any{"vmid": free, "pool": own.Pool, "net0": "virtio,bridge=" + bridge},
			status: 403, msg: perm(brPath + ", SDN.Use"), why: "create checks every NIC's bridge"},
		{name: "new VM in own pool on " + ovnet, method: "POST", path: "/nodes/" + e.node + "/qemu",
			params: map[string]any{"vmid": free + 1, "pool": own.Pool, "net0": "virtio,bridge=" + ovnet},
			status: 403, msg: perm("/sdn/zones/" + oth.Zone + "/" + ovnet + ", SDN.Use"), why: "as above"},

		// Root-only and host options (qemu-server's $check_vm_modify_config_perm: a plain die, 500).
		{name: "hookscript", method: "PUT", path: cfg, params: map[string]any{"hookscript": "local:snippets/x.sh"},
			status: 500, msg: "only root can set 'hookscript' config", why: "in no option group: root only"},
		{name: "args", method: "PUT", path: cfg, params: map[string]any{"args": "-no-reboot"},
			status: 500, msg: "only root can set 'args' config", why: "root only"},
		{name: "hostpci0 host device", method: "PUT", path: cfg, params: map[string]any{"hostpci0": "0000:01:00.0"},
			status: 500, msg: "only root can set 'hostpci0' config for non-mapped devices", why: "check_hostpci_perm"},
		{name: "usb0 host device", method: "PUT", path: cfg, params: map[string]any{"usb0": "host=1234:5678"},
			status: 403, msg: perm(fmt.Sprintf("/vms/%d, VM.Config.HWType", vm)), why: "check_usb_perm: VM.Config.HWType first (not in the tenant's role), then root only"},
		{name: "serial0 host device", method: "PUT", path: cfg, params: map[string]any{"serial0": "/dev/ttyS0"},
			status: 500, msg: "only root can modify 'serial0' config for real devices", why: "update: serial only as socket"},
		{name: "startup order", method: "PUT", path: cfg, params: map[string]any{"startup": "order=1"},
			status: 403, msg: perm("/, Sys.Modify"), why: "startup changes host behaviour: Sys.Modify on /"},

		// Storages the tenant was not granted.
		{name: "new disk on local", method: "PUT", path: cfg, params: map[string]any{"scsi1": "local:1"},
			status: 403, msg: perm("/storage/local, Datastore.AllocateSpace"), why: "check_storage_access"},

		{name: "create a storage", method: "POST", path: "/storage", params: map[string]any{"storage": "evil", "type": "dir", "path": "/"},
			status: 403, msg: perm("/storage, Datastore.Allocate"), why: "no Datastore.Allocate"},

		// Migration: the role has VM.Migrate (a VM on another node than the template's is cloned,
		// then migrated, ADR-0013), but its disks can only go where the token may allocate.
		{name: "migrate own VM to " + otherNode + " with its disks onto local-lvm", method: "POST", path: fmt.Sprintf("/nodes/%s/qemu/%d/migrate", e.node, vm),
			params: map[string]any{"target": otherNode, "online": 1, "targetstorage": "local-lvm"}, status: 403, msg: perm("/storage/local-lvm, Datastore.AllocateSpace"),
			why: "migrate_vm's $check_storage_access_migrate: Datastore.AllocateSpace on the target storage, the tenant's own only"},

		// The other tenant's VM and vmids, and squatting, which PVE allows (docs/security.md).
		{name: "read the other tenant's VM", method: "GET", path: fmt.Sprintf("/nodes/%s/qemu/%d/config", e.node, oth.VMs[0].VMID),
			status: 403, msg: perm(fmt.Sprintf("/vms/%d, VM.Audit", oth.VMs[0].VMID)), why: "no ACL on its pool"},
		{name: "stop the other tenant's VM", method: "POST", path: fmt.Sprintf("/nodes/%s/qemu/%d/status/stop", e.node, oth.VMs[0].VMID),
			status: 403, msg: perm(fmt.Sprintf("/vms/%d, VM.PowerMgmt", oth.VMs[0].VMID)), why: "as above"},
		{name: "destroy the other tenant's VM", method: "DELETE", path: fmt.Sprintf("/nodes/%s/qemu/%d", e.node, oth.VMs[0].VMID),
			status: 403, msg: perm(fmt.Sprintf("/vms/%d, VM.Allocate", oth.VMs[0].VMID)), why: "as above"},
		{name: "clone into the other tenant's pool", method: "POST", path: clone, params: map[string]any{"newid": squat, "pool": oth.Pool},
			status: 403, msg: "Permission check failed", why: "VM.Allocate neither on the vmid nor on that pool (an 'or' check: PVE names no path)"},
		// Disk: the token may allocate on its own storage only (ADR-0014 decision 2).
		{name: "clone onto the shared storage local-lvm", method: "POST", path: clone,
			params: map[string]any{"newid": squat, "name": "squat", "pool": own.Pool, "full": 1, "storage": "local-lvm"},
			status: 403, msg: perm("/storage/local-lvm, Datastore.AllocateSpace"),
			why: "Datastore.AllocateSpace on the tenant's own storage only (substrate_storages: [])"},
		{name: "clone onto the other tenant's storage", method: "POST", path: clone,
			params: map[string]any{"newid": squat, "name": "squat", "pool": own.Pool, "full": 1, "storage": oth.Storage},
			status: 403, msg: perm("/storage/" + oth.Storage + ", Datastore.AllocateSpace"), why: "as above"},
		{name: fmt.Sprintf("squat vmid %d of %s's range in own pool (PVE allows it)", squat, oth.Name), method: "POST", path: clone,
			params: map[string]any{"newid": squat, "name": "squat", "pool": own.Pool, "full": 1, "storage": own.Storage}, status: 200, task: true,
			why: "VM.Allocate on the pool takes any free vmid: verify and the site report name the squatter"},

		// Pools, ACLs, tokens, users, roles.
		{name: "create a pool", method: "POST", path: "/pools", params: map[string]any{"poolid": "evil"},
			status: 403, msg: perm("/pool/evil, Pool.Allocate"), why: "Pool.Audit only"},
		{name: "add the other tenant's VM to own pool", method: "PUT", path: "/pools", params: map[string]any{"poolid": own.Pool, "vms": fmt.Sprint(oth.VMs[0].VMID)},
			status: 403, msg: perm("/pool/" + own.Pool + ", Pool.Allocate"), why: "Pool.Audit only"},
		{name: "grant itself Administrator on /", method: "PUT", path: "/access/acl",
			params: map[string]any{"path": "/", "roles": "Administrator", "tokens": e.att.PVE.User + "!" + e.att.PVE.TokenID},
			status: 403, msg: perm("/, Permissions.Modify"), why: "no Permissions.Modify"},
		{name: "grant itself the other tenant's pool", method: "PUT", path: "/access/acl",
			params: map[string]any{"path": "/pool/" + oth.Pool, "roles": "PVEVMAdmin", "users": e.att.PVE.User},
			status: 403, msg: perm("/pool/" + oth.Pool + ", Permissions.Modify|Pool.Allocate"), why: "check_perm_modify"},
		{name: "mint another token", method: "POST", path: "/access/users/" + e.att.PVE.User + "/token/evil", params: map[string]any{"privsep": 0},
			status: 403, msg: "Permission check failed", why: "userid-param self: a token is not its user"},
		{name: "create a user", method: "POST", path: "/access/users", params: map[string]any{"userid": "evil@pve"},
			status: 403, msg: perm("/access/realm/pve, Realm.AllocateUser"), why: "no Realm.AllocateUser"},
		{name: "create a role", method: "POST", path: "/access/roles", params: map[string]any{"roleid": "Evil", "privs": "Sys.Modify"},
			status: 403, msg: perm("/access, Sys.Modify"), why: "no Sys.Modify"},

		// SDN objects, the lock, apply; the node network.
		{name: "create a zone", method: "POST", path: "/cluster/sdn/zones", params: map[string]any{"zone": "evil", "type": "simple"},
			status: 403, msg: perm("/sdn/zones, SDN.Allocate"), why: "SDN.Use and SDN.Audit only"},
		{name: "create a VNet in own zone", method: "POST", path: "/cluster/sdn/vnets", params: map[string]any{"vnet": "evil", "zone": own.Zone},
			status: 403, msg: perm("/sdn/zones/" + own.Zone + ", SDN.Allocate"), why: "the network half is the substrate's (ADR-0010)"},
		{name: "change the other tenant's VNet", method: "PUT", path: "/cluster/sdn/vnets/" + ovnet, params: map[string]any{"alias": "evil"},
			status: 403, msg: perm("/sdn/zones/" + oth.Zone + "/" + ovnet + ", SDN.Allocate"), why: "as above"},
		{name: "delete the other tenant's zone", method: "DELETE", path: "/cluster/sdn/zones/" + oth.Zone,
			status: 403, msg: perm("/sdn/zones/" + oth.Zone + ", SDN.Allocate"), why: "as above"},
		{name: "take the SDN lock", method: "POST", path: "/cluster/sdn/lock",
			status: 403, msg: perm("/sdn, SDN.Allocate"), why: "lock and apply are the substrate's"},
		{name: "apply SDN", method: "PUT", path: "/cluster/sdn",
			status: 403, msg: perm("/sdn, SDN.Allocate"), why: "as above"},
	}
}

// runAPI sends one probe and compares the outcome with the table's.
func (e *env) runAPI(ctx context.Context, p apiProbe) (string, error) {
	var out any
	var err error
	switch p.method {
	case "GET":
		err = e.api.Get(ctx, p.path, nil, &out)
	case "POST":
		err = e.api.Post(ctx, p.path, p.params, &out)
	case "PUT":
		err = e.api.Put(ctx, p.path, p.params, &out)
	case "DELETE":
		err = e.api.Delete(ctx, p.path, nil, &out)
	}
	call := p.method + " " + p.path
	if err == nil && (p.task || p.taskExit != "") {
		upid, _ := out.(string)
		if upid == "" {
			return "", fmt.Errorf("%s: answered 200 without a task", call)
		}
		err = e.api.WaitTask(ctx, upid)
	}
	var ae *pve.APIError
	var te *pve.TaskError
	switch {
	case p.taskExit != "" && errors.As(err, &te):
		log := strings.Join(te.LogTail, "\n")
		if te.ExitStatus != p.taskExit || !strings.Contains(log, p.logHas) {
			return "", fmt.Errorf("%s: task failed with %q (log %q), want %q with %q in its log (%s)", call, te.ExitStatus, log, p.taskExit, p.logHas, p.why)
		}
		return fmt.Sprintf("%s: 200, task failed: %s: %s (%s)", call, te.ExitStatus, p.logHas, p.why), nil
	case p.taskExit != "" && err == nil:
		return "", fmt.Errorf("%s: task OK, want it to fail with %q (%s)", call, p.taskExit, p.why)
	case err == nil && p.status == http.StatusOK:
		return fmt.Sprintf("%s: 200 (%s)", call, p.why), nil
	case err == nil:
		return "", fmt.Errorf("%s: accepted (200), want %d %q (%s)", call, p.status, p.msg, p.why)
	case errors.As(err, &ae) && ae.Status == p.status && strings.TrimSpace(ae.Message) == p.msg:
		return fmt.Sprintf("%s: %d %s (%s)", call, ae.Status, ae.Message, p.why), nil
	case errors.As(err, &ae):
		return "", fmt.Errorf("%s: %d %q%s, want %d %q (%s)", call, ae.Status, ae.Message, paramErrors(ae), p.status, p.msg, p.why)
	}
	return "", fmt.Errorf("%s: %w, want %d %q", call, err, p.status, p.msg)
}

// paramErrors shows a 400's per-parameter errors, which say what the call got wrong.
func paramErrors(ae *pve.APIError) string {
	if len(ae.Errors) == 0 {
		return ""
	}
	return fmt.Sprintf(" %v", ae.Errors)
}
