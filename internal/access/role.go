package access

// The custom role on a tenant's pool (ADR-0013): only the privileges the tenant's own automation
// (tenant_vm with the tenant's token) uses. PVEVMAdmin, which it replaces, also holds
// VM.Migrate, VM.Replicate, VM.Snapshot, VM.Snapshot.Rollback, VM.Backup, VM.Console, VM.Clone,
// VM.Config.HWType, VM.Config.CDROM, VM.Config.Cloudinit and the VM.GuestAgent.* privileges; none
// of them is used,
// and each widens what a tenant's token can do to the substrate (ADR-0013 names why).

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// TenantRole is the custom role onboarding creates and grants on every tenant's pool.
const TenantRole = "DeevnetTenantVM"

// Priv is one privilege a tenant holds, the call of the tenant's automation that needs it, and
// what that call answers without it ({x} stands for any one path part).
type Priv struct {
	Name, NeededBy, Refusal string
}

// TenantPrivs is TenantRole's privileges, each with the call that needs it (the least-privilege
// test removes each in turn and wants exactly that call refused). VM.Allocate's refusal names no
// privilege: PVE's clone check is a composite (VM.Allocate on the new vmid or on the pool).
var TenantPrivs = []Priv{
	{"VM.Allocate", "tenant_vm: clone the template into the pool (POST /nodes/{node}/qemu/{template}/clone), destroy a VM",
		"POST /nodes/{node}/qemu/{template}/clone: PVE API 403: Permission check failed"},
	{"VM.Audit", "tenant_vm: read a VM's config (GET /nodes/{node}/qemu/{vmid}/pending)",
		"GET /nodes/{node}/qemu/{vmid}/pending: PVE API 403: Permission check failed (/vms/{vmid}, VM.Audit)"},
	{"VM.Config.CPU", "tenant_vm: set cores (PUT /nodes/{node}/qemu/{vmid}/config)",
		"PUT /nodes/{node}/qemu/{vmid}/config: PVE API 403: Permission check failed (/vms/{vmid}, VM.Config.CPU)"},
	{"VM.Config.Disk", "tenant_vm: grow the disk (PUT /nodes/{node}/qemu/{vmid}/resize)",
		"PUT /nodes/{node}/qemu/{vmid}/resize: PVE API 403: Permission check failed (/vms/{vmid}, VM.Config.Disk)"},
	{"VM.Config.Memory", "tenant_vm: set memory (PUT /nodes/{node}/qemu/{vmid}/config)",
		"PUT /nodes/{node}/qemu/{vmid}/config: PVE API 403: Permission check failed (/vms/{vmid}, VM.Config.Memory)"},
	{"VM.Config.Network", "tenant_vm: net0 on the VNet, and ipconfig0 and the cloud-init options (PVE takes VM.Config.Network or VM.Config.Cloudinit for them)",
		"PUT /nodes/{node}/qemu/{vmid}/config: PVE API 403: Permission check failed (/vms/{vmid}, VM.Config.Cloudinit|VM.Config.Network)"},
	{"VM.Config.Options", "tenant_vm: set name, tags, description (PUT /nodes/{node}/qemu/{vmid}/config)",
		"PUT /nodes/{node}/qemu/{vmid}/config: PVE API 403: Permission check failed (/vms/{vmid}, VM.Config.Options)"},
	{"VM.Migrate", "tenant_vm: a VM on another node than the template's, on the tenant's own storage (cloned on the template's node, then POST /nodes/{node}/qemu/{vmid}/migrate: clone_vm puts a copy on storage that is not shared on its own node only)",
		"POST /nodes/{node}/qemu/{vmid}/migrate: PVE API 403: Permission check failed (/vms/{vmid}, VM.Migrate)"},
	{"VM.PowerMgmt", "tenant_vm: start and stop a VM (POST /nodes/{node}/qemu/{vmid}/status/start|stop)",
		"POST /nodes/{node}/qemu/{vmid}/status/start: PVE API 403: Permission check failed (/vms/{vmid}, VM.PowerMgmt)"},
}

// Role is a custom role as the module owns it.
type Role struct {
	ID    string   `json:"id"`
	Privs []string `json:"privs"`
}

// tenantRole is TenantRole with its privileges, sorted as PVE lists them.
func tenantRole() Role {
	r := Role{ID: TenantRole}
	for _, p := range TenantPrivs {
		r.Privs = append(r.Privs, p.Name)
	}
	slices.Sort(r.Privs)
	return r
}

// readRoles reads the privileges of every role (GET /access/roles: "privs" is a comma list).
func (a Access) readRoles(ctx context.Context) (map[string][]string, error) {
	var list []struct {
		RoleID string `json:"roleid"`
		Privs  string `json:"privs"`
	}
	if err := a.C.Get(ctx, "/access/roles", nil, &list); err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	out := map[string][]string{}
	for _, r := range list {
		var privs []string
		for _, p := range strings.Split(r.Privs, ",") {
			if p = strings.TrimSpace(p); p != "" {
				privs = append(privs, p)
			}
		}
		slices.Sort(privs)
		out[r.RoleID] = privs
	}
	return out, nil
}

// roleOps creates a missing role or sets the privileges of one that differs (the module owns
// the role whole: a privilege added by hand is removed). Roles come before the grants naming them.
func roleOps(want []Role, have map[string][]string) []Op {
	var ops []Op
	for _, r := range want {
		privs := strings.Join(r.Privs, ",")
		cur, ok := have[r.ID]
		switch {
		case !ok:
			ops = append(ops, Op{Describe: "create role " + r.ID + " (" + privs + ")", Method: "POST", Path: "/access/roles",
				Body: map[string]any{"roleid": r.ID, "privs": privs}})
		case !slices.Equal(cur, r.Privs):
			ops = append(ops, Op{Describe: "set the privileges of role " + r.ID + " to " + privs, Method: "PUT",
				Path: "/access/roles/" + url.PathEscape(r.ID), Body: map[string]any{"privs": privs}})
		}
	}
	return ops
}
