// Package preflight reads a PVE cluster, with GET requests only, and says of each assumption the
// collection and pvesim make about it whether the cluster meets it (docs/preflight.md): the
// deevnet.tenant.substrate_preflight module, which playbooks/preflight.yml runs before anything
// else on a real cluster. Every test of the collection runs against pvesim, written from our
// reading of PVE's code; a user's cluster is where that reading first meets the truth.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/access"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/vm"
)

// The states of a check.
const (
	OK      = "ok"
	Differs = "differs"
	Unknown = "unknown" // could not be read (a node not reachable); not a failure
	Skipped = "skipped" // the inventory turns off what the assumption is for
)

// Check is one assumption and what the cluster shows of it.
type Check struct {
	Name       string   `json:"name"`
	Assumption string   `json:"assumption"`
	Status     string   `json:"status"`
	Found      string   `json:"found"`
	Differs    []string `json:"differs"`
	// Breaks is what goes wrong when the assumption does not hold.
	Breaks string `json:"breaks"`
	// Fatal: a difference breaks the collection, so the play fails (after reporting everything).
	Fatal bool `json:"fatal"`
}

// Packages is what one node's package database says of FRR and ifupdown2 ("" when not
// installed), or Error when it could not be read.
type Packages struct {
	FRR, Ifupdown2 string
	Error          string
}

// Input is what the checks compare the cluster with: the substrate inventory's values.
type Input struct {
	Nodes       []string // the hypervisors group: the fabric's members
	Template    int
	Storages    []string // substrate_storages: granted to every tenant for the clone
	TenantVG    string
	Tenants     []string // onboarded tenants: their thin pools must be on every node
	Hookscript  bool     // the envelope guard is on (substrate_envelope_guard)
	SnippetsDir string
	QDevice     string
	Packages    map[string]Packages // by node; a node missing here is not reachable
}

// Getter is the one call the preflight makes: it only reads.
type Getter interface {
	Get(ctx context.Context, path string, query url.Values, out any) error
}

// readOnly is a Getter as package vm's API: the reads vm makes, and every write refused before
// it is sent, so no path through vm's readers can write.
type readOnly struct{ Getter }

var errReadOnly = errors.New("preflight: refusing a write (the preflight only reads)")

func (readOnly) Post(context.Context, string, any, any) error          { return errReadOnly }
func (readOnly) Put(context.Context, string, any, any) error           { return errReadOnly }
func (readOnly) Delete(context.Context, string, url.Values, any) error { return errReadOnly }
func (readOnly) WaitTask(context.Context, string) error                { return errReadOnly }

// Endpoints are the reads the collection's modules make at the cluster level (each module's
// first read of its kind), with the module that makes it: a PVE without one of them (an older
// release, an endpoint moved) fails that module on its first call.
var Endpoints = []struct{ Path, Query, UsedBy string }{
	{"/version", "", "every module (the client checks the API answers)"},
	{"/cluster/sdn/fabrics/all", "pending=1", "pve_sdn_fabric (PVE 9's SDN fabrics)"},
	{"/cluster/sdn/zones", "pending=1", "tenant_vrf, pve_tenant_access, tenant_index_info"},
	{"/cluster/sdn/vnets", "pending=1", "tenant_vrf, tenant_vm, tenant_index_info"},
	{"/cluster/sdn/controllers", "pending=1", "pve_sdn_fabric (the EVPN controller)"},
	{"/pools", "", "pve_tenant_access, tenant_index_info"},
	{"/access/roles", "", "pve_tenant_access (the tenant role)"},
	{"/access/acl", "", "pve_tenant_access"},
	{"/access/users", "", "pve_tenant_access, tenant_index_info"},
	{"/storage", "", "pve_tenant_access (the tenant's storage)"},
	{"/cluster/resources", "", "tenant_vm, pve_tenant_access, the envelope guard"},
	{"/cluster/status", "", "the modules' quorum check, corosync_qdevice"},
	{"/cluster/config/nodes", "", "corosync_qdevice"},
	{"/nodes", "", "pve_sdn_apply, tenant_vm (node status)"},
}

