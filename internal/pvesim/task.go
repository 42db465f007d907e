package pvesim

// Tasks: UPIDs, status, log, list, stop.

import (
	"regexp"
	"time"
)

// taskRoutes: a node's tasks, and the cluster's.
func (s *Server) taskRoutes() routes {
	rs := collection("/nodes/{node}/tasks", "upid", crud{list: s.taskList, get: s.taskIndex, remove: s.taskStop})
	rs.add(routes{"GET /cluster/tasks": s.taskList, "GET /nodes/{node}/tasks/{upid}/status": s.taskStatus,
		"GET /nodes/{node}/tasks/{upid}/log": s.taskLog})
	return rs
}

func (s *Server) taskFor(r *reqCtx) (*Task, error) {
	upid := r.params.Str("upid")
	if !upidRe.MatchString(upid) {
		return nil, paramErr(map[string]string{"upid": "unable to parse worker upid"})
	}
	t := s.st.Tasks[upid]
	if t == nil {
		return nil, paramErr(map[string]string{"upid": "no such task"})
	}
	owner := t.User == r.who.User && (r.who.TokenID == "" || r.who.TokenID == t.TokenID)
	if !owner && !r.who.isRoot() {
		if err := s.st.check(r.who, "/nodes/"+t.Node, []string{"Sys.Audit"}, false); err != nil {
			return nil, err
		}
	}
	return t, nil
}

var upidRe = regexp.MustCompile(`^UPID:([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s]+):([^:\s]*):([^:\s]+):$`)

func (s *Server) taskStatus(r *reqCtx) (any, error) {
	t, err := s.taskFor(r)
	if err != nil {
		return nil, err
	}
	o := map[string]any{"upid": t.UPID, "node": t.Node, "pid": t.PID, "pstart": t.PStart, "starttime": t.StartTime,
		"type": t.Type, "id": t.ID, "user": t.User, "status": t.Status}
	if t.TokenID != "" {
		o["tokenid"] = t.TokenID
	}
	if t.Status == "stopped" {
		o["exitstatus"] = t.ExitStatus
	}
	return o, nil
}

func (s *Server) taskLog(r *reqCtx) (any, error) {
	t, err := s.taskFor(r)
	if err != nil {
		return nil, err
	}
	start := int(r.params.Int("start"))
	limit := 50
	if r.params.Has("limit") {
		limit = int(r.params.Int("limit"))
	}
	out := []map[string]any{}
	for i := start; i < len(t.Log) && len(out) < limit; i++ {
		out = append(out, map[string]any{"n": i + 1, "t": t.Log[i]})
	}
	return out, nil
}

func (s *Server) taskIndex(r *reqCtx) (any, error) {
	if _, err := s.taskFor(r); err != nil {
		return nil, err
	}
	return []map[string]string{{"name": "log"}, {"name": "status"}}, nil
}

func (s *Server) taskStop(r *reqCtx) (any, error) {
	t, err := s.taskFor(r)
	if err != nil {
		return nil, err
	}
	if t.Status == "running" {
		t.Status, t.ExitStatus, t.EndTime = "stopped", "interrupted by signal", time.Now().Unix()
		if t.abort != nil {
			t.abort()
		}
	}
	return nil, nil
}

func (s *Server) taskList(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	out := []map[string]any{}
	for i := len(s.st.TaskSeq) - 1; i >= 0; i-- {
		t := s.st.Tasks[s.st.TaskSeq[i]]
		if t == nil || (node != "" && t.Node != node) {
			continue
		}
		owner := t.User == r.who.User && (r.who.TokenID == "" || r.who.TokenID == t.TokenID)
		if !owner && !s.st.has(r.who, "/nodes/"+t.Node, []string{"Sys.Audit"}, false) {
			continue
		}
		o := map[string]any{"upid": t.UPID, "node": t.Node, "pid": t.PID, "pstart": t.PStart, "starttime": t.StartTime, "type": t.Type, "id": t.ID, "user": t.User}
		if t.Status == "stopped" {
			o["status"], o["endtime"] = t.ExitStatus, t.EndTime
		}
		out = append(out, o)
	}
	return out, nil
}
