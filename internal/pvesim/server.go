package pvesim

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deevnet/tenant/internal/pveschema"
	"github.com/deevnet/tenant/internal/pvesim/pvesh"
)

// Stats counts API requests by "METHOD /route/template" (unknown routes as
// "METHOD ?"). Writes counts every POST/PUT/DELETE API request that was
// authenticated and routed, whether it then succeeded or was refused
// (attempted writes: an idempotent second run must have zero).
// WritesAccepted counts those that returned 2xx, and AcceptedWrites counts them by
// "METHOD /route/template" (what a write changed: make test-upgrade names each one).
type Stats struct {
	Requests       map[string]int `json:"requests"`
	Writes         int            `json:"writes"`
	WritesAccepted int            `json:"writes_accepted"`
	AcceptedWrites map[string]int `json:"accepted_writes"`
}

// Fault makes the Nth request matching Method and Path (a route template as
// in Stats, e.g. "/nodes/{node}/qemu/{vmid}/clone") fail with Status and
// Message. Nth counts from 1; 0 means every matching request.
type Fault struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	Nth     int    `json:"nth"`
	Status  int    `json:"status"`
	Message string `json:"message"`
	seen    int
}

// TaskFault makes the Nth task of Type end with ExitStatus and without its effect.
type TaskFault struct {
	Type       string `json:"type"`
	Nth        int    `json:"nth"`
	ExitStatus string `json:"exitstatus"`
	seen       int
}

// Server is a running simulator.
type Server struct {
	cfg      Config
	schema   *pveschema.Schema
	handlers routes

	mu         sync.Mutex
	st         *state
	rng        *rand.Rand
	stats      Stats
	wlog       writeLog // the accepted writes by object (writelog.go)
	faults     []*Fault
	taskFaults []*TaskFault
	// reloadFaults fail a node's network reload after SDN apply.
	reloadFaults []*ReloadFault
	workers      sync.WaitGroup // reload commands in flight
	latency      time.Duration
	taskDur      time.Duration
	pool         apiPool // the API's worker pool (apiworkers.go)
	rootSecret   string
	nodeSecret   string            // the node's own root@pam, for the pvesh a hookscript runs (NodeRootAuth)
	digests      map[string]string // SDN config digests, dropped on every write
	tickets      map[string]ticket // issued login tickets (ticket.go), in memory only

	ln     net.Listener
	http   *http.Server
	url    string
	caFile string
	tmpDir string
	done   chan struct{}
}

// apiError is an error with PVE's HTTP status and optional parameter errors.
type apiError struct {
	Status  int
	Message string
	Errors  map[string]string
	NoBody  bool // a proxy's own failure (595): the reason phrase alone, as pveproxy sends it
}

func (e *apiError) Error() string { return e.Message }

func paramErr(errs map[string]string) *apiError {
	return &apiError{Status: 400, Message: "Parameter verification failed.\n", Errors: errs}
}

// plainErr is a 500 with PVE's message; Perl appends a newline.
func plainErr(format string, a ...any) *apiError {
	msg := fmt.Sprintf(format, a...)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	return &apiError{Status: 500, Message: msg}
}