// Run makes every check, in the order docs/preflight.md lists them. Reads that fail become the
// check's finding (a 403 says the credential lacks a privilege); only a cancelled context ends it.
func Run(ctx context.Context, c Getter, in Input) ([]Check, error) {
	checks := []Check{
		version(ctx, c),
		endpoints(ctx, c),
		privileges(ctx, c),
		tenantStorage(ctx, c, in),
		storages(ctx, c, in),
		hookscriptStorage(ctx, c, in),
	}
	checks = append(checks, template(ctx, c, in)...)
	checks = append(checks, quorum(ctx, c, in), packages(in))
	if err := ctx.Err(); err != nil {
		return checks, fmt.Errorf("preflight: %w", err)
	}
	for i := range checks {
		if checks[i].Status == "" {
			checks[i].Status = OK
			if len(checks[i].Differs) > 0 {
				checks[i].Status = Differs
			}
		}
	}
	return checks, nil
}

// Failed names the checks whose difference breaks the collection.
func Failed(checks []Check) []string {
	var out []string
	for _, c := range checks {
		if c.Fatal && c.Status == Differs {
			out = append(out, c.Name)
		}
	}
	return out
}

func version(ctx context.Context, c Getter) Check {
	ch := Check{Name: "pve_version", Fatal: true,
		Assumption: "Proxmox VE 9 (GET /version: version 9.x)",
		Breaks:     "every module: pvesim, the modules' requests and their checks follow PVE 9's API schema (SDN fabrics, the privilege set, the config keys)"}
	var v struct {
		Version string `json:"version"`
		Release string `json:"release"`
	}
	if err := c.Get(ctx, "/version", nil, &v); err != nil {
		ch.Differs = []string{"GET /version: " + err.Error()}
		return ch
	}
	ch.Found = "version " + v.Version + ", release " + v.Release
	if major, _, _ := strings.Cut(v.Version, "."); major != "9" {
		ch.Differs = []string{"version " + v.Version + ", not 9.x"}
	}
	return ch
}

func endpoints(ctx context.Context, c Getter) Check {
	ch := Check{Name: "api_endpoints", Fatal: true,
		Assumption: fmt.Sprintf("the %d cluster-level reads the modules make answer (e.g. GET /cluster/sdn/fabrics/all)", len(Endpoints)),
		Breaks:     "the module that makes the read fails on its first call (each endpoint names its modules)"}
	var ok int
	for _, e := range Endpoints {
		q, _ := url.ParseQuery(e.Query)
		var out any
		if err := c.Get(ctx, e.Path, q, &out); err != nil {
			ch.Differs = append(ch.Differs, fmt.Sprintf("GET %s: %v (used by %s)", e.Path, err, e.UsedBy))
			continue
		}
		ok++
	}
	ch.Found = fmt.Sprintf("%d of %d answer", ok, len(Endpoints))
	return ch
}

// privileges checks the names the tenant's grants rely on: every privilege of the tenant role
// exists (PVE's Administrator role holds every privilege there is: pve-access-control gives it
// all of them), and each built-in role the grants name exists and holds what the tenant uses.
func privileges(ctx context.Context, c Getter) Check {
	ch := Check{Name: "privileges", Fatal: true,
		Assumption: "the privileges of role " + access.TenantRole + " exist (Administrator holds them), and the built-in roles the tenant's grants name hold what the tenant uses",
		Breaks:     "pve_tenant_access: PVE refuses role " + access.TenantRole + " with an unknown privilege, or a grant of a built-in role leaves the tenant's token without the call the privilege is for (tenant_vm fails with 403)"}
	var list []struct {
		RoleID string `json:"roleid"`
		Privs  string `json:"privs"`
	}
	if err := c.Get(ctx, "/access/roles", nil, &list); err != nil {
		ch.Differs = []string{"GET /access/roles: " + err.Error()}
		return ch
	}
	roles := map[string][]string{}
	for _, r := range list {
		roles[r.RoleID] = strings.FieldsFunc(r.Privs, func(r rune) bool { return r == ',' || r == ' ' })
	}
	all, ok := roles["Administrator"]
	if !ok {
		ch.Differs = append(ch.Differs, "no role Administrator: the privilege names cannot be read")
	}
	for _, p := range access.TenantPrivs {
		if ok && !slices.Contains(all, p.Name) {
			ch.Differs = append(ch.Differs, fmt.Sprintf("privilege %s does not exist (needed by %s)", p.Name, p.NeededBy))
		}
	}
	for _, r := range slices.Sorted(maps.Keys(access.BuiltinRoleNeeds)) {
		have, exists := roles[r]
		if !exists {
			ch.Differs = append(ch.Differs, "built-in role "+r+" does not exist")
			continue
		}
		for _, p := range access.BuiltinRoleNeeds[r] {
			if !slices.Contains(have, p) {
				ch.Differs = append(ch.Differs, "built-in role "+r+" lacks "+p)
			}
		}
	}
	ch.Found = fmt.Sprintf("%d role(s); %d privilege(s) of %s and %d built-in role(s) checked", len(list), len(access.TenantPrivs), access.TenantRole, len(access.BuiltinRoleNeeds))
	if cur, exists := roles[access.TenantRole]; exists {
		// onboarding owns the role whole and sets it back: not a difference
		ch.Found += "; " + access.TenantRole + " exists (" + strings.Join(cur, ",") + "), onboarding sets its privileges"
	}
	return ch
}

