package pvesim

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// serveAdmin answers the /_sim/ endpoints used by playbooks and the demo.
// They carry no authentication: the simulator only listens on loopback.
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": v})
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/_sim/nodes/"); ok && r.Method == http.MethodGet {
		// GET /_sim/nodes/{node}/files/{path...}: a node's running file as last applied
		node, path, ok := strings.Cut(rest, "/files/")
		content, found := "", false
		if ok && node != "" && path != "" {
			content, found = s.NodeFile(node, "/"+path)
		}
		if !found {
			http.Error(w, "no such file on node", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(content))
		return
	}
	if node, ok := strings.CutPrefix(r.URL.Path, "/_sim/disks/"); ok && r.Method == http.MethodPost {
		s.serveDisks(w, r, node, reply) // a node's volume groups, thin pools, file systems (storagecap.go)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/_sim/nodes/"); ok && r.Method == http.MethodPost {
		s.serveNodeState(w, r, rest, reply)
		return
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /_sim/quorum":
		reply(s.Quorum())
	case "POST /_sim/qdevice/up", "POST /_sim/qdevice/down":
		// the QDevice's host (corosync-qnetd) comes back or goes away
		if err := s.SetQDevice(strings.HasSuffix(r.URL.Path, "/up")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reply(s.Quorum())
	case "GET /_sim/api-workers":
		reply(s.APIWorkers())
	case "GET /_sim/stats":
		reply(s.Stats())
	case "POST /_sim/privileges/drop":
		s.serveDropPrivileges(w, r, reply) // privknob.go
	case "GET /_sim/writes":
		s.serveWrites(w, r, reply) // the accepted writes by object, after ?since=N (writelog.go)
	case "POST /_sim/stats/reset":
		s.ResetStats()
		reply(nil)
	case "POST /_sim/reset":
		s.Reset()
		reply(nil)
	case "POST /_sim/faults":
		// {"faults":[Fault...], "task_faults":[TaskFault...], "hold_sdn_lock_seconds": N,
		//  "latency_ms": N, "task_duration_ms": N, "reload_faults":[ReloadFault...], "api_workers": N}
		var req struct {
			Faults       []Fault       `json:"faults"`
			TaskFaults   []TaskFault   `json:"task_faults"`
			ReloadFaults []ReloadFault `json:"reload_faults"`
			HoldSDNLock  *float64      `json:"hold_sdn_lock_seconds"`
			LatencyMS    *int          `json:"latency_ms"`
			TaskDuration *int          `json:"task_duration_ms"`
			APIWorkers   *int          `json:"api_workers"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad fault request: "+err.Error(), http.StatusBadRequest)
			return
		}
		for _, f := range req.Faults {
			s.InjectFault(f)
		}
		for _, f := range req.TaskFaults {
			s.FailTask(f)
		}
		for _, f := range req.ReloadFaults {
			s.FailReload(f)
		}
		if req.HoldSDNLock != nil {
			s.HoldSDNLock(time.Duration(*req.HoldSDNLock * float64(time.Second)))
		}
		if req.LatencyMS != nil {
			s.SetLatency(time.Duration(*req.LatencyMS) * time.Millisecond)
		}
		if req.TaskDuration != nil {
			s.SetTaskDuration(time.Duration(*req.TaskDuration) * time.Millisecond)
		}
		if req.APIWorkers != nil {
			if err := s.SetAPIWorkers(*req.APIWorkers); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		reply(nil)
	default:
		http.Error(w, "unknown pvesim admin endpoint", http.StatusNotFound)
	}
}

// serveNodeState answers POST /_sim/nodes/{node}/offline {"reason": "...", "since_seconds": N}
// (the node left the membership N seconds ago) and POST /_sim/nodes/{node}/online {"boot": bool}
// (back; boot, the default, runs pve-sdn-commit and replies with what it printed).
func (s *Server) serveNodeState(w http.ResponseWriter, r *http.Request, rest string, reply func(any)) {
	node, op, _ := strings.Cut(rest, "/")
	var req struct {
		Reason string   `json:"reason"`
		Since  *float64 `json:"since_seconds"`
		Boot   *bool    `json:"boot"`
	}
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
			http.Error(w, "bad node state request: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	var err error
	switch op {
	case "offline":
		var age time.Duration
		if req.Since != nil {
			age = time.Duration(*req.Since * float64(time.Second))
		}
		err = s.SetNodeOffline(node, req.Reason, age)
		if err == nil {
			reply(nil)
		}
	case "online":
		var log []string
		if log, err = s.SetNodeOnline(node, req.Boot == nil || *req.Boot); err == nil {
			reply(log)
		}
	default:
		http.Error(w, "unknown pvesim admin endpoint", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}
