package pvesim

// Quorum, as corosync's votequorum computes it and as PVE acts on it (issue 38).
//
// What corosync and PVE do, and where they say so:
//   - Every node has quorum_votes (default 1) in corosync.conf's nodelist; expected votes are their
//     sum unless quorum.expected_votes overrides it (corosync man/votequorum.5; exec/votequorum.c
//     votequorum_read_nodelist_configuration). A QDevice adds its votes: quorum.device.votes, which
//     ffsplit requires to be 1 (corosync-qdevice man/corosync-qdevice.8, "ffsplit") and which lms
//     leaves to its default, sum(node votes) - 1 (votequorum.c votequorum_readconfig). Once the
//     device has cast its vote the total exceeds the nodelist's sum and votequorum raises expected
//     votes to it (votequorum.c recalculate_quorum: total_votes > us->expected_votes).
//   - quorum = max((expected+2)/2, (total+2)/2), i.e. floor(expected/2)+1; the cluster is quorate
//     while total votes >= quorum (votequorum.c calculate_quorum, are_we_quorate). two_node sets the
//     quorum to 1 for at most two nodes (calculate_quorum) and cannot be combined with a quorum
//     device ("configuration error: two_node and quorum device cannot be configured at the same
//     time!", votequorum_readconfig).
//   - The QDevice casts its vote only while its connection to corosync-qnetd is up; with ffsplit it
//     goes to the partition with the most active nodes, with lms to the partition that still sees
//     qnetd (corosync-qdevice.8, "MODEL NET ALGORITHMS"). pvesim's cluster is one partition (the
//     nodes online), so the vote counts exactly while the QDevice's host is up.
//     `pvecm qdevice setup` picks ffsplit with votes 1 for an even node count and lms (only with
//     --force) for an odd one (pve-cluster src/PVE/CLI/pvecm.pm, setup_qdevice).
//   - Without quorum pmxcfs makes /etc/pve read-only: files 0444, directories 0555 (pve-cluster
//     src/pmxcfs/cfs-plug-memdb.c tree_entry_stat) and every write or mkdir returns EACCES
//     (src/pmxcfs/dcdb.c dcdb_send_fuse_message). The Perl side fails a write in one of three ways,
//     each an HTTP 500 with the message as reason:
//     1. check_cfs_quorum (src/PVE/Cluster.pm) dies "cluster not ready - no quorum?" where an API
//     method calls it first: qemu-server create_vm, clone_vm, vm_start, migrate_vm
//     (src/PVE/API2/Qemu.pm); pve-network's create of zones, vnets, subnets, controllers
//     (src/PVE/API2/Network/SDN/*.pm).
//     2. cfs_lock (src/PVE/Cluster.pm): mkdir of the lock directory fails until the lock timeout
//     (10 s by default), then the error becomes "cfs-lock '<lockid>' error: no quorum!", which
//     the caller prefixes with its message: lock_user_config (pve-access-control
//     src/PVE/AccessControl.pm: users, tokens, ACLs, roles, and pve-manager PVE/API2/Pool.pm's
//     pools, lock 'file-user_cfg'), lock_sdn_config/lock_sdn_domain (pve-network
//     src/PVE/Network/SDN.pm, lock 'domain-sdn'), lock_storage_config (pve-storage
//     src/PVE/Storage.pm, lock 'file-storage_cfg').
//     3. A guest config written without a cfs lock (the guest lock is a local flock): pve-common
//     src/PVE/File.pm file_set_contents dies "unable to open file '<path>.tmp.<pid>' - Permission
//     denied". update_vm writes its pending changes before it forks a worker, so the call
//     fails; resize_vm, template and destroy_vm write inside their worker, so the call returns a
//     UPID and the task fails with it.
//   - Reads go on (pmxcfs serves its last state), and so do calls that only act on a running guest:
//     stop, shutdown, reset, reboot, suspend, resume check no quorum (qemu-server Qemu.pm); running
//     guests keep running.
// Not modelled: the 10 s a cfs lock waits before it fails (pvesim fails at once), what a worker
// did on storage before its config write failed, wait_for_all and last_man_standing.

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// QuorumConfig is corosync.conf's quorum section and the nodelist's votes.
type QuorumConfig struct {
	// Votes are the nodes' quorum_votes by node name; a node not listed has 1.
	Votes map[string]int `yaml:"votes"`
	// ExpectedVotes is quorum.expected_votes; 0 computes it from the nodelist and the QDevice.
	ExpectedVotes int  `yaml:"expected_votes"`
	TwoNode       bool `yaml:"two_node"`
	// QDevice is quorum.device (model net); nil without one.
	QDevice *QDeviceConfig `yaml:"qdevice"`
}

