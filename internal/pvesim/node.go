package pvesim

// The cluster and node endpoints: version, nodes, status, nextid, cluster resources.

import (
	"fmt"
	"strings"
)

// clusterRoutes: the cluster and its nodes.
func (s *Server) clusterRoutes() routes {
	rs := collection("/nodes", "node", crud{list: s.nodes, get: s.node})
	rs.add(routes{"GET /nodes/{node}/status": s.nodeStatus, "GET /version": s.version, "GET /cluster/status": s.clusterStatus,
		"GET /cluster/nextid": s.nextID, "GET /cluster/resources": s.resources})
	return rs
}

func (s *Server) nodeExists(n string) bool {
	for _, x := range s.st.Nodes {
		if x.Name == n {
			return true
		}
	}
	return false
}

func (s *Server) version(r *reqCtx) (any, error) {
	return map[string]any{"version": s.cfg.Version, "release": s.cfg.Release, "repoid": "0123abcd"}, nil
}

func (s *Server) nodes(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for _, n := range s.st.Nodes {
		e := s.nodeEntry(n)
		e["ssl_fingerprint"] = ""
		out = append(out, e)
	}
	return out, nil
}

func (s *Server) node(r *reqCtx) (any, error) {
	if !s.nodeExists(r.params.Str("node")) {
		return nil, plainErr("no such cluster node '%s'", r.params.Str("node"))
	}
	var out []map[string]string
	for _, c := range []string{"qemu", "sdn", "tasks", "status", "network", "storage"} {
		out = append(out, map[string]string{"name": c})
	}
	return out, nil
}

func (s *Server) clusterStatus(r *reqCtx) (any, error) {
	// quorate as votequorum computes it (quorum.go); nodes counts the offline ones too
	q := s.quorumLocked()
	out := []map[string]any{{"type": "cluster", "id": "cluster", "name": s.cfg.ClusterName, "nodes": len(s.st.Nodes), "quorate": boolInt(q.Quorate), "version": 1}}
	for i, n := range s.st.Nodes {
		out = append(out, map[string]any{"type": "node", "id": "node/" + n.Name, "name": n.Name, "nodeid": i + 1,
			"online": boolInt(s.st.offline(n.Name) == nil), "local": boolInt(i == 0), "ip": nodeIP(i), "level": ""})
	}
	return out, nil
}

// nodeCPUs is a node's CPU count (0 when it is not configured). Called with the lock held.
func (s *Server) nodeCPUs(name string) int {
	for _, n := range s.st.Nodes {
		if n.Name == name {
			return n.MaxCPU
		}
	}
	return 0
}

func (s *Server) nodeStatus(r *reqCtx) (any, error) {
	name := r.params.Str("node")
	for _, n := range s.st.Nodes {
		if n.Name == name {
			return map[string]any{"uptime": 86400, "pveversion": "pve-manager/" + s.cfg.Version, "kversion": "Linux 6.14.8-2-pve",
				"cpu": 0.02, "loadavg": []string{"0.10", "0.05", "0.01"},
				"cpuinfo": map[string]any{"cpus": n.MaxCPU, "cores": n.MaxCPU, "sockets": 1, "model": "pvesim"},
				"memory":  map[string]any{"total": n.MaxMem, "used": n.MaxMem / 8, "free": n.MaxMem - n.MaxMem/8}}, nil
		}
	}
	return nil, plainErr("no such cluster node '%s'", name)
}

func (s *Server) nextID(r *reqCtx) (any, error) {
	if r.params.Has("vmid") {
		id := int(r.params.Int("vmid"))
		if s.st.VMs[id] != nil {
			return nil, paramErr(map[string]string{"vmid": fmt.Sprintf("VM %d already exists", id)})
		}
		return id, nil
	}
	for id := 100; id < 1000000; id++ {
		if s.st.VMs[id] == nil {
			return id, nil
		}
	}
	return nil, plainErr("unable to get any free VMID in range [100, 1000000]")
}

func (s *Server) resources(r *reqCtx) (any, error) {
	typ := r.params.Str("type")
	out := []map[string]any{}
	if typ == "" || typ == "vm" {
		for _, id := range s.sortedVMIDs() {
			vm := s.st.VMs[id]
			if !s.st.has(r.who, fmt.Sprintf("/vms/%d", id), []string{"VM.Audit"}, false) {
				continue
			}
			o := map[string]any{"id": fmt.Sprintf("qemu/%d", id), "type": "qemu", "vmid": id, "node": vm.Node, "status": "unknown"}
			if off := s.st.offline(vm.Node); off == nil || off.rrdFresh() {
				// the guest's RRD entry: gone five minutes after its node left (extract_vm_stats)
				o["name"], o["status"], o["template"] = vm.Config["name"], vm.Status, boolInt(vm.Template)
				o["maxcpu"], o["maxmem"], o["maxdisk"] = vmMaxCPU(vm.Config, s.nodeCPUs(vm.Node)), vmMaxMem(vm.Config), vmMaxDisk(vm.Config)
			}
			if vm.Pool != "" {
				o["pool"] = vm.Pool
			}
			if vm.Lock != "" {
				o["lock"] = vm.Lock
			}
			if t := vm.Config["tags"]; t != "" {
				o["tags"] = t
			}
			out = append(out, o)
		}
	}
	if typ == "" || typ == "node" {
		for _, n := range s.st.Nodes {
			if s.st.has(r.who, "/nodes/"+n.Name, []string{"Sys.Audit"}, false) {
				out = append(out, s.nodeEntry(n))
			}
		}
	}
	if typ == "" || typ == "storage" {
		for _, n := range s.st.Nodes {
			for _, sid := range sortedKeys(s.st.Storages) {
				if s.st.has(r.who, "/storage/"+sid, []string{"Datastore.Audit", "Datastore.AllocateSpace"}, true) {
					st := s.st.Storages[sid]
					if !st.onNode(n.Name) {
						continue
					}
					// the node's status broadcast: disk/maxdisk are the storage's used/total
					total, used, _, active := s.storageStatus(st, n.Name)
					status := "available"
					if !active || st.Disable {
						status, total, used = "unknown", 0, 0
					}
					out = append(out, map[string]any{"id": "storage/" + n.Name + "/" + sid, "type": "storage", "storage": sid,
						"node": n.Name, "status": status, "plugintype": st.Type, "content": strings.Join(st.Content, ","), "shared": boolInt(st.Shared),
						"disk": used, "maxdisk": total})
				}
			}
		}
	}
	if typ == "" || typ == "sdn" {
		for _, n := range s.st.Nodes {
			zones := sortedKeys(s.st.SDN.Current["zones"])
			if o := s.st.offline(n.Name); o != nil {
				zones = o.Zones // what it last broadcast: pmxcfs keeps a member's kv data
			}
			for _, z := range zones {
				if s.st.has(r.who, "/sdn/zones/"+z, []string{"SDN.Audit"}, false) {
					out = append(out, map[string]any{"id": "sdn/" + n.Name + "/" + z, "type": "sdn", "sdn": z, "node": n.Name, "status": "ok"})
				}
			}
		}
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
