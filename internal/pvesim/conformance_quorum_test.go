package pvesim

import (
	"encoding/json"
	"strings"
	"testing"
)

// Quorum as corosync's votequorum and PVE's pmxcfs have it (quorum.go). Sources, at these commits:
//   - corosync/corosync (HEAD of the mirror): exec/votequorum.c calculate_quorum, are_we_quorate,
//     votequorum_readconfig; man/votequorum.5
//   - corosync/corosync-qdevice: man/corosync-qdevice.8 (ffsplit, lms), qdevices/qdevice-net-ipc-cmd.c
//   - proxmox/pve-cluster 7091d92e594952dba65c1e57568b3d7cc244e960: src/PVE/Cluster.pm check_cfs_quorum,
//     cfs_lock; src/pmxcfs/dcdb.c dcdb_send_fuse_message; src/PVE/API2/ClusterConfig.pm; src/PVE/CLI/pvecm.pm
//   - proxmox/qemu-server, pve-access-control, pve-network, pve-storage, pve-manager: the callers
//     named in each case

const qnode = "dv02hyp002p02" // DefaultConfig's node, which serves the API

// quorumSim is DefaultConfig's node plus the given ones, with mut applied to the quorum config.
func quorumSim(t *testing.T, extra []string, q QuorumConfig) (*Server, *client) {
	t.Helper()
	s := startSim(t, func(c *Config) {
		for _, n := range extra {
			c.Nodes = append(c.Nodes, NodeConfig{Name: n, MaxCPU: 8, MaxMem: 1 << 34})
		}
		c.Quorum = q
	})
	return s, rootClient(t, s)
}

// clusterEntry is /cluster/status's entry of type cluster.
func clusterEntry(t *testing.T, c *client) map[string]any {
	t.Helper()
	var l []map[string]any
	c.ok("GET", "/cluster/status", nil, &l)
	for _, e := range l {
		if e["type"] == "cluster" {
			return e
		}
	}
	t.Fatalf("/cluster/status has no cluster entry: %v", l)
	return nil
}

