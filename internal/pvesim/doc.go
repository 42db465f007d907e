// Package pvesim is a Proxmox VE 9 API simulator that checks every request
// against the real (embedded) schema and permission model, in the spirit of
// vSphere's vcsim: a module that passes against it should pass against a node.
//
// Usage in Go tests:
//
//	srv, err := pvesim.Start(pvesim.DefaultConfig()) // HTTPS on 127.0.0.1:0, CA in a temp file
//	defer srv.Close()
//	id, secret := srv.RootToken()                     // "root@pam!sim", random secret
//	client: srv.URL()+"/api2/json", RootCAs from srv.CAFile()
//
// Request processing follows PVE's order: authentication (API tokens,
// "Authorization: PVEAPIToken=user@realm!id=secret", or a user's ticket from POST /access/ticket
// as the PVEAuthCookie cookie, writes with its CSRFPreventionToken header; 401 "No ticket" /
// "Authentication failed!"), route lookup in the embedded schema (501 for
// unknown paths, for schema paths that are not simulated and for a restore), URI/body
// conflicts, allowtoken, the schema's permissions.check with the raw
// parameters (403 "Permission check failed (<path>, <privs>)"), schema
// validation (400 "Parameter verification failed." with errors{param}), then
// the handler (most semantic errors are 500 with PVE's text). Error responses
// carry the first line of the message as the HTTP reason phrase.
//
// The handlers check what PVE 9's code checks beyond the schema, with PVE's
// status and message, so that a refusal test against pvesim means what it says
// (conformance_*_test.go name each source line): a token is never its own user
// ("userid-param self"), update_acl's subset rule, $check_vm_modify_config_perm's
// option groups (root-only options, startup's Sys.Modify, device values),
// check_vnet_access for a NIC's bridge, tag and every VLAN of its trunk,
// check_storage_access and check_volume_access, the root-only parameters of the
// VM calls (vmperms.go, storageperms.go, rootparams.go). Checks update_vm_api makes
// in its worker fail a POST's task and a PUT's call; unlike PVE, which writes the
// options before the failing one, pvesim then writes none. Migration is served
// (vmmigrate.go): migrate_vm's refusals, the task's (local devices, an offline
// target, local volumes that cannot move: "migration aborted"), else the VM
// moves node. Storages (storage.go, storagecap.go): root's POST/PUT/DELETE
// /storage with the section checks of dir, lvmthin and lvm (other types are kept
// unchecked), each node's backing (volume groups, thin pools, file systems; set
// by POST /_sim/disks/{node}), status per node, and the allocation of create,
// clone and resize refused as pve-storage and lvm2 refuse it (a new thin volume in
// a pool out of data space; thick extents the group lacks). A thin pool's used
// data is what POST /_sim/disks sets: pvesim writes no data. Not
// served, so not checked: restore (archive: 501), snapshots, move disk, tags'
// registered-tags (datacenter.cfg), hookscript's own volume check at set, custom CPU
// models (check_cpu_model_access).
//
// How far pvesim matches PVE, measured with PVE's own regression cases
// (conformance_pve_test.go, testdata/conformance), and what it does not model: docs/pvesim.md.
//
// Hookscripts (hookscript.go): at a start, a VM's hookscript volume local:snippets/<name>
// runs from the node's disk, <RenderDir>/<node>/var/lib/vz/snippets/<name>, as
// `<script> <vmid> pre-start` then `post-start`, outside the server lock while the task
// runs; a pre-start failure fails the task with exec_hookscript's message and the VM stays
// stopped. Its PATH holds Config.Pvesh as `pvesh` (cmd/pvesim: itself), which calls the
// simulator as the node's root@pam (NodeRootAuth): PVE's root-only options want root@pam,
// which no API token is.
//
// Routing and validation live in package pveschema: subset.json (a copy of
// ../shared/pve-api/subset.json, kept in step by TestEmbeddedSchemaInStep),
// extra.json (/access/users, /access/users/{userid}, /access/groups, POST /access/ticket, /cluster/status and GET
// /nodes/{node}/status from apidata.json) and formats.json, embedded.
//
// CLI config (pvesim --config FILE; keys left out keep DefaultConfig's values,
// lists are replaced whole; a template on an unknown node lands on the first):
//
//	nodes:
//	  - {name: dv02hyp002p02, maxcpu: 16, maxmem: 68719476736,
//	     network: [{iface: enp1s0, type: eth},     # GET /nodes/{node}/network (nodenetwork.go); default: the
//	               {iface: vmbr0, type: bridge,    # installer's eno1 + vmbr0 (bridge_ports eno1)
//	                bridge_ports: enp1s0, bridge_vlan_aware: true, cidr: 10.20.10.2/24},
//	               {iface: vmbr0.50, type: vlan, cidr: 10.20.50.2/24}]}
//	  - {name: dv02hyp003p02, maxcpu: 16, maxmem: 68719476736, bridges: [vmbr0]}  # bridges: default those of network; a VM starts only on these or a running VNet
//	storages:
//	  - {id: local-lvm, type: lvmthin, content: [images, rootdir], clone: true,
//	     vgname: pve, thinpool: data, size: 1099511627776}  # size: each node's pool (default 1 TiB)
//	disks:      # thin pools every node has beside the storages' (POST /_sim/disks/{node} changes one node's)
//	  - {vg: pve, thinpool: tenant-tdemo, size: 274877906944}
//	templates:
//	  - {vmid: 9000, name: debian-12-genericcloud, template: true,
//	     config: {cores: "2", memory: "2048", scsi0: "local-lvm:base-9000-disk-0,size=3G"}}  # no NIC (ADR-0013)
//	task_duration: 200ms
//	latency: 5ms
//	render_dir: /tmp/lab/nodes       # as --render-dir
//	reload_command: /path/to/reload   # as --reload-command
//	reload_timeout: 2m                # as --reload-timeout
//
// Admin endpoints (no authentication; loopback only):
//
//	GET  /_sim/stats         {"data":{"requests":{"GET /cluster/sdn/zones":3,...},"writes":N,"writes_accepted":M}}
//	GET  /_sim/writes?since=N  {"data":{"seq":LAST,"writes":[{"seq","time","method","route","path","vars","params","ids","username"}...]}}
//	POST /_sim/stats/reset
//	POST /_sim/reset         back to the configured cluster (also clears stats and faults)
//	POST /_sim/privileges/drop {"privileges":["VM.Migrate"]}  every role without them, as a PVE release lacking them (privknob.go)
//	POST /_sim/faults        {"faults":[{"method":"POST","path":"/nodes/{node}/qemu/{vmid}/clone","nth":1,"status":500,"message":"..."}],
//	                          "task_faults":[{"type":"qmclone","nth":1,"exitstatus":"clone failed: ..."}],
//	                          "hold_sdn_lock_seconds":600, "latency_ms":20, "task_duration_ms":500,
//	                          "reload_faults":[{"node":"dv02hyp002p02","nth":1,"message":"ifreload failed"}]}
//	GET  /_sim/nodes/{node}/files/{path}  a node's running file as last applied (text; 404 if none):
//	                          etc/network/interfaces.d/sdn, etc/frr/frr.conf, etc/frr/daemons.pve
//	POST /_sim/nodes/{node}/offline  {"reason": "...", "since_seconds": N}: the node leaves the membership
//	POST /_sim/nodes/{node}/online   {"boot": bool}: back (boot, the default, runs pve-sdn-commit)
//	POST /_sim/disks/{node}  a node's disks (storagecap.go DiskRequest): {"vg","vg_size"}; a thin pool
//	                          {"vg","thinpool","size","used","remove"} (made when missing, the group grown);
//	                          {"vg","thinpool","size","create":true}, lvcreate's: out of the group's free
//	                          space, refused as lvm2 refuses; a file system {"path","size","used"}
//	GET  /_sim/quorum        corosync's votes and quorum (quorum.go)
//	POST /_sim/qdevice/down, /_sim/qdevice/up  the QDevice's host goes away, comes back
//
// cmd/pvesim lists them in --help. Called as pvesh the binary is a node's pvesh (package pvesh);
// called as lvcreate, the node $PVESIM_NODE's `lvcreate --type thin-pool -L <size> -n <pool> <vg>`
// (pvesh.LVCreate), which the lab puts on the nodes' PATH for the hypervisor play's thin pools.
//
// SDN apply: PUT /cluster/sdn renders every node's files with package
// sdnrender (byte for byte what PVE 9 writes) when the reloadnetworkall task
// runs, keeps them as the node's running files, writes them under
// Config.RenderDir (--render-dir) and reloads the node: by running
// Config.ReloadCommand (--reload-command PATH <node> <dir>/<node>), or, without
// one, simulated as successful unless a reload fault is injected.
// GET /nodes/{node}/sdn/zones reports pending while the node's files are older
// than the running config, error after a failed reload, else available.
//
// "writes" counts every authenticated POST/PUT/DELETE that reached a known
// route, whatever its outcome (an idempotent run must show zero);
// "writes_accepted" only those that returned 200.
//
// Simplifications, on purpose: no ticket (password) login; IPAM/DNS objects
// can be read but not created (a real DNS create contacts the PowerDNS URL);
// no IPAM allocation side effects (EVPN zones have none anyway); the vnet
// firewall and vnet IP endpoints answer 501; node-level fabric routes and
// neighbors are empty (no routing daemon); the guest agent reports the static
// ipconfig<N> addresses; disks are names and sizes only; the SDN dry-run
// renders every input from the pending config (PVE reads running subnets and
// fabrics in places); SDN objects other than EVPN zones/controllers and
// openfabric/OSPF fabrics render nothing; the 3 s delay before a 401 is
// Config.AuthFailDelay (0 by default).
package pvesim
