package pvesim

// Cluster members that leave and rejoin, as PVE shows them (issue 25, item 2).
//
// What PVE does, and where it says so:
//   - pmxcfs marks a node that left the corosync membership online=0 (pve-cluster
//     src/pmxcfs/status.c, cfs_status_set_members) and keeps what it last broadcast: its kv data,
//     among it the SDN zone status /cluster/resources lists (pve-manager PVE/API2/Cluster.pm reads
//     get_node_kv("sdn")), and its RRD data until that is five minutes old (status.c, expire
//     60*5), which is where a node's uptime/cpu/mem and a guest's status come from.
//   - /nodes and /cluster/resources build a node's entry with extract_node_stats (pve-manager
//     PVE/API2Tools.pm): status "offline", no uptime/cpu/mem/disk; maxcpu/maxmem/level only while
//     its RRD entry lasts. A guest's entry (extract_vm_stats) is status "unknown" once its RRD
//     entry is gone.
//   - A call whose method has proxyto=node is proxied by pveproxy to that node after the
//     permission check (pve-manager PVE/HTTPServer.pm, then pve-http-server
//     PVE/APIServer/AnyEvent.pm proxy_request); AnyEvent::HTTP answers a failed connect with
//     status 595 and the connect errno as the reason ("No route to host" for a node that is
//     down), with an empty body.
//   - PUT /cluster/sdn's reloadnetworkall task runs `pvesh set /nodes/<node>/network` for every
//     node (pve-network src/PVE/API2/Network/SDN.pm, create_reload_network_worker); pvesh reaches
//     another node over ssh (pve-manager PVE/CLI/pvesh.pm proxy_handler). For an offline node
//     that fails, the task logs it and goes on with plain `warn`, which does not count as a task
//     warning (pve-common PVE/RESTEnvironment.pm counts only $rpcenv->warn): the task ends OK.
//   - At boot a node runs pve-sdn-commit (pve-manager bin/pve-sdn-commit,
//     services/pve-sdn-commit.service): only when the cluster's SDN config has pending changes
//     does it commit them and regenerate its own files ("No changes to SDN configuration
//     detected, skipping reload" otherwise). A node that missed an apply while away therefore
//     keeps its old files, and its zones stay "pending" (pve-network Zones.pm status: local
//     version older than the running one), until the next PUT /cluster/sdn.

import (
	"fmt"
	"slices"
	"time"

	"github.com/deevnet/tenant/internal/pveschema"
)

// rrdExpire is how long pmxcfs keeps a node's RRD data after its last update.
const rrdExpire = 5 * time.Minute

// offlineReasons are the connect errors AnyEvent::HTTP reports as a 595's reason.
var offlineReasons = []string{"No route to host", "Connection timed out", "Connection refused"}

// offlineNode is a member that has left the membership: since when, the reason its proxied
// calls fail with, and the SDN zones it last broadcast.
type offlineNode struct {
	Since  int64    `json:"since"`
	Reason string   `json:"reason"`
	Zones  []string `json:"zones"`
}

// offline returns the node's offline record, nil while it is online.
func (st *state) offline(node string) *offlineNode {
	return st.Offline[node]
}

// rrdFresh says whether pmxcfs still holds the node's RRD data.
func (o *offlineNode) rrdFresh() bool {
	return time.Since(time.Unix(o.Since, 0)) < rrdExpire
}

// SetNodeOffline takes node out of the membership, as if it had been switched off age ago.
// The first node cannot go: it serves the API. reason is the 595's reason ("" for "No route
// to host").
func (s *Server) SetNodeOffline(node, reason string, age time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.nodeExists(node) {
		return fmt.Errorf("no such cluster node '%s'", node)
	}
	if node == s.st.Nodes[0].Name {
		return fmt.Errorf("node %s serves the API: it cannot go offline", node)
	}
	if reason == "" {
		reason = offlineReasons[0]
	}
	if !slices.Contains(offlineReasons, reason) {
		return fmt.Errorf("reason %q: one of %v", reason, offlineReasons)
	}
	if age < 0 {
		return fmt.Errorf("age %s: must not be negative", age)
	}
	if s.st.Offline == nil {
		s.st.Offline = map[string]*offlineNode{}
	}
	if s.st.Offline[node] != nil {
		return nil
	}
	s.st.Offline[node] = &offlineNode{Since: time.Now().Add(-age).Unix(), Reason: reason, Zones: sortedKeys(s.st.SDN.Current["zones"])}
	return nil
}

