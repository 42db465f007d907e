package vm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
	"github.com/deevnet/tenant/internal/vm"
)

const (
	node   = "dv02hyp002p02"
	sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuBgRI8GCpQ1Li2FMavVoVf+RzPLi477unNJvv4IwTL ops@deevnet"
)

// simEnv is an in-process pvesim with tenant tdemo's pool and VNet, and a root client to look
// at the result from outside the module.
type simEnv struct {
	t    testing.TB
	srv  *pvesim.Server
	root *pve.Client
	// The module's credential; root@pam!sim when empty.
	tokenID, tokenSecret string
}

func newSim(t testing.TB) *simEnv {
	t.Helper()
	srv, root := pvesimtest.Start(t, pvesim.DefaultConfig())
	e := &simEnv{t: t, srv: srv, root: root}
	e.tenantInfra("tenant-tdemo", "tn01", "tn01v0", 20016)
	srv.ResetStats()
	return e
}

// tenantInfra makes what onboarding and tenant_vrf make: the pool and the VNet (applied).
func (e *simEnv) tenantInfra(pool, zone, vnet string, tag int) {
	ctx := context.Background()
	e.must(e.root.Post(ctx, "/pools", map[string]any{"poolid": pool}, nil))
	e.must(e.root.Post(ctx, "/cluster/sdn/zones", map[string]any{"zone": zone, "type": "simple"}, nil))
	e.must(e.root.Post(ctx, "/cluster/sdn/vnets", map[string]any{"vnet": vnet, "zone": zone, "tag": tag}, nil))
	var upid string
	e.must(e.root.Put(ctx, "/cluster/sdn", nil, &upid))
	if upid != "" {
		e.must(e.root.WaitTask(ctx, upid))
	}
}

func (e *simEnv) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// run executes tenant_vm with args through module.Execute, the way Ansible would.
func (e *simEnv) run(args map[string]any, check, diff bool) (map[string]any, int) {
	e.t.Helper()
	id, secret := e.srv.RootToken()
	if e.tokenID != "" {
		id, secret = e.tokenID, e.tokenSecret
	}
	all := map[string]any{
		"api_host": e.srv.Host(), "api_port": e.srv.Port(), "api_user": strings.Split(id, "!")[0], "api_token_id": id,
		"api_token_secret": secret, "ca_path": e.srv.CAFile(),
		"name": "tdemo", "index": 1, "template": "9000",
		"_ansible_check_mode": check, "_ansible_diff": diff,
	}
	for k, v := range args {
		all[k] = v
	}
	return moduletest.Execute(e.t, vm.Module(), all)
}

func (e *simEnv) config(vmid int) map[string]any {
	e.t.Helper()
	var cfg map[string]any
	e.must(e.root.Get(context.Background(), fmt.Sprintf("/nodes/%s/qemu/%d/config", node, vmid), nil, &cfg))
	return cfg
}

func (e *simEnv) exists(vmid int) bool {
	var cfg map[string]any
	return e.root.Get(context.Background(), fmt.Sprintf("/nodes/%s/qemu/%d/config", node, vmid), nil, &cfg) == nil
}

func (e *simEnv) status(vmid int) string {
	e.t.Helper()
	var st map[string]any
	e.must(e.root.Get(context.Background(), fmt.Sprintf("/nodes/%s/qemu/%d/status/current", node, vmid), nil, &st))
	return fmt.Sprint(st["status"])
}

func vmsOf(t testing.TB, res map[string]any) []map[string]any {
	t.Helper()
	l, _ := res["vms"].([]any)
	out := make([]map[string]any, len(l))
	for i, x := range l {
		out[i], _ = x.(map[string]any)
	}
	return out
}

var tdemo = map[string]any{
	"count": 1, "cores": 2, "memory": 1024, "disk": "8G", "ciuser": "debian",
	"sshkeys": []any{sshKey}, "cipassword": "hunter2-not-for-logs",
}

