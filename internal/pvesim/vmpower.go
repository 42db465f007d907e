package pvesim

// VM power state, conversion to template and the guest agent.

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

func (s *Server) vmStatusCurrent(r *reqCtx, vm *VM) (any, error) {
	o := map[string]any{"status": vm.Status, "qmpstatus": vm.Status, "vmid": vm.VMID, "name": vm.Config["name"],
		"cpus": atoiSafe(firstNonEmpty(vm.Config["cores"], "1")), "maxmem": int64(atoiSafe(firstNonEmpty(vm.Config["memory"], "512"))) << 20,
		"mem": 0, "maxdisk": 0, "uptime": 0, "ha": map[string]any{"managed": 0}}
	if vm.Status == "running" {
		o["uptime"] = time.Now().Unix() - vm.Started
		o["pid"] = 10000 + vm.VMID
		o["mem"] = int64(atoiSafe(firstNonEmpty(vm.Config["memory"], "512"))) << 19
	}
	if vm.Lock != "" {
		o["lock"] = vm.Lock
	}
	if t := vm.Config["tags"]; t != "" {
		o["tags"] = t
	}
	if vm.Template {
		o["template"] = 1
	}
	if strings.HasPrefix(vm.Config["agent"], "1") || strings.Contains(vm.Config["agent"], "enabled=1") {
		o["agent"] = 1
	}
	return o, nil
}

// powerActions are the POST .../status/<action> endpoints, in PVE's index order.
var powerActions = []string{"start", "stop", "shutdown", "reboot", "reset"}

// vmPower is the handler of POST .../status/<action>.
func (s *Server) vmPower(action string) handlerFunc {
	return on(s.getVM, func(r *reqCtx, vm *VM) (any, error) {
		if vm.Lock != "" && !r.params.Bool("skiplock") {
			return nil, plainErr("VM is locked (%s)", vm.Lock)
		}
		if (action == "reboot" || action == "reset") && vm.Status != "running" {
			return nil, plainErr("VM %d not running", vm.VMID)
		}
		if action == "start" && vm.Config["template"] == "1" {
			return nil, plainErr("you can't start a vm if it's a template")
		}
		id := strconv.Itoa(vm.VMID)
		if action == "start" {
			if volid := startConfig(vm)["hookscript"]; volid != "" {
				return s.startWithHooks(r, vm, volid)
			}
		}
		t := s.startTask(r, vm.Node, "qm"+action, id, func() error {
			switch action {
			case "start":
				return s.startVM(vm)
			case "stop", "shutdown":
				vm.Status = "stopped"
			case "reboot", "reset":
				vm.Started = time.Now().Unix()
			}
			return nil
		})
		return t.UPID, nil
	})
}

// startConfig is the config a start runs with: pending changes applied.
func startConfig(vm *VM) map[string]string { return vm.effective() }

// startVM is a start's effect, with the lock held.
func (s *Server) startVM(vm *VM) error {
	if vm.Status == "running" {
		return fmt.Errorf("VM %d already running", vm.VMID)
	}
	vm.Status, vm.Started = "running", time.Now().Unix()
	// pending changes are applied at start
	vm.Config = startConfig(vm)
	vm.Pending, vm.PendDel = nil, nil
	if err := s.checkBridges(vm); err != nil {
		vm.Status, vm.Started = "stopped", 0
		return err
	}
	return nil
}

// startWithHooks is the start of a VM with a hookscript, as vm_start_nolock runs it: pre-start
// (a failure ends the task with exec_hookscript's message, the VM stays stopped), the start,
// post-start (a failure is a warning). The script runs outside the server lock, so that it can
// call the API (its pvesh); the task stays running meanwhile.
func (s *Server) startWithHooks(r *reqCtx, vm *VM, volid string) (any, error) {
	h, herr := s.resolveHook(vm.Node, volid)
	env, eerr := s.hookEnv()
	if herr == nil {
		herr = eerr
	}
	t := s.startTask(r, vm.Node, "qmstart", strconv.Itoa(vm.VMID), nil)
	t.busy = true
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		// with the lock held; the hookscript runs without it
		unlocked := func(f func()) { s.mu.Unlock(); defer s.mu.Lock(); f() }
		err := herr
		if vm.Status == "running" { // vm_start_nolock checks it before the hookscript (QemuServer.pm:5531)
			err = fmt.Errorf("VM %d already running", vm.VMID)
		} else if err != nil {
			err = hookErr(vm.VMID, "pre-start", err)
		} else {
			var out []string
			unlocked(func() { out, err = runHook(h, vm.VMID, "pre-start", env) })
			t.Log = append(t.Log, out...)
		}
		if err == nil {
			err = s.startVM(vm)
		}
		if err == nil {
			var out []string
			var perr error
			unlocked(func() { out, perr = runHook(h, vm.VMID, "post-start", env) })
			t.Log = append(t.Log, out...)
			if perr != nil {
				// exec_hookscript without stop_on_error: Perl's own warn (no handler counts it), so
				// the line is in the task log and the task still ends OK
				t.Log = append(t.Log, strings.TrimSpace(perr.Error()))
			}
		}
		t.finish = func() error { return err }
		t.busy = false
		s.advanceLocked()
	}()
	return t.UPID, nil
}

func (s *Server) vmTemplate(r *reqCtx, vm *VM) (any, error) {
	if vm.Status == "running" {
		return nil, plainErr("you can't convert a running VM to a template")
	}
	t := s.startTask(r, vm.Node, "qmtemplate", strconv.Itoa(vm.VMID), func() error {
		vm.Config["template"], vm.Template = "1", true
		return nil
	})
	return t.UPID, nil
}

// vmAgentInterfaces answers like a guest agent that applied the cloud-init
// network config: eth<N> with the MAC of net<N> and the static ipconfig<N>.
func (s *Server) vmAgentInterfaces(r *reqCtx, vm *VM) (any, error) {
	if a := vm.Config["agent"]; a == "" || strings.HasPrefix(a, "0") || strings.Contains(a, "enabled=0") {
		return nil, plainErr("No QEMU guest agent configured")
	}
	if vm.Status != "running" {
		return nil, plainErr("VM %d is not running", vm.VMID)
	}
	ifaces := []map[string]any{{"name": "lo", "hardware-address": "00:00:00:00:00:00",
		"ip-addresses": []map[string]any{{"ip-address": "127.0.0.1", "ip-address-type": "ipv4", "prefix": 8}}}}
	for _, k := range sortedKeys(vm.Config) {
		if !netKeyRe.MatchString(k) {
			continue
		}
		idx := strings.TrimPrefix(k, "net")
		addrs := []map[string]any{}
		for _, part := range strings.Split(vm.Config["ipconfig"+idx], ",") {
			if v, ok := strings.CutPrefix(part, "ip="); ok {
				if p, err := netip.ParsePrefix(v); err == nil {
					addrs = append(addrs, map[string]any{"ip-address": p.Addr().String(), "ip-address-type": "ipv4", "prefix": p.Bits()})
				}
			}
		}
		ifaces = append(ifaces, map[string]any{"name": "eth" + idx, "hardware-address": strings.ToLower(parseNet(vm.Config[k])["macaddr"]), "ip-addresses": addrs})
	}
	return map[string]any{"result": ifaces}, nil
}
