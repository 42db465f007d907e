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
	switch r.Method + " " + r.URL.Path {
	case "GET /_sim/stats":
		reply(s.Stats())
	case "POST /_sim/stats/reset":
		s.ResetStats()
		reply(nil)
	case "POST /_sim/reset":
		s.Reset()
		reply(nil)
	case "POST /_sim/faults":
		// {"faults":[Fault...], "task_faults":[TaskFault...], "hold_sdn_lock_seconds": N,
		//  "latency_ms": N, "task_duration_ms": N, "reload_faults":[ReloadFault...]}
		var req struct {
			Faults       []Fault       `json:"faults"`
			TaskFaults   []TaskFault   `json:"task_faults"`
			ReloadFaults []ReloadFault `json:"reload_faults"`
			HoldSDNLock  *float64      `json:"hold_sdn_lock_seconds"`
			LatencyMS    *int          `json:"latency_ms"`
			TaskDuration *int          `json:"task_duration_ms"`
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
		reply(nil)
	default:
		http.Error(w, "unknown pvesim admin endpoint", http.StatusNotFound)
	}
}