// TestConformanceQuorumVotes: quorate = total votes >= floor(expected/2)+1, expected = the nodes'
// votes plus the QDevice's (votequorum.c calculate_quorum; votequorum_readconfig for lms's default
// votes; corosync-qdevice.8 for ffsplit's one vote; the vote only while qnetd is reachable).
func TestConformanceQuorumVotes(t *testing.T) {
	type step struct {
		offline  []string
		qdevDown bool
		total    int
		expected int
		quorum   int
		quorate  bool
	}
	for _, tc := range []struct {
		name   string
		source string
		extra  []string
		q      QuorumConfig
		steps  []step
	}{
		{name: "one member (Phase 1) is quorate alone", source: "votequorum.c calculate_quorum", q: QuorumConfig{},
			steps: []step{{total: 1, expected: 1, quorum: 1, quorate: true}}},
		{name: "two nodes, no QDevice: one away loses quorum", source: "votequorum.c calculate_quorum", extra: []string{"p03"},
			steps: []step{{total: 2, expected: 2, quorum: 2, quorate: true}, {offline: []string{"p03"}, total: 1, expected: 2, quorum: 2}}},
		{name: "two nodes and a QDevice (ffsplit, 1 vote): one node away keeps quorum, with qnetd down too it goes",
			source: "corosync-qdevice.8 ffsplit; pvecm.pm setup_qdevice", extra: []string{"p03"}, q: QuorumConfig{QDevice: &QDeviceConfig{Host: "qdev"}},
			steps: []step{{total: 3, expected: 3, quorum: 2, quorate: true},
				{offline: []string{"p03"}, total: 2, expected: 3, quorum: 2, quorate: true},
				{qdevDown: true, total: 2, expected: 3, quorum: 2, quorate: true},
				{offline: []string{"p03"}, qdevDown: true, total: 1, expected: 3, quorum: 2}}},
		{name: "three nodes and a QDevice (lms, nodes-1 votes): the last node standing keeps quorum",
			source: "votequorum.c votequorum_readconfig (qdevice_votes = node_expected_votes - 1); corosync-qdevice.8 lms",
			extra:  []string{"p03", "p04"}, q: QuorumConfig{QDevice: &QDeviceConfig{Host: "qdev"}},
			steps: []step{{total: 5, expected: 5, quorum: 3, quorate: true},
				{offline: []string{"p03", "p04"}, total: 3, expected: 5, quorum: 3, quorate: true},
				{offline: []string{"p03", "p04"}, qdevDown: true, total: 1, expected: 5, quorum: 3}}},
		{name: "two_node: quorum set to 1", source: "votequorum.c calculate_quorum (two_node && total_nodes <= 2)",
			extra: []string{"p03"}, q: QuorumConfig{TwoNode: true},
			steps: []step{{offline: []string{"p03"}, total: 1, expected: 2, quorum: 1, quorate: true}}},
		{name: "two_node with three members present: the majority rule again", source: "votequorum.5 (two_node disabled when more than 2 nodes join); votequorum.c calculate_quorum",
			extra: []string{"p03", "p04"}, q: QuorumConfig{TwoNode: true},
			steps: []step{{total: 3, expected: 3, quorum: 2, quorate: true}, {offline: []string{"p03", "p04"}, total: 1, expected: 3, quorum: 1, quorate: true}}},
		{name: "quorum_votes and expected_votes as configured", source: "votequorum.5; votequorum.c calculate_quorum",
			extra: []string{"p03", "p04"}, q: QuorumConfig{Votes: map[string]int{qnode: 2}, ExpectedVotes: 6},
			steps: []step{{total: 4, expected: 6, quorum: 4, quorate: true}, {offline: []string{"p04"}, total: 3, expected: 6, quorum: 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := quorumSim(t, tc.extra, tc.q)
			for i, st := range tc.steps {
				for _, n := range tc.extra {
					if _, err := s.SetNodeOnline(n, false); err != nil {
						t.Fatal(err)
					}
				}
				for _, n := range st.offline {
					if err := s.SetNodeOffline(n, "", 0); err != nil {
						t.Fatal(err)
					}
				}
				if tc.q.QDevice != nil {
					if err := s.SetQDevice(!st.qdevDown); err != nil {
						t.Fatal(err)
					}
				}
				v := s.Quorum()
				if v.TotalVotes != st.total || v.ExpectedVotes != st.expected || v.Quorum != st.quorum || v.Quorate != st.quorate {
					t.Errorf("step %d (%s), offline %v, qnetd down %v: total %d expected %d quorum %d quorate %v, want %d %d %d %v",
						i, tc.source, st.offline, st.qdevDown, v.TotalVotes, v.ExpectedVotes, v.Quorum, v.Quorate, st.total, st.expected, st.quorum, st.quorate)
				}
				// /cluster/status says the same (pve-manager PVE/API2/Cluster.pm get_status from pmxcfs's clinfo)
				e := clusterEntry(t, c)
				if e["quorate"] != float64(boolInt(st.quorate)) || e["nodes"] != float64(1+len(tc.extra)) {
					t.Errorf("step %d: /cluster/status cluster entry %v, want quorate %d nodes %d", i, e, boolInt(st.quorate), 1+len(tc.extra))
				}
			}
		})
	}
}

// TestConformanceQuorumConfig: what corosync refuses to start with, refused before pvesim starts.
func TestConformanceQuorumConfig(t *testing.T) {
	two := []NodeConfig{{Name: "a"}, {Name: "b"}}
	for _, tc := range []struct {
		name, source string
		q            QuorumConfig
		want         string
	}{
		{"two_node with a QDevice", "votequorum.c votequorum_readconfig", QuorumConfig{TwoNode: true, QDevice: &QDeviceConfig{Host: "q"}},
			"two_node and quorum device cannot be configured at the same time!"},
		{"ffsplit with 2 device votes", "corosync-qdevice.8 ffsplit", QuorumConfig{QDevice: &QDeviceConfig{Host: "q", Votes: 2}}, "quorum.qdevice.votes: 2, ffsplit needs 1"},
		{"ffsplit with a node of 2 votes", "corosync-qdevice.8 ffsplit", QuorumConfig{Votes: map[string]int{"a": 2}, QDevice: &QDeviceConfig{Host: "q"}}, "quorum.votes.a: ffsplit needs 1 vote per node"},
		{"expected_votes without device votes", "votequorum.c votequorum_readconfig", QuorumConfig{ExpectedVotes: 3, QDevice: &QDeviceConfig{Host: "q", Algorithm: "lms"}},
			"quorum.device.votes must be specified when quorum.expected_votes is set"},
		{"a QDevice without its host", "corosync-qdevice.8 (quorum.device.net.host is required)", QuorumConfig{QDevice: &QDeviceConfig{}}, "quorum.qdevice.host: required"},
		{"votes of a node not in the cluster", "votequorum.5 (nodelist)", QuorumConfig{Votes: map[string]int{"c": 1}}, "quorum.votes: c is not a node"},
		{"an unknown algorithm", "corosync-qdevice.8 (ffsplit, lms)", QuorumConfig{QDevice: &QDeviceConfig{Host: "q", Algorithm: "2nodelms"}}, `quorum.qdevice.algorithm: "2nodelms", one of ffsplit, lms`},
	} {
		cfg := DefaultConfig()
		cfg.Nodes, cfg.Templates, cfg.Quorum = two, nil, tc.q
		s, err := Start(cfg)
		if err == nil {
			_ = s.Close()
			t.Errorf("%s (%s): started", tc.name, tc.source)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (%s): %v, want %q", tc.name, tc.source, err, tc.want)
		}
	}
}

// TestConformanceNoQuorumWrites: without quorum every write of cluster configuration fails with
// PVE's 500 and message, reads go on, running guests keep running and can be stopped; with
// quorum back the same writes succeed.
func TestConformanceNoQuorumWrites(t *testing.T) {
	s, c := quorumSim(t, []string{"p03"}, QuorumConfig{QDevice: &QDeviceConfig{Host: "qdev"}})
	// a tenant's objects, made while quorate: a zone, a VNet, a pool, a user with a token, a running clone
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "zq", "type", "simple"), nil)
	c.ok("POST", "/cluster/sdn/vnets", vals("vnet", "vq", "zone", "zq"), nil)
	c.ok("POST", "/pools", vals("poolid", "pq"), nil)
	c.ok("POST", "/access/users", vals("userid", "uq@pve"), nil)
	if _, exit := c.task("POST", "/nodes/"+qnode+"/qemu/9000/clone", vals("newid", "101", "name", "vq1")); exit != "OK" {
		t.Fatalf("clone: %s", exit)
	}
	if _, exit := c.task("POST", "/nodes/"+qnode+"/qemu/101/status/start", nil); exit != "OK" {
		t.Fatalf("start: %s", exit)
	}
	if _, exit := c.task("POST", "/nodes/"+qnode+"/qemu/9000/clone", vals("newid", "102", "name", "vq2")); exit != "OK" {
		t.Fatalf("clone: %s", exit)
	}
	// p03 and the QDevice's host away: 1 vote of 3, quorum 2
	if err := s.SetNodeOffline("p03", "", 0); err != nil {
		t.Fatal(err)
	}
	if code, _ := simAdmin(t, s, "/_sim/qdevice/down", ""); code != 200 {
		t.Fatalf("/_sim/qdevice/down: %d", code)
	}
	if q := s.Quorum(); q.Quorate {
		t.Fatalf("quorate with 1 vote of 3: %+v", q)
	}
	vm := "/nodes/" + qnode + "/qemu/"
	guestWrite := "unable to open file '/etc/pve/nodes/" + qnode + "/qemu-server/101.conf.tmp."
	const noQ = "cluster not ready - no quorum?\n"
	cases := []refusal{
		{name: "create a VM", source: "qemu-server Qemu.pm create_vm: check_cfs_quorum", method: "POST", path: "/nodes/" + qnode + "/qemu",
			params: []string{"vmid", "120"}, status: 500, msg: noQ},
		{name: "clone", source: "Qemu.pm clone_vm: check_cfs_quorum", method: "POST", path: vm + "9000/clone", params: []string{"newid", "121"}, status: 500, msg: noQ},
		{name: "start a guest", source: "Qemu.pm vm_start: check_cfs_quorum", method: "POST", path: vm + "102/status/start", status: 500, msg: noQ},
		{name: "create a zone", source: "pve-network API2/Network/SDN/Zones.pm create: check_cfs_quorum", method: "POST", path: "/cluster/sdn/zones",
			params: []string{"zone", "zr", "type", "simple"}, status: 500, msg: noQ},
		{name: "create a VNet", source: "SDN/Vnets.pm create: check_cfs_quorum", method: "POST", path: "/cluster/sdn/vnets",
			params: []string{"vnet", "vr", "zone", "zq"}, status: 500, msg: noQ},
		{name: "update a VNet", source: "SDN/Vnets.pm update: lock_sdn_config -> cfs_lock_domain('sdn')", method: "PUT", path: "/cluster/sdn/vnets/vq",
			params: []string{"alias", "x"}, status: 500, msg: "update sdn vnet object failed: cfs-lock 'domain-sdn' error: no quorum!\n"},
		{name: "apply SDN", source: "pve-network API2/Network/SDN.pm reload: lock_sdn_config", method: "PUT", path: "/cluster/sdn",
			status: 500, msg: "could not commit SDN config: cfs-lock 'domain-sdn' error: no quorum!\n"},
		{name: "create a pool", source: "pve-manager API2/Pool.pm create_pool: lock_user_config", method: "POST", path: "/pools",
			params: []string{"poolid", "pr"}, status: 500, msg: "create pool failed: cfs-lock 'file-user_cfg' error: no quorum!\n"},
		{name: "add a guest to a pool", source: "API2/Pool.pm update_pool: lock_user_config", method: "PUT", path: "/pools",
			params: []string{"poolid", "pq", "vms", "101"}, status: 500, msg: "update pools failed: cfs-lock 'file-user_cfg' error: no quorum!\n"},
		{name: "an ACL", source: "pve-access-control API2/ACL.pm update_acl: lock_user_config", method: "PUT", path: "/access/acl",
			params: []string{"path", "/pool/pq", "roles", "PVEVMUser", "users", "uq@pve"}, status: 500, msg: "ACL update failed: cfs-lock 'file-user_cfg' error: no quorum!\n"},
		{name: "create a user", source: "API2/User.pm create_user: lock_user_config", method: "POST", path: "/access/users",
			params: []string{"userid", "ur@pve"}, status: 500, msg: "create user failed: cfs-lock 'file-user_cfg' error: no quorum!\n"},
		{name: "a token", source: "API2/User.pm generate_token: lock_user_config", method: "POST", path: "/access/users/uq@pve/token/t1",
			status: 500, msg: "generating token failed: cfs-lock 'file-user_cfg' error: no quorum!\n"},
		{name: "delete a user", source: "API2/User.pm delete_user: lock_user_config", method: "DELETE", path: "/access/users/uq@pve",
			status: 500, msg: "delete user failed: cfs-lock 'file-user_cfg' error: no quorum!\n"},
		// PUT config: update_vm writes its pending changes before any worker (pve-common PVE/File.pm file_set_contents)
		{name: "a guest's config", source: "Qemu.pm update_vm -> PVE::File::file_set_contents (EACCES)", method: "PUT", path: vm + "101/config",
			params: []string{"memory", "4096"}, status: 500},
		// the proxy to an offline node comes first (pveproxy), quorum second
		{name: "a write to the offline node", source: "pve-http-server AnyEvent.pm proxy_request", method: "POST", path: "/nodes/p03/qemu",
			params: []string{"vmid", "122"}, status: 595},
	}
	expect(t, c, cases)
	if r := c.do("PUT", vm+"101/config", vals("memory", "4096")); !strings.HasPrefix(r.Message, guestWrite) || !strings.HasSuffix(r.Message, " - Permission denied\n") {
		t.Errorf("PUT config without quorum: %q, want %q<pid> - Permission denied", r.Message, guestWrite)
	}
	// a worker's write: the call returns its UPID, the task fails, the guest stays (Qemu.pm destroy_vm, template)
	if upid, exit := c.task("DELETE", vm+"102", nil); !strings.HasPrefix(exit, "unable to open file '/etc/pve/nodes/"+qnode+"/qemu-server/102.conf.tmp.") ||
		!strings.Contains(upid, ":qmdestroy:102:") {
		t.Errorf("destroy without quorum: %s %q", upid, exit)
	}
	// reads go on; the running guest keeps running and can still be stopped (vm_stop checks no quorum)
	var st map[string]any
	c.ok("GET", vm+"101/status/current", nil, &st)
	var conf map[string]any
	c.ok("GET", vm+"102/config", nil, &conf)
	var rs []map[string]any
	c.ok("GET", "/cluster/resources", nil, &rs)
	if st["status"] != "running" || conf["memory"] == nil || conf["memory"] == "4096" {
		t.Errorf("without quorum: 101 %v, 102's config %v", st["status"], conf)
	}
	if _, exit := c.task("POST", vm+"101/status/stop", nil); exit != "OK" {
		t.Errorf("stop without quorum: %q", exit)
	}
	// the QDevice's host back: 2 votes of 3, quorate, writes go through again
	if code, _ := simAdmin(t, s, "/_sim/qdevice/up", ""); code != 200 {
		t.Fatal("qdevice up")
	}
	c.ok("PUT", vm+"101/config", vals("memory", "4096"), nil)
	c.ok("POST", "/pools", vals("poolid", "pr"), nil)
	if stats := s.Stats(); stats.Writes-stats.WritesAccepted < len(cases) {
		t.Errorf("refused writes not counted as attempted: %+v", stats)
	}
}