func TestCreateCheckDiffIdempotentRebuildDestroy(t *testing.T) {
	e := newSim(t)

	// Check mode: says what it would do, writes nothing.
	res, code := e.run(tdemo, true, true)
	if code != 0 || res["changed"] != true {
		t.Fatalf("check mode: code %d, %v", code, res)
	}
	if w := e.srv.Stats().Writes; w != 0 {
		t.Fatalf("check mode sent %d writes", w)
	}
	diff, _ := res["diff"].(map[string]any)
	after, _ := diff["after"].(map[string]any)
	if after["ipconfig0"] != "ip=10.20.129.10/24,gw=10.20.129.1" || after["net0"] != "virtio,bridge=tn01v0" {
		t.Fatalf("check-mode diff after = %v", after)
	}
	if e.exists(10101) {
		t.Fatal("check mode created the VM")
	}

	// Create.
	res, code = e.run(tdemo, false, true)
	if code != 0 || res["changed"] != true {
		t.Fatalf("create: code %d, %v", code, res)
	}
	cfg := e.config(10101)
	if cfg["ipconfig0"] != "ip=10.20.129.10/24,gw=10.20.129.1" {
		t.Errorf("ipconfig0 = %v", cfg["ipconfig0"])
	}
	nic := vm.ParseNIC(fmt.Sprint(cfg["net0"]))
	if nic.Bridge != "tn01v0" || nic.Model != "virtio" || nic.MAC == "" {
		t.Errorf("net0 = %v", cfg["net0"])
	}
	if cfg["name"] != "tdemo-1" || cfg["nameserver"] != "10.20.99.1" || cfg["searchdomain"] != "tdemo.mobile.deevnet.net" ||
		cfg["ciuser"] != "debian" || cfg["tags"] != "tenant-tdemo" {
		t.Errorf("config = %v", cfg)
	}
	if s := fmt.Sprint(cfg["sshkeys"]); !strings.Contains(s, "ssh-ed25519%20AAAA") || strings.Contains(s, "+") {
		t.Errorf("sshkeys stored as %q, want percent-encoded with %%20", s)
	}
	if !strings.Contains(fmt.Sprint(cfg["scsi0"]), "size=8G") {
		t.Errorf("scsi0 = %v, want grown to 8G", cfg["scsi0"])
	}
	if st := e.status(10101); st != "running" {
		t.Errorf("status = %s", st)
	}
	out, _ := json.Marshal(res)
	if strings.Contains(string(out), "hunter2") {
		t.Fatalf("cipassword leaked into the result: %s", out)
	}
	mac := nic.MAC

	// Second run: nothing to do, zero writes, in check mode and for real.
	for _, check := range []bool{true, false} {
		e.srv.ResetStats()
		res, code = e.run(tdemo, check, true)
		if code != 0 || res["changed"] != false {
			t.Fatalf("second run (check=%v): code %d, %v", check, code, res)
		}
		if w := e.srv.Stats().Writes; w != 0 {
			t.Fatalf("second run (check=%v) sent %d writes: %v", check, w, e.srv.Stats().Requests)
		}
	}

	// A drifted key is put back, and only that key; the MAC stays.
	e.must(e.root.Put(context.Background(), fmt.Sprintf("/nodes/%s/qemu/10101/config", node),
		map[string]any{"ipconfig0": "ip=10.20.129.99/24,gw=10.20.129.1", "net0": "virtio=" + mac + ",bridge=vmbr0"}, nil))
	res, code = e.run(tdemo, false, true)
	v := vmsOf(t, res)
	if code != 0 || res["changed"] != true || len(v) != 1 {
		t.Fatalf("drift: code %d, %v", code, res)
	}
	var keys []string
	for _, c := range v[0]["changes"].([]any) {
		keys = append(keys, c.(map[string]any)["key"].(string))
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"ipconfig0", "net0"}) {
		t.Errorf("drift changes = %v", keys)
	}
	if got := vm.ParseNIC(fmt.Sprint(e.config(10101)["net0"])).MAC; got != mac {
		t.Errorf("MAC changed from %s to %s", mac, got)
	}

	// Rebuild: always a change, a fresh clone, running again.
	rebuild := map[string]any{"vms": []any{map[string]any{"state": "rebuilt"}}, "cores": 2, "memory": 1024}
	for k, v := range tdemo {
		if k != "count" {
			rebuild[k] = v
		}
	}
	res, code = e.run(rebuild, false, false)
	v = vmsOf(t, res)
	if code != 0 || res["changed"] != true {
		t.Fatalf("rebuild: code %d, %v", code, res)
	}
	if got := fmt.Sprint(v[0]["actions"]); got != "[stop destroy clone config resize start]" {
		t.Errorf("rebuild actions = %s", got)
	}
	if e.status(10101) != "running" || e.config(10101)["ipconfig0"] != "ip=10.20.129.10/24,gw=10.20.129.1" {
		t.Error("rebuilt VM is not converged")
	}

	// Destroy, then destroy again: the second is a no-op.
	gone := map[string]any{"count": 1, "state": "absent"}
	res, code = e.run(gone, false, true)
	if code != 0 || res["changed"] != true || e.exists(10101) {
		t.Fatalf("absent: code %d, %v", code, res)
	}
	e.srv.ResetStats()
	res, code = e.run(gone, false, true)
	if code != 0 || res["changed"] != false || e.srv.Stats().Writes != 0 {
		t.Fatalf("second absent: code %d, writes %d, %v", code, e.srv.Stats().Writes, res)
	}
}