// checked is cfg with its defaults, or why it cannot start: no node, a reload command without a
// render directory, an address beyond loopback.
func (cfg Config) checked() (Config, error) {
	if len(cfg.Nodes) == 0 {
		return cfg, errors.New("pvesim: config has no nodes")
	}
	for _, n := range cfg.Nodes {
		if err := n.checkNetwork(); err != nil {
			return cfg, fmt.Errorf("pvesim: %w", err)
		}
	}
	if err := cfg.Quorum.check(cfg.Nodes); err != nil {
		return cfg, fmt.Errorf("pvesim: %w", err)
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.ReloadCommand != "" && cfg.RenderDir == "" {
		return cfg, errors.New("pvesim: a reload command needs a render dir")
	}
	if cfg.MACPrefix == "" {
		cfg.MACPrefix = "BC:24:11"
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return cfg, fmt.Errorf("pvesim: listen address %q: %w", cfg.Listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return cfg, fmt.Errorf("pvesim: refusing to listen on non-loopback address %q", cfg.Listen)
	}
	return cfg, nil
}

// serveTLS wraps ln in TLS with a new CA, written to cfg.CAOut or the temp directory.
func (s *Server) serveTLS(ln net.Listener) (net.Listener, error) {
	caPath := s.cfg.CAOut
	if caPath == "" {
		caPath = filepath.Join(s.tmpDir, "pvesim-ca.pem")
	}
	tlsCfg, err := newTLS(caPath)
	if err != nil {
		return ln, fmt.Errorf("pvesim: %w", err)
	}
	s.caFile = caPath
	return tls.NewListener(ln, tlsCfg), nil
}

// Start builds the cluster from cfg and serves it on cfg.Listen (127.0.0.1:0 by default).
func Start(cfg Config) (*Server, error) {
	sch, err := pveschema.Load()
	if err != nil {
		return nil, fmt.Errorf("pvesim: load schema: %w", err)
	}
	if cfg, err = cfg.checked(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, schema: sch, latency: cfg.Latency, taskDur: cfg.TaskDuration, done: make(chan struct{})}
	if err := s.SetAPIWorkers(cfg.APIWorkers); err != nil {
		return nil, fmt.Errorf("pvesim: %w", err)
	}
	s.nodeSecret = randomUUID(nil)
	s.rootSecret = cfg.RootSecret
	if s.rootSecret == "" {
		s.rootSecret = randomUUID(nil)
	}
	s.resetLocked()
	if cfg.StateFile != "" {
		if st, err := loadState(cfg.StateFile); err == nil {
			s.st = st
			if tok := st.Users["root@pam"].Tokens["sim"]; tok != nil {
				s.rootSecret = tok.Secret
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("pvesim: %w", err)
		}
	}
	s.handlers = s.routes()

	if s.tmpDir, err = os.MkdirTemp("", "pvesim-"); err != nil {
		return nil, fmt.Errorf("pvesim: temp dir: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		_ = os.RemoveAll(s.tmpDir)
		return nil, fmt.Errorf("pvesim: listen: %w", err)
	}
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // e.g. TLS handshake noise from probes
		// pveproxy speaks HTTP/1.1 only; an empty map disables h2, which
		// also keeps PVE's reason phrases possible.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	scheme := "http"
	if !cfg.InsecureHTTP {
		if ln, err = s.serveTLS(ln); err != nil {
			_ = ln.Close()
			_ = os.RemoveAll(s.tmpDir)
			return nil, err
		}
		scheme = "https"
	}
	s.ln = ln
	s.url = fmt.Sprintf("%s://%s", scheme, ln.Addr().String())
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// resetLocked rebuilds the cluster from the config (stats and faults too).
func (s *Server) resetLocked() {
	seed := s.cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s.st = newState(s.cfg, s.rootSecret)
	s.stats = Stats{Requests: map[string]int{}, AcceptedWrites: map[string]int{}}
	s.faults, s.taskFaults, s.reloadFaults = nil, nil, nil
	s.digests = nil
}

// Close stops the server, saves the state file if configured, and removes temp files.
func (s *Server) Close() error {
	// A short grace for requests in flight, then connections are closed:
	// playbooks stop the simulator between runs and should not wait.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var err error
	if serr := s.http.Shutdown(ctx); serr != nil {
		err = s.http.Close()
	}
	<-s.done
	s.workers.Wait() // reload commands end by their timeout at the latest
	if s.cfg.StateFile != "" {
		s.mu.Lock()
		s.finishAllLocked()
		if serr := s.st.save(s.cfg.StateFile); serr != nil && err == nil {
			err = serr
		}
		s.mu.Unlock()
	}
	_ = os.RemoveAll(s.tmpDir)
	return err
}

// URL is "https://127.0.0.1:PORT" (the API is at URL()+"/api2/json").
func (s *Server) URL() string { return s.url }

// Host is the listen host.
func (s *Server) Host() string { h, _, _ := net.SplitHostPort(s.ln.Addr().String()); return h }

// Port is the listen port.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.ln.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

// CAFile is the PEM file of the CA that signed the server certificate ("" over plain HTTP).
func (s *Server) CAFile() string { return s.caFile }

// RootToken returns the full token id root@pam!sim and its secret.
func (s *Server) RootToken() (string, string) { return "root@pam!sim", s.rootSecret }

// Stats returns a copy of the request counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stats{Requests: map[string]int{}, Writes: s.stats.Writes, WritesAccepted: s.stats.WritesAccepted, AcceptedWrites: map[string]int{}}
	for k, v := range s.stats.Requests {
		out.Requests[k] = v
	}
	for k, v := range s.stats.AcceptedWrites {
		out.AcceptedWrites[k] = v
	}
	return out
}

// ResetStats zeroes the request counters.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = Stats{Requests: map[string]int{}, AcceptedWrites: map[string]int{}}
}

// Reset restores the initial cluster of the config, and clears stats and faults.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

// InjectFault registers a request fault.
func (s *Server) InjectFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// FailTask registers a task fault.
func (s *Server) FailTask(f TaskFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taskFaults = append(s.taskFaults, &f)
}

// HoldSDNLock makes another client hold the global SDN lock, taken age ago.
func (s *Server) HoldSDNLock(age time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.SDN.Lock = &sdnLock{Token: randomUUID(s.rng), Since: time.Now().Add(-age).Unix(), Owner: "root@pam!other"}
}

// SetLatency adds d to every API request.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// SetTaskDuration sets how long new tasks stay running.
func (s *Server) SetTaskDuration(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taskDur = d
}

func randomUUID(r *rand.Rand) string {
	var b [16]byte
	if r == nil {
		_, _ = crand.Read(b[:])
	} else {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}
	b[6] = b[6]&0x0f | 0x70 // version 7 layout, as PVE's lock tokens
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ---- HTTP ----

// Params are request parameters as PVE sees them (see pveschema.Params).
type Params = pveschema.Params

// reqCtx is one API request after routing and parsing.
type reqCtx struct {
	method   string
	template string
	path     string
	vars     map[string]string
	params   Params
	who      principal
}

type handlerFunc func(r *reqCtx) (any, error)

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		s.serveAdmin(w, r)
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, "/api2/json")
	if !ok {
		writeError(w, &apiError{Status: 404, Message: "Not Found\n"})
		return
	}
	if p == "" {
		p = "/"
	}
	release, ok := s.takeWorker(r)
	if !ok {
		return
	}
	defer release()
	s.mu.Lock()
	lat := s.latency
	s.mu.Unlock()
	if lat > 0 {
		time.Sleep(lat)
	}
	data, err := s.serveAPI(r, p)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = plainErr("%s", err.Error())
		}
		if ae.Status == 401 && ae.Message == "Authentication failed!\n" && s.cfg.AuthFailDelay > 0 {
			time.Sleep(s.cfg.AuthFailDelay)
		}
		writeError(w, ae)
		return
	}
	b, _ := json.Marshal(map[string]any{"data": data})
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "max-age=0")
	w.Header().Set("Server", "pve-api-daemon/3.0")
	_, _ = w.Write(b)
}