type thinPool struct {
	LV string `json:"lv"`
	VG string `json:"vg"`
}

// tenantStorage: each tenant's storage is an lvmthin storage on its own thin pool in one volume
// group of every fabric member (ADR-0014 decision 2).
func tenantStorage(ctx context.Context, c Getter, in Input) Check {
	ch := Check{Name: "tenant_storage", Fatal: true,
		Assumption: "every fabric node has LVM thin pools (lvmthin) in volume group " + in.TenantVG + " (substrate_tenant_vgname), and each onboarded tenant's thin pool tenant-<name> there",
		Breaks:     "onboarding (pve_tenant_access) refuses the tenant's storage tenant-<name>: a node without the thin pool, or no LVM-thin at all (a ZFS install); the envelope's disk bound is that pool"}
	var found []string
	for _, node := range in.Nodes {
		var pools []thinPool
		if err := c.Get(ctx, "/nodes/"+url.PathEscape(node)+"/disks/lvmthin", nil, &pools); err != nil {
			ch.Differs = append(ch.Differs, fmt.Sprintf("node %s: GET /nodes/%s/disks/lvmthin: %v", node, node, err))
			continue
		}
		var inVG []string
		for _, p := range pools {
			if p.VG == in.TenantVG {
				inVG = append(inVG, p.LV)
			}
		}
		slices.Sort(inVG)
		if len(inVG) == 0 {
			ch.Differs = append(ch.Differs, fmt.Sprintf("node %s: no thin pool in volume group %s", node, in.TenantVG))
		}
		for _, t := range in.Tenants {
			if !slices.Contains(inVG, "tenant-"+t) {
				ch.Differs = append(ch.Differs, fmt.Sprintf("node %s: no thin pool %s/tenant-%s of onboarded tenant %s", node, in.TenantVG, t, t))
			}
		}
		found = append(found, fmt.Sprintf("%s: %s/{%s}", node, in.TenantVG, strings.Join(inVG, ",")))
	}
	ch.Found = strings.Join(found, "; ")
	return ch
}

type storageCfg struct {
	Storage string `json:"storage"`
	Type    string `json:"type"`
	Content string `json:"content"`
	Path    string `json:"path"`
	Disable any    `json:"disable"`
	Nodes   string `json:"nodes"`
}

func (s storageCfg) content() []string {
	return strings.FieldsFunc(s.Content, func(r rune) bool { return r == ',' || r == ' ' })
}

func (s storageCfg) disabled() bool {
	v := fmt.Sprint(s.Disable)
	return v == "1" || v == "true"
}

func readStorages(ctx context.Context, c Getter) (map[string]storageCfg, error) {
	var list []storageCfg
	if err := c.Get(ctx, "/storage", nil, &list); err != nil {
		return nil, fmt.Errorf("GET /storage: %w", err)
	}
	out := map[string]storageCfg{}
	for _, s := range list {
		out[s.Storage] = s
	}
	return out, nil
}