func TestFaultsLeaveAStateTheNextRunConverges(t *testing.T) {
	// Each case is a request fault or a task fault; the run must fail with its message.
	cases := []struct {
		name  string
		fault pvesim.Fault
		task  pvesim.TaskFault
	}{
		{name: "clone request refused", fault: pvesim.Fault{Method: "POST", Path: "/nodes/{node}/qemu/{vmid}/clone", Nth: 1, Status: 500, Message: "storage 'local-lvm' is busy"}},
		{name: "clone task fails", task: pvesim.TaskFault{Type: "qmclone", Nth: 1, ExitStatus: "clone failed: lvcreate timed out"}},
		{name: "config refused after clone", fault: pvesim.Fault{Method: "PUT", Path: "/nodes/{node}/qemu/{vmid}/config", Nth: 1, Status: 500, Message: "got timeout"}},
		{name: "resize task fails", task: pvesim.TaskFault{Type: "resize", Nth: 1, ExitStatus: "resize failed: no space"}},
		{name: "start task fails", task: pvesim.TaskFault{Type: "qmstart", Nth: 1, ExitStatus: "start failed: QEMU exited with code 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newSim(t)
			want := c.task.ExitStatus
			if c.fault.Path != "" {
				e.srv.InjectFault(c.fault)
				want = c.fault.Message
			} else {
				e.srv.FailTask(c.task)
			}
			res, code := e.run(tdemo, false, false)
			if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), want) {
				t.Fatalf("faulted run: code %d, msg %v", code, res["msg"])
			}
			res, code = e.run(tdemo, false, false)
			if code != 0 || res["changed"] != true {
				t.Fatalf("recovery run: code %d, %v", code, res)
			}
			e.srv.ResetStats()
			res, code = e.run(tdemo, false, false)
			if code != 0 || res["changed"] != false || e.srv.Stats().Writes != 0 {
				t.Fatalf("run after recovery: code %d, writes %d, %v", code, e.srv.Stats().Writes, res)
			}
			if e.status(10101) != "running" || e.config(10101)["ipconfig0"] != "ip=10.20.129.10/24,gw=10.20.129.1" {
				t.Fatal("VM not converged after recovery")
			}
		})
	}
}

