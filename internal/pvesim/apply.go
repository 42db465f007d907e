package pvesim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/deevnet/tenant/internal/sdnrender"
	"github.com/deevnet/tenant/internal/udiff"
)

// Node file paths a PVE node writes at SDN apply (daemons.pve holds only the
// two lines PVE sets in /etc/frr/daemons).
const (
	fileInterfaces = "/etc/network/interfaces.d/sdn"
	fileFRR        = "/etc/frr/frr.conf"
	fileDaemons    = "/etc/frr/daemons.pve"
)

var nodeFilePaths = []string{fileInterfaces, fileFRR, fileDaemons}

// defaultReloadTimeout bounds one node's --reload-command.
const defaultReloadTimeout = 2 * time.Minute

// nodeFiles is what one simulated node last wrote at apply, and how its
// reload went.
type nodeFiles struct {
	Version int               `json:"version"` // the running version the files were rendered from
	Files   map[string]string `json:"files"`   // path -> content
	Written int64             `json:"written"` // unix nanoseconds (the files' mtime)
	Reload  string            `json:"reload"`  // running | ok | error
	Error   string            `json:"error,omitempty"`
}

// ReloadFault makes the Nth reload of Node fail with Message (Nth counts
// from 1; 0 means every reload). It applies with and without --reload-command.
type ReloadFault struct {
	Node    string `json:"node"`
	Nth     int    `json:"nth"`
	Message string `json:"message"`
	seen    int
}

// FailReload registers a reload fault.
func (s *Server) FailReload(f ReloadFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reloadFaults = append(s.reloadFaults, &f)
}

func (s *Server) matchReloadFault(node string) *ReloadFault {
	for _, f := range s.reloadFaults {
		if f.Node != node {
			continue
		}
		f.seen++
		if f.Nth == 0 || f.seen == f.Nth {
			return f
		}
	}
	return nil
}

// NodeFile returns a node's running file as last written at apply.
func (s *Server) NodeFile(node, path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nf := s.st.SDN.NodeFiles[node]
	if nf == nil {
		return "", false
	}
	c, ok := nf.Files[path]
	return c, ok
}

// nodeSDNStatus is the node's SDN status as GET /nodes/{node}/sdn/zones
// reports it: pending while its files are older than the running config
// (or its reload has not finished), error after a failed reload.
func (s *Server) nodeSDNStatus(node string) string {
	sd := s.st.SDN
	nf := sd.NodeFiles[node]
	switch {
	case nf == nil || nf.Version < sd.Version || nf.Reload == "running":
		return "pending"
	case nf.Reload == "error":
		return "error"
	}
	return "available"
}

// applyRoutes: PUT /cluster/sdn applies the staged config; the dry-run shows what it would write.
func (s *Server) applyRoutes() routes {
	return routes{"PUT /cluster/sdn": s.sdnApply, "GET /cluster/sdn/dry-run": s.sdnDryRun}
}

func (s *Server) sdnApply(r *reqCtx) (any, error) {
	sd := s.st.SDN
	if err := s.checkLockToken(r.params, "could not commit SDN config"); err != nil {
		return nil, err
	}
	frr := hasFRR(sd.Running)
	sd.Running = sd.Current.clone()
	sd.Version++
	frr = frr || hasFRR(sd.Running)
	if r.params.Has("lock-token") && sd.Lock != nil && (!r.params.Has("release-lock") || r.params.Bool("release-lock")) {
		sd.Lock = nil
	}
	t := s.startTask(r, s.st.Nodes[0].Name, "reloadnetworkall", "", nil)
	// an offline node is tried and logged at once; the task ends OK all the same (nodestate.go)
	var reach []string
	for _, n := range s.st.Nodes {
		if s.st.offline(n.Name) != nil {
			s.reloadOffline(t, n.Name, frr)
		} else {
			reach = append(reach, n.Name)
		}
	}
	if s.cfg.ReloadCommand == "" {
		t.finish = func() error { s.reloadInTask(t, sd, reach); return nil }
		return t.UPID, nil
	}
	s.reloadByCommand(t, reach)
	return t.UPID, nil
}

// hasFRR is pve-network's running_config_has_frr: a controller or a fabric needs FRR.
func hasFRR(c sdnConfig) bool {
	return len(c["controllers"]) > 0 || len(c["fabrics"]) > 0
}

// reloadInTask is the apply task without a reload command: each node writes its files and
// reloads when the task runs; an injected task fault leaves every node on its old files (pending).
func (s *Server) reloadInTask(t *Task, sd *sdnState, nodes []string) {
	for _, n := range nodes {
		s.writeNodeFiles(t, n)
		if nf := sd.NodeFiles[n]; nf.Reload == "running" {
			if f := s.matchReloadFault(n); f != nil {
				s.reloadDone(t, n, nf.Version, errors.New(f.Message), nil)
			} else {
				s.reloadDone(t, n, nf.Version, nil, nil)
			}
		}
	}
}

// reloadJob is one node's reload by the reload command.
type reloadJob struct {
	node, dir string
	version   int
	fault     *ReloadFault
}

// reloadByCommand writes the nodes' files now and runs their reload commands outside the
// server lock; the task stays running until they are done.
func (s *Server) reloadByCommand(t *Task, nodes []string) {
	t.busy = true
	var jobs []reloadJob
	for _, n := range nodes {
		s.writeNodeFiles(t, n)
		nf := s.st.SDN.NodeFiles[n]
		if nf.Reload != "running" {
			continue
		}
		jobs = append(jobs, reloadJob{n, filepath.Join(s.cfg.RenderDir, n), nf.Version, s.matchReloadFault(n)})
	}
	timeout := s.cfg.ReloadTimeout
	if timeout <= 0 {
		timeout = defaultReloadTimeout
	}
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		errs, outs := s.runReloads(jobs, timeout)
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, j := range jobs {
			s.reloadDone(t, j.node, j.version, errs[i], outs[i])
		}
		t.busy = false
		s.advanceLocked()
	}()
}

