package pvesim

// VMs as a resource: list, create, delete.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// vmRoutes: QEMU VMs, a collection on each node. Below a VM, each handler gets it, looked up
// first (PVE's "does not exist" error).
func (s *Server) vmRoutes() routes {
	const vm = "/nodes/{node}/qemu/{vmid}"
	rs := collection("/nodes/{node}/qemu", "vmid", crud{list: s.qemuList, create: s.vmCreate, get: s.vmIndex, remove: on(s.getVM, s.vmDelete)})
	rs.add(routes{"GET " + vm + "/status": s.vmStatusIndex})
	for key, h := range map[string]func(*reqCtx, *VM) (any, error){
		"GET /config": s.vmConfigGet, "POST /config": s.vmConfigPost, "PUT /config": s.vmConfigPut, "GET /pending": s.vmPending,
		"PUT /resize": s.vmResizeChecked, "POST /clone": s.vmClone, "POST /template": s.vmTemplate,
		"GET /status/current": s.vmStatusCurrent, "GET /agent/network-get-interfaces": s.vmAgentInterfaces,
		"GET /cloudinit": s.vmCloudinit, "PUT /cloudinit": s.vmCloudinitRegen, "GET /cloudinit/dump": s.vmCloudinitDump,
	} {
		method, sub, _ := strings.Cut(key, " ")
		rs[method+" "+vm+sub] = on(s.getVM, h)
	}
	for _, action := range powerActions {
		rs["POST "+vm+"/status/"+action] = rootParams(s.vmPower(action), rootPowerParams[action]...)
	}
	rs["DELETE "+vm] = rootParams(rs["DELETE "+vm], "skiplock")
	rs["POST "+vm+"/migrate"] = s.vmMigrate
	return rs
}

// getVM finds a VM on a node with PVE's "config file does not exist" error.
func (s *Server) getVM(r *reqCtx) (*VM, error) {
	node := r.params.Str("node")
	vmid := int(r.params.Int("vmid"))
	vm := s.st.VMs[vmid]
	if vm == nil || vm.Node != node {
		return nil, plainErr("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vmid)
	}
	return vm, nil
}

func (s *Server) sortedVMIDs() []int { return slices.Sorted(maps.Keys(s.st.VMs)) }

func (s *Server) qemuList(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	out := []map[string]any{}
	for _, id := range s.sortedVMIDs() {
		vm := s.st.VMs[id]
		if vm.Node != node || !s.st.has(r.who, fmt.Sprintf("/vms/%d", id), []string{"VM.Audit"}, false) {
			continue
		}
		o := map[string]any{"vmid": id, "name": vm.Config["name"], "status": vm.Status, "template": boolInt(vm.Template),
			"cpus": atoiSafe(vm.Config["cores"]), "maxmem": int64(atoiSafe(vm.Config["memory"])) << 20}
		if vm.Lock != "" {
			o["lock"] = vm.Lock
		}
		if t := vm.Config["tags"]; t != "" {
			o["tags"] = t
		}
		out = append(out, o)
	}
	return out, nil
}

func (s *Server) vmStatusIndex(r *reqCtx) (any, error) {
	if _, err := s.getVM(r); err != nil {
		return nil, err
	}
	return subdirs(append([]string{"current"}, powerActions...)...), nil
}

func (s *Server) vmIndex(r *reqCtx) (any, error) {
	if _, err := s.getVM(r); err != nil {
		return nil, err
	}
	return subdirs("config", "pending", "status", "clone", "resize", "cloudinit", "template"), nil
}

func (s *Server) vmDelete(r *reqCtx, vm *VM) (any, error) {
	if vm.Status == "running" {
		return nil, plainErr("VM %d is running - destroy failed", vm.VMID)
	}
	if vm.Config["protection"] == "1" {
		return nil, plainErr("can't remove VM %d - protection mode enabled", vm.VMID)
	}
	t := s.startTask(r, vm.Node, "qmdestroy", strconv.Itoa(vm.VMID), func() error {
		if vm.Lock != "" && !r.params.Bool("skiplock") {
			return fmt.Errorf("VM is locked (%s)", vm.Lock)
		}
		if vm.Template {
			for _, o := range s.st.VMs {
				for _, v := range o.Config {
					if strings.Contains(v, fmt.Sprintf("base-%d-disk", vm.VMID)) && o.VMID != vm.VMID {
						return fmt.Errorf("base volume is used by linked clone VM %d", o.VMID)
					}
				}
			}
		}
		// VM-specific ACLs go with the VM; pool membership too, being the VM's (purge or not, as
		// PVE 9 removes it at destroy).
		delete(s.st.VMs, vm.VMID)
		s.st.dropACLs(func(a ACL) bool { return a.Path == fmt.Sprintf("/vms/%d", vm.VMID) })
		return nil
	})
	t.Log = append(t.Log, fmt.Sprintf("destroy VM %d", vm.VMID))
	return t.UPID, nil
}

// vmCreate is POST /nodes/{node}/qemu: a new VM from config parameters;
// "STORAGE:SIZE" disks are allocated as vm-<id>-disk-<n>.
func (s *Server) vmCreate(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	if !s.nodeExists(node) {
		return nil, plainErr("no such cluster node '%s'", node)
	}
	vmid := int(r.params.Int("vmid"))
	pool := r.params.Str("pool")
	if err := s.createAllowed(r, vmid, pool); err != nil {
		return nil, err
	}
	if s.st.VMs[vmid] != nil {
		return nil, plainErr("unable to create VM %d: config file already exists", vmid)
	}
	tmp := &VM{VMID: vmid, Node: node, Status: "stopped", Config: map[string]string{}}
	skip := []string{"pool", "start", "unique", "archive", "storage", "force", "live-restore", "bwlimit", "import-working-storage"}
	sub := &reqCtx{method: r.method, template: r.template, path: r.path, vars: r.vars, params: Params{}, who: r.who}
	for k, v := range r.params {
		if !slices.Contains(skip, k) {
			sub.params[k] = v
		}
	}
	set, _, err := s.configChanges(sub, tmp)
	if err != nil {
		return nil, err
	}
	if err := s.createPerms(r.who, vmid, pool, set, r.params.Str("storage")); err != nil {
		return nil, err
	}
	if err := s.storeDrives(tmp, set); err != nil {
		return nil, err
	}
	vols, err := s.allocDisks(r, vmid, set)
	if err != nil {
		return nil, err
	}
	// the worker's vdisk_alloc: a refusal fails the task, the VM is not made (create_vm's $emsg)
	allocErr := s.allocVolumes(node, vols)
	tmp.Config, tmp.Lock = set, "create"
	s.st.VMs[vmid] = tmp
	t := s.startTask(r, node, "qmcreate", strconv.Itoa(vmid), func() error {
		if allocErr != nil {
			delete(s.st.VMs, vmid)
			return fmt.Errorf("unable to create VM %d - %w", vmid, allocErr)
		}
		tmp.Lock, tmp.Pool = "", pool
		return nil
	})
	t.abort = func() { delete(s.st.VMs, vmid) }
	return t.UPID, nil
}
