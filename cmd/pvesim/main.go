// Command pvesim runs the Proxmox VE 9 API simulator for playbooks, molecule
// and the demo. It prints one ready line and exits cleanly on SIGTERM/SIGINT.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesh"
)

func main() {
	// Called as pvesh (the link a hookscript finds on its PATH): the node's pvesh, talking to the
	// simulator as root (internal/pvesim/pvesh).
	if filepath.Base(os.Args[0]) == "pvesh" {
		os.Exit(pvesh.Main(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	// Called as lvcreate: the node $PVESIM_NODE's lvcreate, which makes a tenant's thin pool in the
	// node's volume group (the hypervisor play's one LVM call; the lab puts it on the nodes' PATH).
	if filepath.Base(os.Args[0]) == "lvcreate" {
		os.Exit(pvesh.LVCreate(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	fs := flag.NewFlagSet("pvesim", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:8006", "loopback address to listen on (host:port; port 0 picks a free one)")
	config := fs.String("config", "", "YAML config: nodes, storages, templates (default: one node dv02hyp002p02, template 9000)")
	caOut := fs.String("ca-out", "", "write the CA certificate (PEM) here (default: a temp file, shown in the ready line)")
	tokenOut := fs.String("token-out", "", "write root@pam!sim connection data and secret as JSON here (mode 0600)")
	state := fs.String("state", "", "JSON state file: loaded at start if present, saved after each accepted write and on exit")
	seed := fs.Uint64("seed", 1, "seed for generated MACs, pids and lock tokens (0: random)")
	latency := fs.Duration("latency", 0, "delay added to every API request (e.g. 20ms)")
	taskDur := fs.Duration("task-duration", 0, "how long tasks stay running (e.g. 500ms)")
	insecure := fs.Bool("insecure-http", false, "serve plain HTTP instead of HTTPS (tests only)")
	apiWorkers := fs.Int("api-workers", 0, "API calls served at once, the rest queued (PVE's pveproxy: 3; 0: no queue)")
	authDelay := fs.Duration("auth-fail-delay", 0, "delay before a 401 for a bad token (a real node waits 3s)")
	renderDir := fs.String("render-dir", "", "after each SDN apply write every node's files here, atomically:\nDIR/<node>/etc/network/interfaces.d/sdn, DIR/<node>/etc/frr/frr.conf and\nDIR/<node>/etc/frr/daemons.pve (the fabricd= and ospfd= lines PVE sets);\nalso each node's disk for hookscripts: local:snippets/<name> runs from\nDIR/<node>/var/lib/vz/snippets/<name>, with this binary as pvesh on its PATH")
	reloadCmd := fs.String("reload-command", "", "after writing a node's files run PATH <node> <DIR/node> (no shell; needs\n--render-dir); exit 0 = reloaded, else the node's SDN status becomes error;\noutput goes to the apply task log. Without it reloads succeed unless a\nreload fault is injected (/_sim/faults reload_faults)")
	reloadTimeout := fs.Duration("reload-timeout", 0, "time limit of one --reload-command run (default 2m)")
	fs.Usage = func() {
		_, _ = fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])

	cfg := pvesim.DefaultConfig()
	if *config != "" {
		var err error
		if cfg, err = pvesim.LoadConfig(*config); err != nil {
			fail(err)
		}
	}
	cfg.Listen, cfg.CAOut, cfg.StateFile = *listen, *caOut, *state
	cfg.Seed, cfg.Latency, cfg.TaskDuration, cfg.InsecureHTTP, cfg.AuthFailDelay = *seed, *latency, *taskDur, *insecure, *authDelay
	if *apiWorkers != 0 {
		cfg.APIWorkers = *apiWorkers
	}
	if *renderDir != "" {
		cfg.RenderDir = *renderDir
	}
	if exe, err := os.Executable(); err == nil && cfg.Pvesh == "" {
		cfg.Pvesh = exe // the hookscripts' pvesh: this binary, called as pvesh
	}
	if *reloadCmd != "" {
		cfg.ReloadCommand = *reloadCmd
	}
	if *reloadTimeout != 0 {
		cfg.ReloadTimeout = *reloadTimeout
	}

	// Before the ready line: a supervisor may signal as soon as it reads it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	srv, err := pvesim.Start(cfg)
	if err != nil {
		fail(err)
	}
	if *tokenOut != "" {
		if err := srv.WriteTokenFile(*tokenOut); err != nil {
			_ = srv.Close()
			fail(err)
		}
	}
	id, _ := srv.RootToken()
	fmt.Printf("pvesim ready url=%s ca=%s token=%s pid=%d\n", srv.URL(), srv.CAFile(), id, os.Getpid())

	<-sig
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case err := <-done:
		if err != nil {
			fail(err)
		}
	case <-time.After(10 * time.Second):
		fail(fmt.Errorf("shutdown timed out"))
	}
}

// usage lists the admin API beside the flags: what a test or the demo may call (no authentication;
// loopback only), and the two commands this binary is when called by another name.
const usage = `Usage: pvesim [flags]

Proxmox VE 9 API simulator: the API at <url>/api2/json (API tokens only).

Admin API (no authentication, loopback only; JSON bodies):
  GET  /_sim/stats                      request counts by method, path and status
  POST /_sim/stats/reset                zero them
  POST /_sim/reset                      back to the start state
  POST /_sim/faults                     {"faults", "task_faults", "reload_faults", "hold_sdn_lock_seconds",
                                        "latency_ms", "task_duration_ms", "api_workers"}: injected failures and
                                        delays, and PVE's pool of API workers (3 on a node; 0 queues nothing)
  GET  /_sim/api-workers                the pool's size and, per user, its calls and the seconds they waited
  GET  /_sim/nodes/<node>/files/<path>  a node's file as the last SDN apply wrote it (etc/network/interfaces.d/sdn,
                                        etc/frr/frr.conf, etc/frr/daemons.pve)
  POST /_sim/nodes/<node>/offline       {"reason", "since_seconds"}: the node leaves the membership
  POST /_sim/nodes/<node>/online        {"boot"}: it is back (boot, the default, runs pve-sdn-commit)
  POST /_sim/disks/<node>               a node's disks: {"vg", "vg_size"}, a thin pool {"vg", "thinpool", "size",
                                        "used", "remove"} (made when missing, the group grown to hold it), or
                                        {"vg", "thinpool", "size", "create": true} as lvcreate makes it (refused
                                        without the free space), or a file system {"path", "size", "used"}
  POST /_sim/privileges/drop            {"privileges"}: every role loses them, as on a PVE release without them
  GET  /_sim/quorum                     corosync's votes and quorum
  POST /_sim/qdevice/down, /up          the QDevice's host goes away, comes back

Called as pvesh: a node's pvesh (PVESIM_URL, PVESIM_AUTH, PVESIM_CA). Called as lvcreate: the node
PVESIM_NODE's lvcreate --type thin-pool -L <size> -n <name> <vg>.

Flags:
`

func fail(err error) {
	fmt.Fprintln(os.Stderr, "pvesim:", err)
	os.Exit(1)
}