// QDeviceConfig is a QDevice of model net, its corosync-qnetd running on Host.
type QDeviceConfig struct {
	Host string `yaml:"host"`
	// Algorithm is ffsplit or lms; empty picks what pvecm qdevice setup does (ffsplit for an even
	// node count, lms for an odd one).
	Algorithm string `yaml:"algorithm"`
	// Votes is quorum.device.votes; 0 is the algorithm's (ffsplit 1, lms sum(node votes) - 1).
	Votes int `yaml:"votes"`
}

// quorumView is votequorum's state: what corosync-quorumtool shows.
type quorumView struct {
	Quorate       bool          `json:"quorate"`
	ExpectedVotes int           `json:"expected_votes"`
	TotalVotes    int           `json:"total_votes"`
	Quorum        int           `json:"quorum"`
	TwoNode       bool          `json:"two_node"`
	Nodes         []quorumNode  `json:"nodes"`
	QDevice       *qdeviceState `json:"qdevice,omitempty"`
}

type quorumNode struct {
	Name   string `json:"name"`
	NodeID int    `json:"nodeid"`
	Votes  int    `json:"votes"`
	Online bool   `json:"online"`
}

type qdeviceState struct {
	Host      string `json:"host"`
	Algorithm string `json:"algorithm"`
	Votes     int    `json:"votes"`
	Up        bool   `json:"up"`        // its host (corosync-qnetd) reachable
	CastVote  bool   `json:"cast_vote"` // its votes count now
}

// twoNodeQDevice is votequorum's refusal, word for word.
const twoNodeQDevice = "configuration error: two_node and quorum device cannot be configured at the same time!"

// check refuses what corosync refuses to start with, naming the key.
func (q QuorumConfig) check(nodes []NodeConfig) error {
	known := map[string]bool{}
	for _, n := range nodes {
		known[n.Name] = true
	}
	for _, name := range sortedKeys(q.Votes) {
		if !known[name] {
			return fmt.Errorf("quorum.votes: %s is not a node", name)
		}
		if q.Votes[name] < 0 {
			return fmt.Errorf("quorum.votes.%s: %d, must not be negative", name, q.Votes[name])
		}
	}
	if q.ExpectedVotes < 0 {
		return fmt.Errorf("quorum.expected_votes: %d, must not be negative", q.ExpectedVotes)
	}
	d := q.QDevice
	if d == nil {
		return nil
	}
	if q.TwoNode {
		return fmt.Errorf("quorum: %s", twoNodeQDevice)
	}
	if d.Host == "" {
		return errors.New("quorum.qdevice.host: required (the host running corosync-qnetd)")
	}
	switch d.Algorithm {
	case "", "ffsplit", "lms":
	default:
		return fmt.Errorf("quorum.qdevice.algorithm: %q, one of ffsplit, lms", d.Algorithm)
	}
	if d.Votes < 0 {
		return fmt.Errorf("quorum.qdevice.votes: %d, must not be negative", d.Votes)
	}
	if q.algorithm(len(nodes)) == "ffsplit" {
		// corosync-qdevice.8: ffsplit needs one vote per node and one for the device
		for _, n := range nodes {
			if q.votes(n.Name) != 1 {
				return fmt.Errorf("quorum.votes.%s: ffsplit needs 1 vote per node", n.Name)
			}
		}
		if d.Votes > 1 {
			return fmt.Errorf("quorum.qdevice.votes: %d, ffsplit needs 1", d.Votes)
		}
	}
	if q.ExpectedVotes > 0 && d.Votes == 0 {
		return errors.New("quorum.qdevice.votes: configuration error: quorum.device.votes must be specified when quorum.expected_votes is set")
	}
	if q.ExpectedVotes > 0 && q.ExpectedVotes-d.Votes < 2 {
		return errors.New("quorum.qdevice.votes: configuration error: quorum.device.votes is too high or expected_votes is too low")
	}
	return nil
}

