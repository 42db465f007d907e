package pvesim

// on adapts a handler of one object (a VM, a user): lookup finds the request's object, with PVE's
// error when there is none, before h runs.
func on[T any](lookup func(r *reqCtx) (T, error), h func(r *reqCtx, obj T) (any, error)) handlerFunc {
	return func(r *reqCtx) (any, error) {
		obj, err := lookup(r)
		if err != nil {
			return nil, err
		}
		return h(r, obj)
	}
}

// routes maps "METHOD /template" to its handler. Schema paths without a
// handler answer 501, like a method PVE does not implement.
func (s *Server) routes() map[string]handlerFunc {
	all := map[string]handlerFunc{}
	for _, part := range []map[string]handlerFunc{s.clusterRoutes(), s.sdnRoutes(), s.vmRoutes(), s.accessRoutes()} {
		for k, h := range part {
			all[k] = h
		}
	}
	return all
}

// clusterRoutes: the cluster, its nodes and their tasks.
func (s *Server) clusterRoutes() map[string]handlerFunc {
	return map[string]handlerFunc{
		"GET /version":                          s.version,
		"GET /nodes":                            s.nodes,
		"GET /nodes/{node}":                     s.node,
		"GET /cluster/status":                   s.clusterStatus,
		"GET /nodes/{node}/status":              s.nodeStatus,
		"GET /cluster/nextid":                   s.nextID,
		"GET /cluster/resources":                s.resources,
		"GET /cluster/tasks":                    s.taskList,
		"GET /nodes/{node}/tasks":               s.taskList,
		"GET /nodes/{node}/tasks/{upid}":        s.taskIndex,
		"DELETE /nodes/{node}/tasks/{upid}":     s.taskStop,
		"GET /nodes/{node}/tasks/{upid}/status": s.taskStatus,
		"GET /nodes/{node}/tasks/{upid}/log":    s.taskLog,
	}
}

// sdnRoutes: SDN: the staged config, lock and apply, fabrics, and what the nodes report.
func (s *Server) sdnRoutes() map[string]handlerFunc {
	return map[string]handlerFunc{
		"GET /cluster/sdn":                                       s.sdnIndex,
		"PUT /cluster/sdn":                                       s.sdnApply,
		"POST /cluster/sdn/lock":                                 s.sdnLockAcquire,
		"DELETE /cluster/sdn/lock":                               s.sdnLockRelease,
		"POST /cluster/sdn/rollback":                             s.sdnRollback,
		"GET /cluster/sdn/dry-run":                               s.sdnDryRun,
		"GET /cluster/sdn/zones":                                 s.zoneList,
		"POST /cluster/sdn/zones":                                s.zoneCreate,
		"GET /cluster/sdn/zones/{zone}":                          s.zoneGet,
		"PUT /cluster/sdn/zones/{zone}":                          s.zoneUpdate,
		"DELETE /cluster/sdn/zones/{zone}":                       s.zoneDelete,
		"GET /cluster/sdn/vnets":                                 s.vnetList,
		"POST /cluster/sdn/vnets":                                s.vnetCreate,
		"GET /cluster/sdn/vnets/{vnet}":                          s.vnetGet,
		"PUT /cluster/sdn/vnets/{vnet}":                          s.vnetUpdate,
		"DELETE /cluster/sdn/vnets/{vnet}":                       s.vnetDelete,
		"GET /cluster/sdn/vnets/{vnet}/subnets":                  s.subnetList,
		"POST /cluster/sdn/vnets/{vnet}/subnets":                 s.subnetCreate,
		"GET /cluster/sdn/vnets/{vnet}/subnets/{subnet}":         s.subnetGet,
		"PUT /cluster/sdn/vnets/{vnet}/subnets/{subnet}":         s.subnetUpdate,
		"DELETE /cluster/sdn/vnets/{vnet}/subnets/{subnet}":      s.subnetDelete,
		"GET /cluster/sdn/controllers":                           s.controllerList,
		"POST /cluster/sdn/controllers":                          s.controllerCreate,
		"GET /cluster/sdn/controllers/{controller}":              s.controllerGet,
		"PUT /cluster/sdn/controllers/{controller}":              s.controllerUpdate,
		"DELETE /cluster/sdn/controllers/{controller}":           s.controllerDelete,
		"GET /cluster/sdn/ipams":                                 s.pluginList("ipams"),
		"GET /cluster/sdn/dns":                                   s.pluginList("dns"),
		"GET /cluster/sdn/fabrics":                               s.fabricIndex,
		"GET /cluster/sdn/fabrics/all":                           s.fabricAll,
		"GET /cluster/sdn/fabrics/fabric":                        s.fabricList,
		"POST /cluster/sdn/fabrics/fabric":                       s.fabricCreate,
		"GET /cluster/sdn/fabrics/fabric/{id}":                   s.fabricGet,
		"PUT /cluster/sdn/fabrics/fabric/{id}":                   s.fabricUpdate,
		"DELETE /cluster/sdn/fabrics/fabric/{id}":                s.fabricDelete,
		"GET /cluster/sdn/fabrics/node":                          s.fabricNodeListAll,
		"GET /cluster/sdn/fabrics/node/{fabric_id}":              s.fabricNodeList,
		"POST /cluster/sdn/fabrics/node/{fabric_id}":             s.fabricNodeCreate,
		"GET /cluster/sdn/fabrics/node/{fabric_id}/{node_id}":    s.fabricNodeGet,
		"PUT /cluster/sdn/fabrics/node/{fabric_id}/{node_id}":    s.fabricNodeUpdate,
		"DELETE /cluster/sdn/fabrics/node/{fabric_id}/{node_id}": s.fabricNodeDelete,
		"GET /nodes/{node}/sdn/zones":                            s.nodeSDNZones,
		"GET /nodes/{node}/sdn/zones/{zone}":                     s.nodeSDNZone,
		"GET /nodes/{node}/sdn":                                  s.nodeSDNIndex,
		"GET /nodes/{node}/sdn/zones/{zone}/content":             s.nodeSDNZoneContent,
		"GET /nodes/{node}/sdn/zones/{zone}/bridges":             s.nodeSDNEmpty,
		"GET /nodes/{node}/sdn/zones/{zone}/ip-vrf":              s.nodeSDNEmpty,
		"GET /nodes/{node}/sdn/vnets/{vnet}":                     s.nodeSDNVnet,
		"GET /cluster/sdn/ipams/{ipam}":                          s.pluginGet("ipams", "ipam"),
		"GET /cluster/sdn/dns/{dns}":                             s.pluginGet("dns", "dns"),
		"GET /nodes/{node}/sdn/fabrics/{fabric}":                 s.nodeFabricIndex,
		"GET /nodes/{node}/sdn/fabrics/{fabric}/routes":          s.nodeFabricStatus,
		"GET /nodes/{node}/sdn/fabrics/{fabric}/neighbors":       s.nodeFabricStatus,
		"GET /nodes/{node}/sdn/fabrics/{fabric}/interfaces":      s.nodeFabricStatus,
	}
}

