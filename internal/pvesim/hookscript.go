package pvesim

// Hookscripts: a VM's `hookscript` (a snippet volume, root's to set) runs at start as PVE runs it
// (qemu-server QemuServer.pm vm_start_nolock: exec_hookscript pre-start with stop_on_error, then
// post-start; pve-guest-common GuestHelpers.pm check_hookscript and exec_hookscript).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/pvesim/pvesh"
)

// hookTimeout bounds one hookscript run; PVE sets none, a test should not hang on a script.
const hookTimeout = 5 * time.Minute

// hook is a resolved hookscript: the volume, its path on the node and the file that holds it.
type hook struct {
	volid, nodePath, hostPath string
}

// resolveHook finds a hookscript volume's file on a node's disk: <RenderDir>/<node>/<path>, the
// path being the storage's (the `local` dir storage: /var/lib/vz/snippets/<name>). Called with the
// lock held.
func (s *Server) resolveHook(node, volid string) (hook, error) {
	store, rel, ok := strings.Cut(volid, ":")
	name, isSnippet := strings.CutPrefix(rel, "snippets/")
	if !ok || !isSnippet {
		return hook{}, fmt.Errorf("'%s' is not in the snippets directory", volid)
	}
	sc, found := s.st.Storages[store]
	if !found {
		return hook{}, fmt.Errorf("storage '%s' does not exist", store)
	}
	if sc.Type != "dir" || store != "local" {
		return hook{}, fmt.Errorf("pvesim: hookscripts are run from storage 'local' (/var/lib/vz) only, not '%s'", store)
	}
	h := hook{volid: volid, nodePath: "/var/lib/vz/snippets/" + name}
	if s.cfg.RenderDir != "" {
		h.hostPath = filepath.Join(s.cfg.RenderDir, node, h.nodePath)
	}
	return h, nil
}

// pveshDir is a directory holding `pvesh`, the simulator's own (Config.Pvesh), for a
// hookscript's PATH; "" when there is none. Called with the lock held.
func (s *Server) pveshDir() (string, error) {
	if s.cfg.Pvesh == "" {
		return "", nil
	}
	dir := filepath.Join(s.tmpDir, "hook-bin")
	link := filepath.Join(dir, "pvesh")
	if _, err := os.Lstat(link); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("pvesim: the hookscripts' pvesh: %w", err)
	}
	if err := os.Symlink(s.cfg.Pvesh, link); err != nil {
		return "", fmt.Errorf("pvesim: the hookscripts' pvesh: %w", err)
	}
	return dir, nil
}

// runHook runs `<script> <vmid> <phase>` as exec_hookscript does, outside the server lock: the
// script's output lines (PVE logs them in the task) and, when it fails, exec_hookscript's
// message "hookscript error for <vmid> on <phase>: <check_hookscript's or run_command's error>".
func runHook(h hook, vmid int, phase string, env []string) ([]string, error) {
	wrap := func(err error) error { return hookErr(vmid, phase, err) }
	fi, err := os.Stat(h.hostPath)
	if h.hostPath == "" || err != nil || !fi.Mode().IsRegular() {
		return nil, wrap(fmt.Errorf("script '%s' does not exist", h.volid))
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return nil, wrap(fmt.Errorf("script '%s' is not executable", h.volid))
	}
	ctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.hostPath, strconv.Itoa(vmid), phase)
	cmd.Env, cmd.Dir = env, "/"
	out, err := cmd.CombinedOutput()
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	if err == nil {
		return lines, nil
	}
	// PVE::Cmd::run's messages (pve-common src/PVE/Cmd.pm), the command as PVE::Cmd::to_string quotes it.
	cmdline := strings.Join([]string{shellQuote(h.nodePath), strconv.Itoa(vmid), shellQuote(phase)}, " ")
	var exit *exec.ExitError
	reason := "failed to execute"
	if errors.As(err, &exit) {
		if code := exit.ExitCode(); code >= 0 {
			reason = fmt.Sprintf("exit code %d", code)
		} else if ctx.Err() != nil {
			reason = "got timeout"
		} else {
			reason = "got signal " + strings.TrimPrefix(exit.String(), "signal: ")
		}
	}
	return lines, wrap(fmt.Errorf("command '%s' failed: %s", cmdline, reason))
}

// hookErr is exec_hookscript's "hookscript error for $vmid on $phase: $err\n" as a task's exit
// status shows it: $err ends in a newline, and fork_worker chomps one and turns the other into a
// space (pve-common RESTEnvironment.pm), so the status ends in a space.
func hookErr(vmid int, phase string, err error) error {
	return fmt.Errorf("hookscript error for %d on %s: %w ", vmid, phase, err)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_\-+=/:.,@%]+$`)

// shellQuote is String::ShellQuote's for one word: safe words as they are, others in single quotes.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hookEnv is a hookscript's environment: pvesim's own, its pvesh first on PATH, and what that
// pvesh needs to reach the simulator as root. Called with the lock held.
func (s *Server) hookEnv() ([]string, error) {
	dir, err := s.pveshDir()
	if err != nil {
		return nil, err
	}
	env := []string{pvesh.EnvURL + "=" + s.url, pvesh.EnvAuth + "=" + s.NodeRootAuth(), pvesh.EnvCA + "=" + s.caFile}
	path := dir
	for _, e := range os.Environ() {
		k, v, _ := strings.Cut(e, "=")
		switch k {
		case "PATH":
			path = strings.Trim(dir+string(os.PathListSeparator)+v, string(os.PathListSeparator))
		case pvesh.EnvURL, pvesh.EnvAuth, pvesh.EnvCA:
		default:
			env = append(env, e)
		}
	}
	return append(env, "PATH="+path), nil
}