// SetNodeOnline brings node back into the membership. With boot, it has rebooted and runs
// pve-sdn-commit: pending SDN changes are committed and rendered on this node alone; without
// pending changes its files stay as they were. The log is what pve-sdn-commit printed.
func (s *Server) SetNodeOnline(node string, boot bool) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.nodeExists(node) {
		return nil, fmt.Errorf("no such cluster node '%s'", node)
	}
	delete(s.st.Offline, node)
	if !boot {
		return []string{}, nil
	}
	sd := s.st.SDN
	if !sdnChanged(sd) {
		return []string{"No changes to SDN configuration detected, skipping reload"}, nil
	}
	sd.Running = sd.Current.clone()
	sd.Version++
	s.digests = nil
	t := &Task{Node: node, Type: "pve-sdn-commit"}
	if s.cfg.ReloadCommand == "" {
		s.writeNodeFiles(t, node)
		s.reloadDone(t, node, sd.NodeFiles[node].Version, nil, nil)
	} else {
		s.reloadByCommand(t, []string{node})
	}
	return t.Log, nil
}

// sdnChanged is pve-sdn-commit's sdn_changed: any SDN section (fabrics too) differs between
// the current and the running config.
func sdnChanged(sd *sdnState) bool {
	kinds := map[string]bool{}
	for k, v := range sd.Current {
		kinds[k] = len(v) > 0
	}
	for k, v := range sd.Running {
		kinds[k] = kinds[k] || len(v) > 0
	}
	for k, nonEmpty := range kinds {
		// an empty section and a missing one are the same config
		if nonEmpty && !jsonEqual(sd.Current[k], sd.Running[k]) {
			return true
		}
	}
	return false
}

// proxyCheck is pveproxy proxying a proxyto=node call: to an offline node, the connect fails
// and the client gets AnyEvent::HTTP's 595 with an empty body.
func (s *Server) proxyCheck(mi *pveschema.Method, params Params) error {
	if mi.ProxyTo == "" {
		return nil
	}
	node := params.Str(mi.ProxyTo)
	if o := s.st.offline(node); o != nil {
		return &apiError{Status: 595, Message: o.Reason + "\n", NoBody: true}
	}
	return nil
}

// nodeIP is the address pmxcfs knows a member by (/cluster/status "ip").
func nodeIP(i int) string { return fmt.Sprintf("127.0.0.%d", i+1) }

// nodeEntry is a node's entry in /nodes and /cluster/resources (extract_node_stats).
func (s *Server) nodeEntry(n NodeConfig) map[string]any {
	e := map[string]any{"id": "node/" + n.Name, "node": n.Name, "type": "node"}
	o := s.st.offline(n.Name)
	if o == nil {
		e["status"], e["uptime"], e["cpu"], e["mem"] = "online", 86400, 0.02, n.MaxMem/8
	} else {
		e["status"] = "offline"
	}
	if o == nil || o.rrdFresh() {
		e["maxcpu"], e["maxmem"], e["level"] = n.MaxCPU, n.MaxMem, ""
	}
	return e
}

// reloadOffline is what reloadnetworkall logs for a node it cannot reach: pvesh's ssh fails,
// pvesh dies, and the task warns and goes on.
func (s *Server) reloadOffline(t *Task, node string, regenerateFRR bool) {
	ip := ""
	for i, n := range s.st.Nodes {
		if n.Name == node {
			ip = nodeIP(i)
		}
	}
	t.Log = append(t.Log, fmt.Sprintf("%s: reloading network config", node),
		fmt.Sprintf("proxy handler failed: ssh: connect to host %s port 22: %s", ip, s.st.offline(node).Reason),
		fmt.Sprintf("command 'pvesh set /nodes/%s/network --regenerate-frr %d' failed: exit code 255", node, boolInt(regenerateFRR)))
}