// vmRoutes: QEMU VMs.
func (s *Server) vmRoutes() map[string]handlerFunc {
	return map[string]handlerFunc{
		"GET /nodes/{node}/qemu/{vmid}/cloudinit":                    on(s.getVM, s.vmCloudinit),
		"GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces": on(s.getVM, s.vmAgentInterfaces),
		"PUT /nodes/{node}/qemu/{vmid}/cloudinit":                    on(s.getVM, s.vmCloudinitRegen),
		"GET /nodes/{node}/qemu/{vmid}/cloudinit/dump":               on(s.getVM, s.vmCloudinitDump),
		"POST /nodes/{node}/qemu":                                    s.vmCreate,
		"GET /nodes/{node}/qemu":                                     s.qemuList,
		"GET /nodes/{node}/qemu/{vmid}":                              s.vmIndex,
		"DELETE /nodes/{node}/qemu/{vmid}":                           on(s.getVM, s.vmDelete),
		"POST /nodes/{node}/qemu/{vmid}/clone":                       on(s.getVM, s.vmClone),
		"GET /nodes/{node}/qemu/{vmid}/config":                       on(s.getVM, s.vmConfigGet),
		"POST /nodes/{node}/qemu/{vmid}/config":                      on(s.getVM, s.vmConfigPost),
		"PUT /nodes/{node}/qemu/{vmid}/config":                       on(s.getVM, s.vmConfigPut),
		"GET /nodes/{node}/qemu/{vmid}/pending":                      on(s.getVM, s.vmPending),
		"PUT /nodes/{node}/qemu/{vmid}/resize":                       on(s.getVM, s.vmResize),
		"GET /nodes/{node}/qemu/{vmid}/status":                       s.vmStatusIndex,
		"GET /nodes/{node}/qemu/{vmid}/status/current":               on(s.getVM, s.vmStatusCurrent),
		"POST /nodes/{node}/qemu/{vmid}/status/start":                s.vmPower("start"),
		"POST /nodes/{node}/qemu/{vmid}/status/stop":                 s.vmPower("stop"),
		"POST /nodes/{node}/qemu/{vmid}/status/shutdown":             s.vmPower("shutdown"),
		"POST /nodes/{node}/qemu/{vmid}/status/reboot":               s.vmPower("reboot"),
		"POST /nodes/{node}/qemu/{vmid}/status/reset":                s.vmPower("reset"),
		"POST /nodes/{node}/qemu/{vmid}/template":                    on(s.getVM, s.vmTemplate),
	}
}

// accessRoutes: pools, users, tokens, roles and ACLs.
func (s *Server) accessRoutes() map[string]handlerFunc {
	return map[string]handlerFunc{
		"GET /access/users":                             s.userList,
		"GET /pools":                                    s.poolList,
		"POST /pools":                                   s.poolCreate,
		"PUT /pools":                                    s.poolUpdate,
		"DELETE /pools":                                 s.poolDelete,
		"GET /pools/{poolid}":                           s.poolGet,
		"PUT /pools/{poolid}":                           s.poolUpdate,
		"DELETE /pools/{poolid}":                        s.poolDelete,
		"GET /access/acl":                               s.aclList,
		"PUT /access/acl":                               s.aclUpdate,
		"GET /access/permissions":                       s.permissionsGet,
		"GET /access/roles":                             s.roleList,
		"POST /access/roles":                            s.roleCreate,
		"GET /access/roles/{roleid}":                    s.roleGet,
		"PUT /access/roles/{roleid}":                    s.roleUpdate,
		"DELETE /access/roles/{roleid}":                 s.roleDelete,
		"POST /access/users":                            s.userCreate,
		"GET /access/users/{userid}":                    s.userGet,
		"PUT /access/users/{userid}":                    s.userUpdate,
		"DELETE /access/users/{userid}":                 s.userDelete,
		"GET /access/users/{userid}/token":              on(s.userOf, s.tokenList),
		"GET /access/users/{userid}/token/{tokenid}":    on(s.userOf, s.tokenGet),
		"POST /access/users/{userid}/token/{tokenid}":   on(s.userOf, s.tokenCreate),
		"PUT /access/users/{userid}/token/{tokenid}":    on(s.userOf, s.tokenUpdate),
		"DELETE /access/users/{userid}/token/{tokenid}": on(s.userOf, s.tokenDelete),
	}
}