// writeError sends PVE's error shape. The reason phrase is the first line of
// the message, which net/http cannot set, so the connection is hijacked.
func writeError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"data": nil}
	if e.Status != 401 {
		body["message"] = e.Message
	}
	if len(e.Errors) > 0 {
		body["errors"] = e.Errors
	}
	b, _ := json.Marshal(body)
	if (e.Status == 401 && e.Message == "Authentication failed!\n") || e.NoBody {
		b = nil
	}
	reason := strings.SplitN(strings.TrimRight(e.Message, "\n"), "\n", 2)[0]
	reason = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, reason)
	if hj, ok := w.(http.Hijacker); ok {
		conn, buf, err := hj.Hijack()
		if err == nil {
			defer func() { _ = conn.Close() }()
			_, _ = fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: %d\r\nConnection: close\r\nServer: pve-api-daemon/3.0\r\n\r\n", e.Status, reason, len(b))
			_, _ = buf.Write(b)
			_ = buf.Flush()
			return
		}
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

// admit runs PVE's checks between routing and the handler, in PVE's order: URI parameters
// against body parameters (merged into params), a token on a ticket-only path, the permission
// check with the raw parameters, the proxy to an offline node (595), then schema validation,
// which the target node does.
func (s *Server) admit(who principal, mi *pveschema.Method, path string, vars map[string]string, params Params) error {
	for k, v := range vars {
		if bv, ok := params[k]; ok && fmt.Sprint(bv) != v {
			return paramErr(map[string]string{k: "duplicate parameter (already defined in URI)"})
		}
		params[k] = v
	}
	if who.TokenID != "" && mi.AllowToken != nil && !bool(*mi.AllowToken) {
		return &apiError{Status: 403, Message: fmt.Sprintf("Permission check failed (URI '%s' not available with API token, need proper ticket.)\n", path)}
	}
	if !who.isRoot() {
		if !mi.HasPermissions {
			return &apiError{Status: 403, Message: "Permission check failed (user != root@pam)\n"}
		}
		if mi.Check != nil {
			if err := s.st.evalCheck(who, mi.Check, params, true); err != nil {
				return err
			}
		}
	}
	if err := s.proxyCheck(mi, params); err != nil {
		return err
	}
	if errs := s.schema.Validate(mi.Parameters, params); len(errs) > 0 {
		return paramErr(errs)
	}
	return nil
}

func (s *Server) serveAPI(r *http.Request, path string) (any, error) {
	method := r.Method
	// 1. authentication
	who, aerr := s.authenticate(r)
	// 2. route lookup
	tmpl, vars, found := s.schema.Match(path)
	var mi *pveschema.Method
	if found {
		mi = s.schema.Method(tmpl, method)
	}
	key := method + " " + tmpl
	if mi == nil {
		key = method + " ?"
	}
	params, perr := parseParams(r)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests[key]++
	if aerr != nil && (mi == nil || mi.User != "world") {
		return nil, aerr
	}
	if mi == nil {
		return nil, &apiError{Status: 501, Message: fmt.Sprintf("Method '%s %s' not implemented\n", method, path)}
	}
	isWrite := method == "POST" || method == "PUT" || method == "DELETE"
	if isWrite {
		s.stats.Writes++
	}
	s.advanceLocked()
	if f := s.matchFault(method, tmpl); f != nil {
		return nil, &apiError{Status: f.Status, Message: strings.TrimSuffix(f.Message, "\n") + "\n"}
	}
	if perr != nil {
		return nil, perr
	}
	// 3.-6. URI parameters, allowtoken, permissions, schema
	if err := s.admit(who, mi, path, vars, params); err != nil {
		return nil, err
	}
	// 7. handler
	h := s.handlers[method+" "+tmpl]
	if h == nil {
		return nil, &apiError{Status: 501, Message: fmt.Sprintf("Method '%s %s' not implemented\n", method, path)}
	}
	rc := &reqCtx{method: method, template: tmpl, path: path, vars: vars, params: params, who: who}
	if isWrite {
		s.digests = nil
	}
	// the handler, unless pmxcfs is read-only for lack of quorum: the one gate for every write (quorum.go)
	data, err := s.quorumGate(rc)
	if data == nil && err == nil {
		data, err = h(rc)
	}
	if isWrite {
		s.digests = nil
	}
	if err == nil && isWrite {
		s.stats.WritesAccepted++
		s.stats.AcceptedWrites[key]++
		s.recordWriteLocked(rc)
	}
	if s.taskDur == 0 {
		s.advanceLocked()
	}
	if err == nil && isWrite && s.cfg.StateFile != "" {
		_ = s.st.save(s.cfg.StateFile) // best effort, so a crash keeps the demo state
	}
	return data, err
}

func (s *Server) matchFault(method, tmpl string) *Fault {
	for _, f := range s.faults {
		if f.Method != method || f.Path != tmpl {
			continue
		}
		f.seen++
		if f.Nth == 0 || f.seen == f.Nth {
			return f
		}
	}
	return nil
}

func (s *Server) authenticate(r *http.Request) (principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		s.mu.Lock()
		who, ok, err := s.ticketAuth(r)
		s.mu.Unlock()
		if ok {
			return who, err
		}
		return principal{}, &apiError{Status: 401, Message: "No ticket\n"}
	}
	fail := &apiError{Status: 401, Message: "Authentication failed!\n"}
	if v, ok := strings.CutPrefix(h, nodeRootScheme); ok {
		// a node's own pvesh or qm: root@pam itself, not a token of it
		if v != s.nodeSecret {
			return principal{}, fail
		}
		return principal{User: "root@pam"}, nil
	}
	v, ok := strings.CutPrefix(h, "PVEAPIToken=")
	if !ok {
		v, ok = strings.CutPrefix(h, "PVEAPIToken ")
	}
	if !ok {
		return principal{}, fail
	}
	full, secret, ok := strings.Cut(v, "=")
	if !ok {
		return principal{}, fail
	}
	user, tid, ok := strings.Cut(full, "!")
	if !ok {
		return principal{}, fail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.st.Users[user]
	if u == nil || !u.Enable {
		return principal{}, fail
	}
	t := u.Tokens[tid]
	now := time.Now().Unix()
	if t == nil || t.Secret != secret || (t.Expire != 0 && t.Expire < now) || (u.Expire != 0 && u.Expire < now) {
		return principal{}, fail
	}
	return principal{User: user, TokenID: tid, Privsep: t.Privsep}, nil
}

// nodeRootScheme is the Authorization scheme of root@pam on a node (pvesim's own, not PVE's): a
// real node's pvesh and qm call the API in-process as root@pam, which no API token is (PVE's
// "only root can set" checks want root@pam itself).
const nodeRootScheme = "PVESimNodeRoot "

// NodeRootAuth is the Authorization header value that makes a call root@pam's, as a node's own
// pvesh (package pvesim/pvesh) makes it: what the hookscripts pvesim runs get.
func (s *Server) NodeRootAuth() string { return nodeRootScheme + s.nodeSecret }

// WriteTokenFile writes the root token for scripts as JSON (mode 0600), with
// the connection options' names: api_host, api_port, api_user, api_token_id,
// api_token_secret, ca_path, plus full_token_id, url, and pvesh_env (the environment of a
// node's pvesh: root@pam itself, which may set root-only options such as hookscript).
func (s *Server) WriteTokenFile(path string) error {
	id, secret := s.RootToken()
	user, tid, _ := strings.Cut(id, "!")
	b, err := json.MarshalIndent(map[string]any{
		"api_host": s.Host(), "api_port": s.Port(), "api_user": user, "api_token_id": tid,
		"api_token_secret": secret, "full_token_id": id, "url": s.URL(), "ca_path": s.CAFile(),
		"validate_certs": s.CAFile() != "",
		// a node's pvesh (this binary called as pvesh) runs as root@pam with this environment
		"pvesh_env": map[string]string{pvesh.EnvURL: s.URL(), pvesh.EnvAuth: s.NodeRootAuth(), pvesh.EnvCA: s.CAFile()},
	}, "", " ")
	if err != nil {
		return fmt.Errorf("encode token file: %w", err)
	}
	// Written whole then renamed: scripts poll for a non-empty file.
	f, err := os.CreateTemp(filepath.Dir(path), ".pvesim-token-*")
	if err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write token file: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write token file: %w", err)
	}
	return nil
}
