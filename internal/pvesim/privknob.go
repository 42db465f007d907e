package pvesim

// POST /_sim/privileges/drop {"privileges": ["VM.Migrate", ...]}: every role loses these
// privileges, as on a PVE release that does not have them (GET /access/roles no longer lists them,
// Administrator included, which holds every privilege there is). For the preflight's test
// (tests/preflight): the one assumption about the cluster that no config key of pvesim can break.
// Reset (POST /_sim/reset) brings them back.

import (
	"encoding/json"
	"net/http"
	"slices"
)

func (s *Server) serveDropPrivileges(w http.ResponseWriter, r *http.Request, reply func(any)) {
	var req struct {
		Privileges []string `json:"privileges"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil || len(req.Privileges) == 0 {
		http.Error(w, `bad request: want {"privileges": [NAME, ...]}`, http.StatusBadRequest)
		return
	}
	s.DropPrivileges(req.Privileges)
	reply(nil)
}

// DropPrivileges takes the privileges out of every role.
func (s *Server) DropPrivileges(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, privs := range s.st.Roles {
		s.st.Roles[id] = slices.DeleteFunc(slices.Clone(privs), func(p string) bool { return slices.Contains(names, p) })
	}
}