func TestRefusalsBeforeAnyWrite(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*simEnv)
		args  map[string]any
		want  string
	}{
		{"missing template", nil, map[string]any{"template": "8999"}, "template 8999 does not exist"},
		{"template by unknown name", nil, map[string]any{"template": "ubuntu-24"}, `template "ubuntu-24": no template of that name`},
		{"missing pool", func(e *simEnv) {
			e.must(e.root.Delete(context.Background(), "/pools/tenant-tdemo", nil, nil))
		}, nil, "pool tenant-tdemo"},
		{"missing VNet", func(e *simEnv) {
			e.must(e.root.Post(context.Background(), "/pools", map[string]any{"poolid": "tenant-tother"}, nil))
		}, map[string]any{"name": "tother", "index": 2}, "VNet tn02v0"},
		{"unknown storage", nil, map[string]any{"full": true, "storage": "nvme"}, `storage "nvme" is unknown`},
		{"storage without images", nil, map[string]any{"full": true, "storage": "local"}, `storage "local" does not hold VM images`},
		{"storage on a linked clone", nil, map[string]any{"storage": "local-lvm"}, "only allowed with full: true"},
		{"owner tag of another tenant", nil, map[string]any{"tags": []any{"web", "tenant-tother"}}, "tenant- tags are reserved"},
		{"disk without a unit", nil, map[string]any{"disk": "20"}, `disk "20": give a size with a unit`},
		{"disk of 0 GiB", nil, map[string]any{"disk": 0}, "disk 0: a number is GiB, a whole number from 1"},
		{"disk of 2.5 GiB", nil, map[string]any{"disk": 2.5}, "disk 2.5: a number is GiB"},
		{"disk a list", nil, map[string]any{"disk": []any{"8G"}}, "give a whole number of GiB (20) or a size with a unit"},
		{"index 0", nil, map[string]any{"index": 0}, "index"},
		{"parallel out of range", nil, map[string]any{"parallel": 64}, "parallel 64: must be in 1..16"},
		{"unowned vmid", func(e *simEnv) {
			var upid string
			e.must(e.root.Post(context.Background(), "/nodes/"+node+"/qemu/9000/clone", map[string]any{"newid": 10101, "name": "handmade"}, &upid))
			e.must(e.root.WaitTask(context.Background(), upid))
		}, nil, "exists outside pool tenant-tdemo"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newSim(t)
			if c.setup != nil {
				c.setup(e)
			}
			args := map[string]any{"count": 1}
			for k, v := range c.args {
				args[k] = v
			}
			if _, ok := c.args["vms"]; ok {
				delete(args, "count")
			}
			e.srv.ResetStats()
			res, code := e.run(args, false, false)
			if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), c.want) {
				t.Fatalf("code %d, msg %v; want %q", code, res["msg"], c.want)
			}
			t.Logf("msg: %v", res["msg"])
			if w := e.srv.Stats().Writes; w != 0 {
				t.Fatalf("%d writes before the refusal: %v", w, e.srv.Stats().Requests)
			}
		})
	}
}

func TestForeignTenantVMIsRefused(t *testing.T) {
	e := newSim(t)
	e.tenantInfra("tenant-tother", "tn02", "tn02v0", 20032)
	if r, code := e.run(map[string]any{"count": 1}, false, false); code != 0 {
		t.Fatal(r)
	}
	// The same vmid claimed by another tenant's run (a wrong index, say): refused, untouched.
	e.srv.ResetStats()
	res, code := e.run(map[string]any{"name": "tother", "index": 1, "count": 1}, false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "is held by tenant tdemo's pool tenant-tdemo") {
		t.Fatalf("code %d, msg %v", code, res["msg"])
	}
	if e.srv.Stats().Writes != 0 {
		t.Fatal("writes sent to another tenant's VM")
	}
}

func TestTaskTimeoutIsAClearError(t *testing.T) {
	e := newSim(t)
	e.srv.SetTaskDuration(time.Hour)
	res, code := e.run(map[string]any{"count": 1, "timeout": 1}, false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "did not finish within 1s") {
		t.Fatalf("code %d, msg %v", code, res["msg"])
	}
}