// storages: substrate_storages, granted to every tenant, hold VM images.
func storages(ctx context.Context, c Getter, in Input) Check {
	ch := Check{Name: "storages", Fatal: true,
		Assumption: "each of substrate_storages " + fmt.Sprint(in.Storages) + " exists, is enabled and holds images",
		Breaks:     "onboarding refuses the grant (storage does not exist), or a clone's disks cannot be allocated there"}
	if len(in.Storages) == 0 {
		ch.Status, ch.Found = Skipped, "substrate_storages is empty: a tenant clones onto its own storage only"
		return ch
	}
	all, err := readStorages(ctx, c)
	if err != nil {
		ch.Differs = []string{err.Error()}
		return ch
	}
	var found []string
	for _, id := range in.Storages {
		s, ok := all[id]
		switch {
		case !ok:
			ch.Differs = append(ch.Differs, "storage "+id+" does not exist")
			continue
		case s.disabled():
			ch.Differs = append(ch.Differs, "storage "+id+" is disabled")
		case !slices.Contains(s.content(), "images"):
			ch.Differs = append(ch.Differs, "storage "+id+" has content "+s.Content+", not images")
		}
		found = append(found, fmt.Sprintf("%s (%s, %s)", id, s.Type, s.Content))
	}
	ch.Found = strings.Join(found, "; ")
	return ch
}

// hookscriptStorage: the envelope guard is every VM's hookscript local:snippets/deevnet-envelope-guard,
// and the substrate role writes it into substrate_snippets_dir on each node.
func hookscriptStorage(ctx context.Context, c Getter, in Input) Check {
	ch := Check{Name: "hookscript_storage", Fatal: true,
		Assumption: "storage local is a dir storage with content snippets whose snippets directory is " + in.SnippetsDir + " (substrate_snippets_dir: the guard, hookscript local:snippets/deevnet-envelope-guard)",
		Breaks:     "the envelope guard: PVE refuses hookscript local:snippets/... on a storage without snippets content, so the sweep cannot set it and a tenant's VM starts unguarded or is refused (ADR-0014)"}
	if !in.Hookscript {
		ch.Status, ch.Found = Skipped, "substrate_envelope_guard is false"
		return ch
	}
	all, err := readStorages(ctx, c)
	if err != nil {
		ch.Differs = []string{err.Error()}
		return ch
	}
	s, ok := all["local"]
	if !ok {
		ch.Differs = []string{"storage local does not exist"}
		return ch
	}
	ch.Found = fmt.Sprintf("local: type %s, path %s, content %s", s.Type, s.Path, s.Content)
	if s.Type != "dir" {
		ch.Differs = append(ch.Differs, "local is of type "+s.Type+", not dir")
	}
	// a lab's node is a directory: its root may stand before the node's own path
	if want := path.Clean(s.Path) + "/snippets"; !strings.HasSuffix(path.Clean(in.SnippetsDir), want) {
		ch.Differs = append(ch.Differs, fmt.Sprintf("local's path is %s, but substrate_snippets_dir %s is not its snippets directory (%s)", s.Path, in.SnippetsDir, want))
	}
	if !slices.Contains(s.content(), "snippets") {
		ch.Differs = append(ch.Differs, "local has content "+s.Content+", without snippets (pvesm set local --content "+s.Content+",snippets)")
	}
	if s.disabled() {
		ch.Differs = append(ch.Differs, "local is disabled")
	}
	return ch
}