// TestQuorumRulesComplete: every write route pvesim serves has its rule (the gate's default,
// check_cfs_quorum, is for routes added without one), and every rule names a served route or a
// storage route pvesim may add.
func TestQuorumRulesComplete(t *testing.T) {
	s := &Server{}
	served := s.routes()
	for k := range served {
		if strings.HasPrefix(k, "GET ") {
			continue
		}
		if _, ok := quorumRules[k]; !ok {
			t.Errorf("write route %s has no quorum rule (quorum.go quorumRules)", k)
		}
	}
	for k := range quorumRules {
		if _, ok := served[k]; !ok && !strings.Contains(k, " /storage") && !strings.Contains(k, "/status/") {
			t.Errorf("quorum rule %s names no route pvesim serves", k)
		}
	}
}

// TestConformanceQDeviceStatus: GET /cluster/config/qdevice is corosync-qdevice's status as PVE
// keeps it ({} without a QDevice); /cluster/config/nodes has each node's quorum_votes.
func TestConformanceQDeviceStatus(t *testing.T) {
	_, c0 := quorumSim(t, nil, QuorumConfig{})
	var none map[string]any
	c0.ok("GET", "/cluster/config/qdevice", nil, &none)
	if len(none) != 0 {
		t.Errorf("qdevice status without a QDevice: %v", none)
	}
	s, c := quorumSim(t, []string{"p03"}, QuorumConfig{QDevice: &QDeviceConfig{Host: "10.20.10.9"}})
	var q map[string]string
	c.ok("GET", "/cluster/config/qdevice", nil, &q)
	if q["State"] != "Connected" || q["Algorithm"] != "Fifty-Fifty split" || q["QNetd host"] != "10.20.10.9:5403" || q["Model"] != "Net" ||
		!strings.HasSuffix(q["Last poll call"], " (cast vote)") {
		t.Errorf("qdevice status: %v", q)
	}
	if err := s.SetQDevice(false); err != nil {
		t.Fatal(err)
	}
	c.ok("GET", "/cluster/config/qdevice", nil, &q)
	if q["State"] != "Connect failed" || strings.HasSuffix(q["Last poll call"], "(cast vote)") {
		t.Errorf("qdevice status, qnetd down: %v", q)
	}
	var nodes []map[string]any
	c.ok("GET", "/cluster/config/nodes", nil, &nodes)
	if len(nodes) != 2 || nodes[0]["node"] != qnode || nodes[0]["quorum_votes"] != "1" || nodes[1]["nodeid"] != "2" {
		t.Errorf("/cluster/config/nodes: %v", nodes)
	}
	// the admin view: votes, expected, quorum, the QDevice's state
	_, data := simAdmin(t, s, "/_sim/qdevice/up", "")
	var v quorumView
	if err := json.Unmarshal(data, &v); err != nil || !v.Quorate || v.QDevice == nil || !v.QDevice.CastVote || v.ExpectedVotes != 3 {
		t.Errorf("/_sim/qdevice/up: %s %v", data, err)
	}
	if code, body := simAdmin(t, startSim(t), "/_sim/qdevice/down", ""); code != 400 || !strings.Contains(string(body), "no QDevice configured") {
		t.Errorf("/_sim/qdevice/down without a QDevice: %d %s", code, body)
	}
}