// runReloads runs the nodes' reloads in parallel, as PVE's apply starts every node's reload at
// once; an injected fault stands for the command's failure.
func (s *Server) runReloads(jobs []reloadJob, timeout time.Duration) ([]error, [][]byte) {
	errs, outs := make([]error, len(jobs)), make([][]byte, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		if j.fault != nil {
			errs[i] = errors.New(j.fault.Message)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = runReload(s.cfg.ReloadCommand, j.node, j.dir, timeout)
		}()
	}
	wg.Wait()
	return errs, outs
}

// renderNode is what the renderer needs to know about a node.
func (s *Server) renderNode(name string) sdnrender.Node {
	n := sdnrender.Node{Name: name}
	for _, c := range s.st.Nodes {
		if c.Name == name {
			n.LocalIP = c.LocalIP
		}
	}
	return n
}

// writeNodeFiles renders node's files from the running config, keeps them
// as the node's running files, and writes them under --render-dir.
func (s *Server) writeNodeFiles(t *Task, node string) {
	sd := s.st.SDN
	if sd.NodeFiles == nil {
		sd.NodeFiles = map[string]*nodeFiles{}
	}
	t.Log = append(t.Log, fmt.Sprintf("%s: reloading network config", node))
	files := sdnrender.Render(sdnrender.FromObjects(sd.Running, sd.Current, sd.Version), s.renderNode(node))
	for _, w := range files.Warnings {
		t.Log = append(t.Log, fmt.Sprintf("%s: warning: %s", node, w))
	}
	nf := &nodeFiles{Version: sd.Version, Written: time.Now().UnixNano(), Reload: "running",
		Files: map[string]string{fileInterfaces: files.Interfaces, fileFRR: files.FRR, fileDaemons: files.Daemons()}}
	sd.NodeFiles[node] = nf
	if s.cfg.RenderDir == "" {
		return
	}
	for _, p := range nodeFilePaths {
		if err := writeFileAtomic(filepath.Join(s.cfg.RenderDir, node, p), nf.Files[p]); err != nil {
			nf.Reload, nf.Error = "error", err.Error()
			t.Log = append(t.Log, fmt.Sprintf("%s: %v", node, err))
			return
		}
	}
}

// reloadDone records a node's reload result, unless a newer apply has
// rendered the node again meanwhile.
func (s *Server) reloadDone(t *Task, node string, version int, err error, out []byte) {
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if l != "" {
			t.Log = append(t.Log, node+": "+l)
		}
	}
	nf := s.st.SDN.NodeFiles[node]
	if nf == nil || nf.Version != version {
		return
	}
	if err != nil {
		nf.Reload, nf.Error = "error", err.Error()
		t.Log = append(t.Log, fmt.Sprintf("%s: network reload failed: %v", node, err))
		return
	}
	nf.Reload, nf.Error = "ok", ""
}

// maxReloadOutput caps what one reload may add to the task log.
const maxReloadOutput = 64 << 10

// runReload runs `cmd node dir` without a shell, under a timeout.
func runReload(cmd, node, dir string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, cmd, node, dir)
	var buf limitedBuffer
	c.Stdout, c.Stderr = &buf, &buf
	c.WaitDelay = 5 * time.Second
	err := c.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("reload command timed out after %s", timeout)
	} else if err != nil {
		err = fmt.Errorf("reload command %s: %w", filepath.Base(cmd), err)
	}
	return buf.b.Bytes(), err
}

type limitedBuffer struct{ b bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxReloadOutput - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}

// writeFileAtomic writes content to a temp file next to path and renames it.
func writeFileAtomic(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.WriteString(content)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), 0o644)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// diffTime is GNU diff's header timestamp format.
const diffTime = "2006-01-02 15:04:05.000000000 -0700"

// sdnDryRun answers GET /cluster/sdn/dry-run: `diff -b -N -u` of the node's
// running files against what the current (pending) config would render,
// keeping the running version number; null when equal (NODE-RENDERING §5).
// Unlike PVE, every input is the pending config (PVE still reads running
// subnets and fabrics in places).
func (s *Server) sdnDryRun(r *reqCtx) (any, error) {
	node := r.params.Str("node")
	if !s.nodeExists(node) {
		return nil, plainErr("no such cluster node '%s'", node)
	}
	sd := s.st.SDN
	version := sd.Version
	if version == 0 {
		version = 1
	}
	files := sdnrender.Render(sdnrender.FromObjects(sd.Current, sd.Current, version), s.renderNode(node))
	now := time.Now()
	nf := sd.NodeFiles[node]
	diff := func(path, text string) any {
		live, mtime := "", time.Unix(0, 0).UTC()
		if nf != nil {
			if c, ok := nf.Files[path]; ok {
				live, mtime = c, time.Unix(0, nf.Written)
			}
		}
		d := udiff.Unified(live, text, udiff.Options{IgnoreSpaceChange: true,
			From: path + "\t" + mtime.Format(diffTime),
			To:   fmt.Sprintf("/proc/%d/fd/%d\t%s", s.st.NextPID+1, 3, now.Format(diffTime))})
		if d == "" {
			return nil
		}
		return d
	}
	return map[string]any{"frr-diff": diff(fileFRR, files.FRR), "interfaces-diff": diff(fileInterfaces, files.Interfaces)}, nil
}