func (q QuorumConfig) votes(node string) int {
	if v, ok := q.Votes[node]; ok {
		return v
	}
	return 1
}

// algorithm is the QDevice's algorithm, pvecm's choice when none is configured.
func (q QuorumConfig) algorithm(nodes int) string {
	if q.QDevice == nil {
		return ""
	}
	if a := q.QDevice.Algorithm; a != "" {
		return a
	}
	if nodes%2 == 1 {
		return "lms"
	}
	return "ffsplit"
}

// quorumLocked computes votequorum's view of the cluster now.
func (s *Server) quorumLocked() quorumView {
	q := s.cfg.Quorum
	v := quorumView{TwoNode: q.TwoNode}
	sum, members := 0, 0
	for i, n := range s.st.Nodes {
		votes := q.votes(n.Name)
		online := s.st.offline(n.Name) == nil
		sum += votes
		if online {
			v.TotalVotes += votes
			members++
		}
		v.Nodes = append(v.Nodes, quorumNode{Name: n.Name, NodeID: i + 1, Votes: votes, Online: online})
	}
	expected := sum
	if d := q.QDevice; d != nil {
		alg := q.algorithm(len(s.st.Nodes))
		votes := d.Votes
		if votes == 0 {
			votes = 1
			if alg == "lms" {
				votes = sum - 1
			}
		}
		st := &qdeviceState{Host: d.Host, Algorithm: alg, Votes: votes, Up: !s.st.QDeviceDown}
		// one partition (the online nodes, the API node among them): it gets the vote while qnetd is up
		st.CastVote = st.Up
		if st.CastVote {
			v.TotalVotes += votes
		}
		expected += votes
		v.QDevice = st
	}
	if q.ExpectedVotes > 0 {
		expected = q.ExpectedVotes
	}
	v.ExpectedVotes = max(expected, v.TotalVotes)
	v.Quorum = max((v.ExpectedVotes+2)/2, (v.TotalVotes+2)/2)
	// two_node counts the members present: with more than two, it no longer applies
	if q.TwoNode && members <= 2 {
		v.Quorum = 1
	}
	v.Quorate = v.TotalVotes >= v.Quorum
	return v
}

// SetQDevice takes the QDevice's host (corosync-qnetd) down or brings it back.
func (s *Server) SetQDevice(up bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Quorum.QDevice == nil {
		return errors.New("no QDevice configured (quorum.qdevice)")
	}
	s.st.QDeviceDown = !up
	return nil
}

// Quorum is votequorum's view of the cluster (the admin endpoint GET /_sim/quorum).
func (s *Server) Quorum() quorumView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.quorumLocked()
}

// ---- the write gate ----

// How a write fails without quorum (see the header).
type quorumFailure int

const (
	qfPass      quorumFailure = iota // acts on a running guest or a local task: no quorum needed
	qfCheck                          // check_cfs_quorum first
	qfLock                           // a cfs lock: "<msg>: cfs-lock '<lock>' error: no quorum!"
	qfGuest                          // the guest config's write, in the call
	qfGuestTask                      // the guest config's write, in the call's worker
)

type quorumRule struct {
	kind quorumFailure
	lock string // qfLock: the lock id; qfGuestTask: the task type
	msg  string // qfLock: the caller's message
}