// template: what pve_tenant_access grants on and tenant_vm clones from (substrate_template).
func template(ctx context.Context, c Getter, in Input) []Check {
	ch := Check{Name: "template", Fatal: true,
		Assumption: fmt.Sprintf("vmid %d (substrate_template) is a template (template=1) with a disk and no NIC", in.Template),
		Breaks:     "onboarding refuses the grant on /vms/<template> (missing, not a template, a NIC on a site bridge: ADR-0013); tenant_vm cannot clone or resize a VM without a disk"}
	guest := Check{Name: "template_guest",
		Assumption: "the template has a cloud-init drive and the QEMU guest agent on (agent=1)",
		Breaks:     "no cloud-init drive: a VM's ipconfig0, nameserver and SSH keys never reach the guest (tenant_vm warns); no agent: the VM's addresses cannot be read back"}
	api := readOnly{c}
	inv, err := vm.ReadInventory(ctx, api)
	if err != nil {
		ch.Differs = []string{err.Error()}
		guest.Status = Unknown
		return []Check{ch, guest}
	}
	g, ok := inv.VMs[in.Template]
	if !ok {
		ch.Differs = []string{fmt.Sprintf("VM %d does not exist", in.Template)}
		guest.Status = Unknown
		return []Check{ch, guest}
	}
	cfg, _, err := vm.ReadConfig(ctx, api, g.Node, g.VMID)
	if err != nil {
		ch.Differs = []string{err.Error()}
		guest.Status = Unknown
		return []Check{ch, guest}
	}
	var nics []string
	for k := range cfg {
		if strings.HasPrefix(k, "net") {
			if _, err := strconv.Atoi(k[3:]); err == nil {
				nics = append(nics, k)
			}
		}
	}
	slices.Sort(nics)
	disk, hasDisk := vm.BootDisk(cfg)
	ch.Found = fmt.Sprintf("%d %q on %s: template=%s", g.VMID, g.Name, g.Node, cfg["template"])
	if hasDisk {
		ch.Found += ", disk " + disk.Key + " on " + disk.Storage
	}
	if len(nics) > 0 {
		ch.Found += ", NIC(s) " + strings.Join(nics, ",")
	}
	if !g.Template {
		ch.Differs = append(ch.Differs, fmt.Sprintf("%d is a VM, not a template", g.VMID))
	}
	if !hasDisk {
		ch.Differs = append(ch.Differs, fmt.Sprintf("%d has no disk (scsi/virtio/sata/ide, not a CD-ROM or cloud-init drive)", g.VMID))
	}
	for _, k := range nics {
		ch.Differs = append(ch.Differs, fmt.Sprintf("%d has %s (%s): tenant_vm adds net0 on the tenant's VNet; a NIC of the template needs SDN.Use on its bridge, which no tenant gets", g.VMID, k, cfg[k]))
	}
	guest.Found = fmt.Sprintf("agent=%q, cloud-init drive: %t", cfg["agent"], vm.HasCloudInitDrive(cfg))
	if !vm.HasCloudInitDrive(cfg) {
		guest.Differs = append(guest.Differs, "no cloud-init drive (qm set <template> --ide2 <storage>:cloudinit)")
	}
	if a := vm.ParseProps(cfg["agent"]); a[""] != "1" && a["enabled"] != "1" {
		guest.Differs = append(guest.Differs, fmt.Sprintf("agent is %q, not 1", cfg["agent"]))
	}
	return []Check{ch, guest}
}

