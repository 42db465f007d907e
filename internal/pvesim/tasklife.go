package pvesim

// A task's life: started by a handler, advanced by the clock, finished with its effect.

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// startTask creates a task; finish runs when it ends (after TaskDuration),
// its error becoming the exitstatus.
func (s *Server) startTask(r *reqCtx, node, typ, id string, finish func() error) *Task {
	st := s.st
	st.NextPID++
	now := time.Now()
	t := &Task{Node: node, PID: st.NextPID, PStart: 0x00F4C3D2, StartTime: now.Unix(), Type: typ, ID: id,
		User: r.who.User, TokenID: r.who.TokenID, Status: "running", endAt: now.Add(s.taskDur), finish: finish}
	user := r.who.String()
	t.UPID = fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", node, t.PID, t.PStart, t.StartTime, typ, id, user)
	st.Tasks[t.UPID] = t
	st.TaskSeq = append(st.TaskSeq, t.UPID)
	// Keep the task history bounded for long demos: drop the oldest stopped tasks.
	if len(st.TaskSeq) > maxTasks {
		var keep []string
		drop := len(st.TaskSeq) - maxTasks
		for _, u := range st.TaskSeq {
			if drop > 0 && st.Tasks[u] != nil && st.Tasks[u].Status == "stopped" {
				delete(st.Tasks, u)
				drop--
				continue
			}
			keep = append(keep, u)
		}
		st.TaskSeq = keep
	}
	return t
}

func (s *Server) advanceLocked() {
	now := time.Now()
	for _, u := range s.st.TaskSeq {
		t := s.st.Tasks[u]
		if t != nil && t.Status == "running" && !t.busy && !t.endAt.After(now) {
			s.finishTask(t)
		}
	}
}

func (s *Server) finishAllLocked() {
	for _, u := range s.st.TaskSeq {
		if t := s.st.Tasks[u]; t != nil && t.Status == "running" && !t.busy {
			s.finishTask(t)
		}
	}
}

func (s *Server) finishTask(t *Task) {
	var err error
	for _, f := range s.taskFaults {
		if f.Type == t.Type {
			f.seen++
			if f.Nth == 0 || f.seen == f.Nth {
				err = errors.New(f.ExitStatus)
			}
		}
	}
	if err != nil {
		// the injected failure replaces the task's work; undo its setup
		if t.abort != nil {
			t.abort()
		}
	} else if t.finish != nil {
		err = t.finish()
	}
	t.Status = "stopped"
	t.EndTime = time.Now().Unix()
	if err != nil {
		t.ExitStatus = strings.TrimRight(err.Error(), "\n")
		t.Log = append(t.Log, "TASK ERROR: "+t.ExitStatus)
	} else {
		t.ExitStatus = "OK"
		t.Log = append(t.Log, "TASK OK")
	}
}