// quorumRules is every write route pvesim serves, by "METHOD /template". A write route missing
// here is refused as check_cfs_quorum refuses (a test keeps the table complete).
var quorumRules = func() map[string]quorumRule {
	r := map[string]quorumRule{}
	user := func(key, msg string) { r[key] = quorumRule{qfLock, "file-user_cfg", msg} }
	sdn := func(key, msg string) { r[key] = quorumRule{qfLock, "domain-sdn", msg} }
	store := func(key, msg string) { r[key] = quorumRule{qfLock, "file-storage_cfg", msg} }
	for _, k := range []string{"POST /nodes/{node}/qemu", "POST /nodes/{node}/qemu/{vmid}/clone",
		"POST /nodes/{node}/qemu/{vmid}/status/start", "POST /nodes/{node}/qemu/{vmid}/migrate",
		"POST /cluster/sdn/zones", "POST /cluster/sdn/vnets", "POST /cluster/sdn/vnets/{vnet}/subnets",
		"POST /cluster/sdn/controllers"} {
		r[k] = quorumRule{kind: qfCheck}
	}
	for _, a := range []string{"stop", "shutdown", "reset", "reboot", "suspend", "resume"} {
		r["POST /nodes/{node}/qemu/{vmid}/status/"+a] = quorumRule{kind: qfPass}
	}
	r["DELETE /nodes/{node}/tasks/{upid}"] = quorumRule{kind: qfPass}
	for _, k := range []string{"PUT /nodes/{node}/qemu/{vmid}/config", "POST /nodes/{node}/qemu/{vmid}/config",
		"PUT /nodes/{node}/qemu/{vmid}/cloudinit"} {
		r[k] = quorumRule{kind: qfGuest}
	}
	r["PUT /nodes/{node}/qemu/{vmid}/resize"] = quorumRule{qfGuestTask, "resize", ""}
	r["POST /nodes/{node}/qemu/{vmid}/template"] = quorumRule{qfGuestTask, "qmtemplate", ""}
	r["DELETE /nodes/{node}/qemu/{vmid}"] = quorumRule{qfGuestTask, "qmdestroy", ""}
	// pve-access-control src/PVE/API2/User.pm, ACL.pm, Role.pm; pve-manager PVE/API2/Pool.pm
	user("POST /access/users", "create user failed")
	user("PUT /access/users/{userid}", "update user failed")
	user("DELETE /access/users/{userid}", "delete user failed")
	user("POST /access/users/{userid}/token/{tokenid}", "generating token failed")
	user("PUT /access/users/{userid}/token/{tokenid}", "updating token info failed")
	user("DELETE /access/users/{userid}/token/{tokenid}", "deleting token failed")
	user("PUT /access/acl", "ACL update failed")
	user("POST /access/roles", "create role failed")
	user("PUT /access/roles/{roleid}", "update role failed")
	user("DELETE /access/roles/{roleid}", "delete role failed")
	user("POST /access/groups", "create group failed")
	user("PUT /access/groups/{groupid}", "update group failed")
	user("DELETE /access/groups/{groupid}", "delete group failed")
	// a login writes no cluster file: it works on a node without quorum
	r["POST /access/ticket"] = quorumRule{kind: qfPass}
	user("POST /pools", "create pool failed")
	user("PUT /pools", "update pools failed")
	user("PUT /pools/{poolid}", "update pools failed")
	user("DELETE /pools", "delete pool failed")
	user("DELETE /pools/{poolid}", "delete pool failed")
	// pve-network src/PVE/API2/Network/SDN.pm and SDN/*.pm
	for _, o := range []struct{ path, item, what string }{
		{"/cluster/sdn/zones", "{zone}", "zone"}, {"/cluster/sdn/vnets", "{vnet}", "vnet"},
		{"/cluster/sdn/vnets/{vnet}/subnets", "{subnet}", "subnet"}, {"/cluster/sdn/controllers", "{controller}", "controller"},
	} {
		sdn("PUT "+o.path+"/"+o.item, "update sdn "+o.what+" object failed")
		sdn("DELETE "+o.path+"/"+o.item, "delete sdn "+o.what+" object failed")
	}
	sdn("POST /cluster/sdn/fabrics/fabric", "adding fabric failed")
	sdn("PUT /cluster/sdn/fabrics/fabric/{id}", "updating fabric failed")
	sdn("DELETE /cluster/sdn/fabrics/fabric/{id}", "deleting fabric failed")
	sdn("POST /cluster/sdn/fabrics/node/{fabric_id}", "adding node failed")
	sdn("PUT /cluster/sdn/fabrics/node/{fabric_id}/{node_id}", "updating node failed")
	sdn("DELETE /cluster/sdn/fabrics/node/{fabric_id}/{node_id}", "deleting node failed")
	sdn("PUT /cluster/sdn", "could not commit SDN config")
	sdn("POST /cluster/sdn/lock", "could not acquire lock for SDN config")
	sdn("DELETE /cluster/sdn/lock", "could not release lock")
	sdn("POST /cluster/sdn/rollback", "could not rollback SDN configuration")
	// pve-storage src/PVE/API2/Storage/Config.pm
	store("POST /storage", "create storage failed")
	store("PUT /storage/{storage}", "update storage failed")
	store("DELETE /storage/{storage}", "delete storage failed")
	return r
}()

