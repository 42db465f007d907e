package pvesim

// The global SDN lock, the SDN index and rollback. Apply is in apply.go.

import (
	"time"
)

// sdnRoutes: the SDN index, the lock and rollback.
func (s *Server) sdnRoutes() routes {
	return routes{"GET /cluster/sdn": s.sdnIndex, "POST /cluster/sdn/lock": s.sdnLockAcquire,
		"DELETE /cluster/sdn/lock": s.sdnLockRelease, "POST /cluster/sdn/rollback": s.sdnRollback}
}

func (s *Server) checkLockToken(params Params, op string) error {
	l := s.st.SDN.Lock
	if l != nil && params.Str("lock-token") != l.Token {
		return plainErr("%s: invalid lock token provided!", op)
	}
	return nil
}

func (s *Server) sdnIndex(r *reqCtx) (any, error) {
	var out []map[string]string
	for _, id := range []string{"controllers", "dns", "dry-run", "fabrics", "ipams", "lock", "rollback", "vnets", "zones"} {
		out = append(out, map[string]string{"id": id})
	}
	return out, nil
}

func (s *Server) sdnLockAcquire(r *reqCtx) (any, error) {
	sd := s.st.SDN
	if sd.Lock != nil {
		return nil, plainErr("could not acquire lock for SDN config: invalid lock token provided!")
	}
	if !r.params.Bool("allow-pending") && hasPending(sd) {
		return nil, plainErr("could not acquire lock for SDN config: configuration has pending changes")
	}
	sd.Lock = &sdnLock{Token: randomUUID(s.rng), Since: time.Now().Unix(), Owner: r.who.String()}
	return sd.Lock.Token, nil
}

func (s *Server) sdnLockRelease(r *reqCtx) (any, error) {
	sd := s.st.SDN
	if r.params.Bool("force") {
		sd.Lock = nil
		return nil, nil
	}
	if sd.Lock != nil && r.params.Str("lock-token") != sd.Lock.Token {
		return nil, plainErr("could not release lock: invalid lock token provided!")
	}
	sd.Lock = nil
	return nil, nil
}

func (s *Server) sdnRollback(r *reqCtx) (any, error) {
	sd := s.st.SDN
	if err := s.checkLockToken(r.params, "could not rollback SDN configuration"); err != nil {
		return nil, err
	}
	if sd.Running == nil {
		return nil, plainErr("could not rollback SDN configuration: no running configuration found")
	}
	sd.Current = sd.Running.clone()
	if r.params.Has("lock-token") && sd.Lock != nil && (!r.params.Has("release-lock") || r.params.Bool("release-lock")) {
		sd.Lock = nil
	}
	return nil, nil
}
