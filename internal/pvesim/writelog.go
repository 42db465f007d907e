package pvesim

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// The write log: every API write the simulator accepted, in order, with the object it named.
// make test-plan (tests/plan) compares it with what a playbook's check mode predicted; the counters
// in Stats say how many writes a route took, not which object they changed. Parameter values are
// not kept: a write may carry a secret (a token's, a password), and the log is served unauthenticated.

// idParams are the parameters that name an object rather than set it: their values are logged (a
// POST to a collection names its new member only in them, e.g. POST /pools poolid=tenant-a).
var idParams = map[string]bool{
	"vmid": true, "newid": true, "poolid": true, "userid": true, "tokenid": true, "groupid": true,
	"roleid": true, "vnet": true, "zone": true, "subnet": true, "id": true, "name": true,
	"path": true, "storage": true, "hookscript": true, "target": true, "node": true, "type": true,
	"controller": true, "fabric": true,
}

// writeLogCap bounds the log of a long-running simulator (the demo): the oldest entries go first.
const writeLogCap = 20000

// WriteRecord is one accepted write.
type WriteRecord struct {
	Seq      int               `json:"seq"`      // 1, 2, ... since the simulator started; never reused
	Time     float64           `json:"time"`     // Unix seconds, wall clock, when it was accepted
	Method   string            `json:"method"`   // POST, PUT, DELETE
	Route    string            `json:"route"`    // the route template, e.g. /nodes/{node}/qemu/{vmid}/config
	Path     string            `json:"path"`     // the object: /nodes/dv02hyp002p02/qemu/10101/config
	Vars     map[string]string `json:"vars"`     // the path's variables by name
	Params   []string          `json:"params"`   // the names of the parameters sent, sorted
	IDs      map[string]string `json:"ids"`      // the values of those that name an object (idParams)
	Username string            `json:"username"` // who made it (user or user!token)
}

// writeLog is the simulator's accepted writes, guarded by Server.mu.
type writeLog struct {
	seq     int
	entries []WriteRecord
}

// recordWriteLocked appends an accepted write; the caller holds s.mu.
func (s *Server) recordWriteLocked(rc *reqCtx) {
	names := make([]string, 0, len(rc.params))
	ids := map[string]string{}
	for k, v := range rc.params {
		names = append(names, k)
		if idParams[k] {
			ids[k] = fmt.Sprint(v)
		}
	}
	sort.Strings(names)
	vars := make(map[string]string, len(rc.vars))
	for k, v := range rc.vars {
		vars[k] = v
	}
	s.wlog.seq++
	s.wlog.entries = append(s.wlog.entries, WriteRecord{
		Seq: s.wlog.seq, Time: float64(time.Now().UnixNano()) / 1e9, Method: rc.method, Route: rc.template,
		Path: rc.path, Vars: vars, Params: names, IDs: ids, Username: rc.who.String(),
	})
	if n := len(s.wlog.entries); n > writeLogCap {
		s.wlog.entries = append([]WriteRecord(nil), s.wlog.entries[n-writeLogCap:]...)
	}
}

// Writes returns the accepted writes after sequence number since (0: all that are kept) and the
// sequence number of the last write, to ask from next time.
func (s *Server) Writes(since int) ([]WriteRecord, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []WriteRecord{}
	for _, e := range s.wlog.entries {
		if e.Seq > since {
			out = append(out, e)
		}
	}
	return out, s.wlog.seq
}

// serveWrites answers GET /_sim/writes?since=N: {"data":{"seq":LAST,"writes":[WriteRecord...]}}.
func (s *Server) serveWrites(w http.ResponseWriter, r *http.Request, reply func(any)) {
	since := 0
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, "since: not a sequence number: "+v, http.StatusBadRequest)
			return
		}
		since = n
	}
	ws, last := s.Writes(since)
	reply(map[string]any{"seq": last, "writes": ws})
}