// noQuorumMsg is check_cfs_quorum's message.
const noQuorumMsg = "cluster not ready - no quorum?\n"

// quorumGate is pmxcfs without quorum, at the point of a write where PVE's handler reaches
// /etc/pve (after the permission check, the proxy and the schema): nil while the cluster is
// quorate or the call needs no quorum; otherwise PVE's error, or for a write PVE does in a
// worker, the UPID of a task that fails as PVE's does.
func (s *Server) quorumGate(rc *reqCtx) (any, error) {
	if rc.method != "POST" && rc.method != "PUT" && rc.method != "DELETE" {
		return nil, nil
	}
	if s.quorumLocked().Quorate {
		return nil, nil
	}
	rule, ok := quorumRules[rc.method+" "+rc.template]
	if !ok {
		rule = quorumRule{kind: qfCheck}
	}
	switch rule.kind {
	case qfPass:
		return nil, nil
	case qfLock:
		return nil, plainErr("%s: cfs-lock '%s' error: no quorum!", rule.msg, rule.lock)
	case qfGuest, qfGuestTask:
		vm, err := s.getVM(rc)
		if err != nil {
			return nil, err
		}
		if rule.kind == qfGuest {
			return nil, plainErr("%s", guestWriteErr(vm.Node, vm.VMID, 1000+s.rng.IntN(60000)))
		}
		var t *Task
		t = s.startTask(rc, vm.Node, rule.lock, strconv.Itoa(vm.VMID), func() error {
			return errors.New(guestWriteErr(vm.Node, vm.VMID, t.PID))
		})
		return t.UPID, nil
	}
	return nil, &apiError{Status: 500, Message: noQuorumMsg}
}

// guestWriteErr is file_set_contents failing on pmxcfs's read-only guest config.
func guestWriteErr(node string, vmid, pid int) string {
	return fmt.Sprintf("unable to open file '/etc/pve/nodes/%s/qemu-server/%d.conf.tmp.%d' - Permission denied", node, vmid, pid)
}

// ---- /cluster/config ----

func (s *Server) quorumRoutes() routes {
	return routes{"GET /cluster/config/nodes": s.corosyncNodes, "GET /cluster/config/qdevice": s.qdeviceStatus}
}

// corosyncNodes is corosync.conf's nodelist (pve-cluster API2/ClusterConfig.pm nodes).
func (s *Server) corosyncNodes(r *reqCtx) (any, error) {
	out := []map[string]any{}
	for i, n := range s.st.Nodes {
		out = append(out, map[string]any{"node": n.Name, "name": n.Name, "nodeid": strconv.Itoa(i + 1),
			"quorum_votes": strconv.Itoa(s.cfg.Quorum.votes(n.Name)), "ring0_addr": nodeIP(i)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a]["node"].(string) < out[b]["node"].(string) })
	return out, nil
}

// qdeviceStatus is corosync-qdevice's "status verbose" lines PVE keeps (pve-cluster
// API2/ClusterConfig.pm status; the strings from corosync-qdevice qdevices/qdevice-net-ipc-cmd.c
// and tlv.c); {} without a QDevice (no corosync-qdevice socket).
func (s *Server) qdeviceStatus(r *reqCtx) (any, error) {
	v := s.quorumLocked()
	d := v.QDevice
	if d == nil {
		return map[string]any{}, nil
	}
	alg := map[string]string{"ffsplit": "Fifty-Fifty split", "lms": "LMS"}[d.Algorithm]
	// votequorum polls the device every second; it casts its vote only while connected
	state, poll := "Connected", time.Now().Format("2006-01-02T15:04:05")+" (cast vote)"
	if !d.Up {
		state, poll = "Connect failed", time.Now().Format("2006-01-02T15:04:05")
	}
	host := d.Host
	if !strings.Contains(host, ":") {
		host += ":5403" // corosync-qnetd's default port
	}
	return map[string]any{"Algorithm": alg, "Model": "Net", "QNetd host": host, "State": state,
		"Tie-breaker": "Node with lowest node ID", "Last poll call": poll}, nil
}