func TestCountAndPerVMStates(t *testing.T) {
	e := newSim(t)
	res, code := e.run(map[string]any{"count": 3, "parallel": 3}, false, false)
	if code != 0 || len(vmsOf(t, res)) != 3 {
		t.Fatalf("code %d, %v", code, res)
	}
	for _, id := range []int{10101, 10102, 10103} {
		if e.status(id) != "running" {
			t.Errorf("VM %d not running", id)
		}
	}
	res, code = e.run(map[string]any{"vms": []any{
		map[string]any{"state": "present"}, map[string]any{"state": "stopped"}, map[string]any{"state": "absent"},
	}}, false, false)
	if code != 0 || res["changed"] != true {
		t.Fatalf("code %d, %v", code, res)
	}
	if e.status(10101) != "running" || e.status(10102) != "stopped" || e.exists(10103) {
		t.Fatal("per-VM states not applied")
	}
}

// TestRequestsPerVM prints the request budget of one VM (the report's figures):
// go test ./internal/vm -run TestRequestsPerVM -v
func TestRequestsPerVM(t *testing.T) {
	e := newSim(t)
	count := func(what string, args map[string]any) int {
		e.srv.ResetStats()
		if res, code := e.run(args, false, false); code != 0 {
			t.Fatalf("%s: %v", what, res)
		}
		st := e.srv.Stats()
		n := 0
		var keys []string
		for k, v := range st.Requests {
			n += v
			keys = append(keys, fmt.Sprintf("%s=%d", k, v))
		}
		slices.Sort(keys)
		t.Logf("%-7s %2d requests, %d writes: %s", what, n, st.Writes, strings.Join(keys, " "))
		return n
	}
	create := count("create", tdemo)
	noop := count("no-op", tdemo)
	destroy := count("destroy", map[string]any{"count": 1, "state": "absent"})
	// GET /nodes: which nodes are offline (#25); a tenant's token cannot see them in /cluster/resources
	if noop != 3 {
		t.Errorf("no-op run took %d requests, want 3 (nodes + resources + pending)", noop)
	}
	if create > 15 || destroy > 7 {
		t.Errorf("request budget grew: create %d, destroy %d", create, destroy)
	}
}