// quorum: every fabric member is an online node of the cluster, the cluster is quorate, and each
// node has corosync's default one vote, which the QDevice reasoning counts on (ADR-0015).
func quorum(ctx context.Context, c Getter, in Input) Check {
	ch := Check{Name: "quorum", Fatal: true,
		Assumption: "the cluster is quorate, every hypervisor is an online member, and each node has one vote (quorum_votes 1)",
		Breaks:     "without quorum pmxcfs is read-only and every write fails; a missing member fails the fabric and the VMs placed on it; other votes break the QDevice's arithmetic (ADR-0015: ffsplit's one vote keeps one of two nodes quorate)"}
	var status []struct {
		Type    string `json:"type"`
		Name    string `json:"name"`
		Quorate any    `json:"quorate"`
		Online  any    `json:"online"`
	}
	if err := c.Get(ctx, "/cluster/status", nil, &status); err != nil {
		ch.Differs = []string{"GET /cluster/status: " + err.Error()}
		return ch
	}
	online := map[string]bool{}
	quorate, cluster := false, false
	for _, s := range status {
		switch s.Type {
		case "cluster":
			cluster, quorate = true, fmt.Sprint(s.Quorate) == "1"
		case "node":
			online[s.Name] = fmt.Sprint(s.Online) == "1"
		}
	}
	if cluster && !quorate {
		ch.Differs = append(ch.Differs, "the cluster is not quorate")
	}
	for _, n := range in.Nodes {
		up, member := online[n]
		switch {
		case !member:
			ch.Differs = append(ch.Differs, "hypervisor "+n+" is not a node of the cluster")
		case !up:
			ch.Differs = append(ch.Differs, "hypervisor "+n+" is offline")
		}
	}
	var cnodes []struct {
		Node  string `json:"node"`
		Votes any    `json:"quorum_votes"`
	}
	votes := []string{}
	if err := c.Get(ctx, "/cluster/config/nodes", nil, &cnodes); err != nil {
		var ae *pve.APIError
		// a single node without a cluster has no corosync.conf: one node, one vote
		if standalone := !cluster && errors.As(err, &ae); !standalone {
			ch.Differs = append(ch.Differs, "GET /cluster/config/nodes: "+err.Error())
		}
	}
	for _, n := range cnodes {
		v := fmt.Sprint(n.Votes)
		if v == "" || v == "<nil>" {
			v = "1"
		}
		votes = append(votes, n.Node+"="+v)
		if v != "1" {
			ch.Differs = append(ch.Differs, fmt.Sprintf("node %s has quorum_votes %s, not 1", n.Node, v))
		}
	}
	ch.Found = fmt.Sprintf("quorate=%t, %d node(s) online of %d, votes %s", quorate, countTrue(online), len(online), strings.Join(votes, ","))
	var qd map[string]any
	if in.QDevice != "" {
		if err := c.Get(ctx, "/cluster/config/qdevice", nil, &qd); err == nil && len(qd) > 0 {
			ch.Found += fmt.Sprintf("; QDevice %v (%v)", qd["QNetd host"], qd["State"])
		} else {
			// playbooks/qdevice.yml sets it up: not there before its first run
			ch.Found += "; no QDevice yet (playbooks/qdevice.yml sets up " + in.QDevice + ")"
		}
	}
	return ch
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// packages: what the nodes run the SDN with. pve-network (and sdnrender, which renders as PVE 9
// does: "frr version 10.4.1") writes FRR 10's configuration, and applies it with ifupdown2's
// ifreload; PVE 9 ships FRR 10 and Proxmox's ifupdown2 3.
func packages(in Input) Check {
	ch := Check{Name: "node_packages", Fatal: true,
		Assumption: "every hypervisor has FRR 10.x and ifupdown2 3.x installed (dpkg)",
		Breaks:     "the SDN apply: PVE writes FRR 10's frr.conf (EVPN, openfabric) and reloads with ifupdown2's ifreload; another FRR reads it differently or not at all, ifupdown (not 2) cannot reload"}
	var found []string
	unknown := 0
	for _, node := range in.Nodes {
		p, ok := in.Packages[node]
		switch {
		case !ok:
			unknown++
			found = append(found, node+": not read")
			continue
		case p.Error != "":
			unknown++
			found = append(found, node+": "+p.Error)
			continue
		}
		found = append(found, fmt.Sprintf("%s: frr %s, ifupdown2 %s", node, orNone(p.FRR), orNone(p.Ifupdown2)))
		if d := major(p.FRR, "10", "frr"); d != "" {
			ch.Differs = append(ch.Differs, node+": "+d)
		}
		if d := major(p.Ifupdown2, "3", "ifupdown2"); d != "" {
			ch.Differs = append(ch.Differs, node+": "+d)
		}
	}
	ch.Found = strings.Join(found, "; ")
	if len(ch.Differs) == 0 && unknown > 0 {
		ch.Status = Unknown
	}
	return ch
}

func orNone(v string) string {
	if v == "" {
		return "(not installed)"
	}
	return v
}

// major is "" when version (a Debian version, epoch allowed) has the major want, else why not.
func major(version, want, pkg string) string {
	if version == "" {
		return pkg + " is not installed"
	}
	v := version
	if _, rest, ok := strings.Cut(v, ":"); ok {
		v = rest
	}
	if m, _, _ := strings.Cut(v, "."); m != want {
		return fmt.Sprintf("%s %s, not %s.x", pkg, version, want)
	}
	return ""
}