// BenchmarkConverge10VMs measures the wall time to create 10 VMs with 20 ms of latency per
// request, one at a time against the default worker pool; the task=200ms cases also keep every
// PVE task running for 200 ms, closer to a real linked clone:
// go test ./internal/vm -run '^$' -bench Converge10VMs -benchtime 1x
func BenchmarkConverge10VMs(b *testing.B) {
	for _, task := range []time.Duration{0, 200 * time.Millisecond} {
		for _, par := range []int{1, vm.DefaultParallel, 10} {
			b.Run(fmt.Sprintf("task=%s/parallel=%d", task, par), func(b *testing.B) {
				e := newSim(b)
				e.srv.SetLatency(20 * time.Millisecond)
				e.srv.SetTaskDuration(task)
				args := map[string]any{"count": 10, "parallel": par, "cores": 2, "memory": 1024, "ciuser": "debian", "sshkeys": []any{sshKey}}
				for i := 0; i < b.N; i++ {
					b.StartTimer()
					if res, code := e.run(args, false, false); code != 0 {
						b.Fatal(res)
					}
					b.StopTimer()
					if res, code := e.run(map[string]any{"count": 10, "parallel": 10, "state": "absent"}, false, false); code != 0 {
						b.Fatal(res)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/10VMs")
			})
		}
	}
}

func TestPendingChangeOfARunningVMIsNotRepeated(t *testing.T) {
	e := newSim(t)
	if res, code := e.run(tdemo, false, false); code != 0 {
		t.Fatal(res)
	}
	more := map[string]any{}
	for k, v := range tdemo {
		more[k] = v
	}
	more["cores"] = 4
	res, code := e.run(more, false, false)
	if code != 0 || res["changed"] != true {
		t.Fatalf("code %d, %v", code, res)
	}
	if w := fmt.Sprint(res["warnings"]); !strings.Contains(w, "cores may stay pending") {
		t.Errorf("no pending warning: %v", w)
	}
	// net0 moved by hand while the VM runs: PVE may stage it as pending. The module compares
	// the pending view, so it fixes it once and then sees nothing to do.
	e.must(e.root.Put(context.Background(), fmt.Sprintf("/nodes/%s/qemu/10101/config", node),
		map[string]any{"net0": "virtio,bridge=vmbr0"}, nil))
	if res, code = e.run(more, false, false); code != 0 || res["changed"] != true {
		t.Fatalf("net0 drift: code %d, %v", code, res)
	}
	e.srv.ResetStats()
	res, code = e.run(more, false, false)
	if code != 0 || res["changed"] != false || e.srv.Stats().Writes != 0 {
		t.Fatalf("second run: code %d, writes %d, %v", code, e.srv.Stats().Writes, res)
	}
	var rows []map[string]any
	e.must(e.root.Get(context.Background(), fmt.Sprintf("/nodes/%s/qemu/10101/pending", node), nil, &rows))
	var want []string
	for _, r := range rows {
		if _, ok := r["pending"]; ok {
			want = append(want, fmt.Sprint(r["key"]))
		}
	}
	if got := fmt.Sprint(vmsOf(t, res)[0]["pending"]); got != fmt.Sprint(want) {
		t.Errorf("pending = %s, want %v (what /pending lists)", got, want)
	}
	t.Logf("pending after the net0 fix: %v", want)
}

func TestRejectedConfigGivesPVEsMessageAndConvergesLater(t *testing.T) {
	e := newSim(t)
	bad := map[string]any{}
	for k, v := range tdemo {
		bad[k] = v
	}
	bad["sshkeys"] = []any{"not a key"}
	res, code := e.run(bad, false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "SSH public key validation error") {
		t.Fatalf("code %d, msg %v", code, res["msg"])
	}
	if res["changed"] != true {
		t.Error("the clone happened, so the failed run must report changed")
	}
	if res, code = e.run(tdemo, false, false); code != 0 || res["changed"] != true {
		t.Fatalf("fixed run: code %d, %v", code, res)
	}
}

// tenantToken creates tenant's user and privsep token with the grants of PERMISSIONS.md §4
// (each one to the user and to the token) and makes the module use it.
func (e *simEnv) tenantToken(tenant, zone string) {
	ctx := context.Background()
	user := "tenant-" + tenant + "@pve"
	e.must(e.root.Post(ctx, "/access/users", map[string]any{"userid": user}, nil))
	var tok map[string]any
	e.must(e.root.Post(ctx, "/access/users/"+user+"/token/iac", map[string]any{"privsep": 1}, &tok))
	full := user + "!iac"
	grants := [][2]string{
		{"/pool/tenant-" + tenant, "PVEVMAdmin,PVEPoolUser"},
		{"/vms/9000", "PVETemplateUser"},
		{"/storage/local-lvm", "PVEDatastoreUser"},
		{"/sdn/zones/" + zone, "PVESDNUser"},
		{"/sdn/zones/localnetwork/vmbr0", "PVESDNUser"},
	}
	for _, g := range grants {
		e.must(e.root.Put(ctx, "/access/acl", map[string]any{"path": g[0], "roles": g[1], "users": user}, nil))
		e.must(e.root.Put(ctx, "/access/acl", map[string]any{"path": g[0], "roles": g[1], "tokens": full}, nil))
	}
	e.tokenID, e.tokenSecret = full, fmt.Sprint(tok["value"])
}

func TestTenantScopedToken(t *testing.T) {
	e := newSim(t)
	e.tenantInfra("tenant-tother", "tn02", "tn02v0", 20032)
	// tother's VM, made with root.
	if res, code := e.run(map[string]any{"name": "tother", "index": 2, "count": 1}, false, false); code != 0 {
		t.Fatal(res)
	}
	e.tenantToken("tdemo", "tn01")

	res, code := e.run(tdemo, false, false)
	if code != 0 || res["changed"] != true {
		t.Fatalf("create with tdemo's token: code %d, %v", code, res)
	}
	e.srv.ResetStats()
	if res, code = e.run(tdemo, false, false); code != 0 || res["changed"] != false || e.srv.Stats().Writes != 0 {
		t.Fatalf("second run with tdemo's token: code %d, %v", code, res)
	}
	// tdemo's token asked to remove tother's VM: it cannot see it, and the module refuses rather
	// than report it absent.
	res, code = e.run(map[string]any{"name": "tother", "index": 2, "count": 1, "state": "absent"}, false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), "vmid 10201 is taken by a VM this token cannot see") {
		t.Fatalf("tdemo's token acting on tother: code %d, %v", code, res["msg"])
	}
	if !e.exists(10201) {
		t.Fatal("tother's VM was destroyed with tdemo's token")
	}
	t.Logf("refusal: %v", res["msg"])
	if res, code = e.run(map[string]any{"count": 1, "state": "absent"}, false, false); code != 0 || res["changed"] != true {
		t.Fatalf("destroy with tdemo's token: code %d, %v", code, res)
	}
}

// Squatting (issue 24): tdemo's token clones into 10202, a vmid of tother's range, and tags the
// VM as tother's. tdemo's own converge names the squat by tdemo's pool, not by the forged tag;
// tother's converge refuses the vmid, naming tdemo when its credential can see the pool.
func TestSquattedVMIDIsReportedByThePoolsTenant(t *testing.T) {
	e := newSim(t)
	e.tenantInfra("tenant-tother", "tn02", "tn02v0", 20032)
	e.tenantToken("tdemo", "tn01")
	tok, err := pve.New(pve.Config{Host: e.srv.Host(), Port: e.srv.Port(), TokenID: e.tokenID, TokenSecret: e.tokenSecret,
		ValidateCerts: true, CAPath: e.srv.CAFile(), PollInterval: 5 * time.Millisecond})
	e.must(err)
	ctx := context.Background()
	var upid string
	e.must(tok.Post(ctx, "/nodes/"+node+"/qemu/9000/clone", map[string]any{"newid": 10202, "name": "grab", "pool": "tenant-tdemo"}, &upid))
	e.must(tok.WaitTask(ctx, upid))
	e.must(tok.Put(ctx, fmt.Sprintf("/nodes/%s/qemu/10202/config", node), map[string]any{"tags": "tenant-tother"}, nil))

	res, code := e.run(tdemo, false, false)
	want := `vmid 10202 ("grab") is held by tenant tdemo's pool, in index 2's range 10200-10299, not its own`
	if code != 0 || !slices.Contains(toStrings(res["warnings"]), want) {
		t.Fatalf("tdemo's converge: code %d, warnings %v; want %q", code, res["warnings"], want)
	}

	// tother's converge with the substrate's credential (it sees every pool) names tdemo.
	e.tokenID = ""
	e.srv.ResetStats()
	res, code = e.run(map[string]any{"name": "tother", "index": 2, "count": 2}, false, false)
	if code != 1 || !strings.Contains(fmt.Sprint(res["msg"]), `vmid 10202 ("grab") is held by tenant tdemo's pool tenant-tdemo`) {
		t.Fatalf("tother's converge: code %d, msg %v", code, res["msg"])
	}
	if w := e.srv.Stats().Writes; w != 0 {
		t.Fatalf("%d writes before the refusal", w)
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// TestDiskInGiBAsTheContractGivesIt: disk 8 (the tenant contract's integer GiB) is the disk "8G" is:
// the same VM, and a run with the other form changes nothing.
func TestDiskInGiBAsTheContractGivesIt(t *testing.T) {
	e := newSim(t)
	args := map[string]any{}
	for k, v := range tdemo {
		args[k] = v
	}
	args["disk"] = 8
	res, code := e.run(args, false, false)
	if code != 0 || res["changed"] != true {
		t.Fatalf("disk 8: code %d, %v", code, res)
	}
	if vms := vmsOf(t, res); len(vms) != 1 || !strings.Contains(fmt.Sprint(vms[0]["changes"]), "map[after:8G before:3G key:disk]") {
		t.Fatalf("disk 8: vms %v, want the disk grown to 8G", res["vms"])
	}
	e.srv.ResetStats()
	res, code = e.run(tdemo, false, false) // "8G"
	if code != 0 || res["changed"] != false || e.srv.Stats().Writes != 0 {
		t.Fatalf("disk \"8G\" after disk 8: code %d, changed %v, %d writes", code, res["changed"], e.srv.Stats().Writes)
	}
}
