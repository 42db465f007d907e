package report_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/report"
)

// verifyArgs is tenant_verify's task as roles/tenant gives it for tdemo (index 1, one VM).
func (l *lab) verifyArgs(kv ...any) map[string]any {
	args := l.conn()
	args["name"], args["index"], args["vms"] = "tdemo", 1, 1
	args["resolver"] = map[string]any{"server": "127.0.0.1", "port": l.dnsAddr.Port}
	return moduletest.With(args, kv...)
}

type verifyResult struct {
	Failed bool           `json:"failed"`
	Msg    string         `json:"msg"`
	Checks []report.Check `json:"checks"`
}

func (l *lab) verify(args map[string]any) (verifyResult, map[string]any) {
	l.t.Helper()
	res, _ := moduletest.Execute(l.t, report.VerifyModule(), args)
	b, _ := json.Marshal(res)
	var out verifyResult
	if err := json.Unmarshal(b, &out); err != nil {
		l.t.Fatal(err)
	}
	return out, res
}

func details(cs []report.Check) []string {
	var out []string
	for _, c := range cs {
		mark := "FAIL"
		if c.OK {
			mark = "ok"
		}
		out = append(out, c.Name+" | "+c.Target+" | "+mark+" | "+c.Detail)
	}
	return out
}

func wantChecks(t *testing.T, got []report.Check, want []string) {
	t.Helper()
	if g := details(got); strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Fatalf("checks:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range got {
		if len(c.Time) != len("2026-12-01T04:00:00Z") || !strings.HasSuffix(c.Time, "Z") {
			t.Fatalf("time %q", c.Time)
		}
	}
}

// A converged tenant passes every check, reading with GETs only: the cluster's VMs once, each VM's
// config and status.
func TestVerifyPasses(t *testing.T) {
	l := newLab(t)
	l.srv.ResetStats()
	out, res := l.verify(l.verifyArgs())
	if out.Failed || res["changed"] != false || out.Msg != "every check passed" {
		t.Fatalf("res = %v", res)
	}
	wantChecks(t, out.Checks, []string{
		"A record through the resolver | tdemo-1.tdemo.mobile.deevnet.net | ok | 10.20.129.10",
		"PTR record through the resolver | 10.20.129.10 | ok | tdemo-1.tdemo.mobile.deevnet.net.",
		"PVE configuration (name, address, gateway) | tdemo-1 (10101) | ok | name tdemo-1, ipconfig0 ip=10.20.129.10/24,gw=10.20.129.1",
		"VM running | tdemo-1 (10101) | ok | status running",
	})
	st := l.srv.Stats()
	want := map[string]int{"GET /cluster/resources": 1, "GET /nodes/{node}/qemu/{vmid}/config": 1, "GET /nodes/{node}/qemu/{vmid}/status/current": 1}
	if st.Writes != 0 || len(st.Requests) != len(want) {
		t.Fatalf("requests %v, writes %d; want %v", st.Requests, st.Writes, want)
	}
	for k, n := range want {
		if st.Requests[k] != n {
			t.Fatalf("requests %v, want %v", st.Requests, want)
		}
	}
	// The VM is read on the node PVE lists it on, not the site's first node.
	if out, res := l.verify(l.verifyArgs("site", map[string]any{"nodes": []any{"dv02hyp002p03", node}})); out.Failed {
		t.Fatalf("site's first node elsewhere: %v", res)
	}
	// Check mode reads the same and changes nothing.
	if out, res := l.verify(l.verifyArgs("_ansible_check_mode", true)); out.Failed || len(out.Checks) != 4 {
		t.Fatalf("check mode: %v", res)
	}
}

// A failed check fails the run with each failed check's name, target and detail, the message the
// role's assert gave; with fail_on_failed false the checks are returned and the run passes.
func TestVerifyFails(t *testing.T) {
	l := newLab(t)
	l.setDNS("tdemo-1.tdemo.mobile.deevnet.net. A", "")
	l.setDNS("10.129.20.10.in-addr.arpa. PTR", "tother-1.tother.mobile.deevnet.net.")
	l.must(l.root.Post(context.Background(), "/nodes/"+node+"/qemu/10101/status/stop", nil, nil))
	want := []string{
		"A record through the resolver | tdemo-1.tdemo.mobile.deevnet.net | FAIL | no answer",
		"PTR record through the resolver | 10.20.129.10 | FAIL | tother-1.tother.mobile.deevnet.net.",
		"PVE configuration (name, address, gateway) | tdemo-1 (10101) | ok | name tdemo-1, ipconfig0 ip=10.20.129.10/24,gw=10.20.129.1",
		"VM running | tdemo-1 (10101) | FAIL | status stopped",
	}
	msg := "tdemo: failed checks: A record through the resolver: tdemo-1.tdemo.mobile.deevnet.net: no answer; " +
		"PTR record through the resolver: 10.20.129.10: tother-1.tother.mobile.deevnet.net.; VM running: tdemo-1 (10101): status stopped"
	out, res := l.verify(l.verifyArgs())
	if !out.Failed || out.Msg != msg {
		t.Fatalf("res = %v\nwant msg %q", res, msg)
	}
	wantChecks(t, out.Checks, want)
	out, res = l.verify(l.verifyArgs("fail_on_failed", false))
	if out.Failed || out.Msg != msg {
		t.Fatalf("fail_on_failed false: %v", res)
	}
	wantChecks(t, out.Checks, want)
}

// What PVE answered instead of a VM, and a resolver that does not answer, are the checks' details.
func TestVerifyUnanswered(t *testing.T) {
	l := newLab(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := pc.LocalAddr().(*net.UDPAddr).Port
	_ = pc.Close() // nothing listens: the query is refused
	// tdemo-2 was never made: PVE has neither its config nor its status.
	out, res := l.verify(l.verifyArgs("vms", 2, "fail_on_failed", false,
		"resolver", map[string]any{"server": "127.0.0.1", "port": closed}))
	if out.Failed || len(out.Checks) != 8 {
		t.Fatalf("res = %v", res)
	}
	for _, c := range out.Checks[:4] {
		if c.OK || !strings.HasPrefix(c.Detail, "resolver: server 127.0.0.1:") {
			t.Fatalf("DNS check %+v", c)
		}
	}
	for _, c := range out.Checks[6:] {
		if c.OK || c.Target != "tdemo-2 (10102)" || !strings.HasPrefix(c.Detail, "PVE answered 500: ") || !strings.Contains(c.Detail, "10102") {
			t.Fatalf("PVE check %+v", c)
		}
	}
}

// Without a PVE connection only the resolver is asked; a partial credential, an unknown option
// and a declaration the plan refuses fail before any read, naming the option.
func TestVerifyOptions(t *testing.T) {
	l := newLab(t)
	args := map[string]any{"name": "tdemo", "index": 1, "resolver": map[string]any{"server": "127.0.0.1", "port": l.dnsAddr.Port}}
	l.srv.ResetStats()
	out, res := l.verify(args)
	if out.Failed || len(out.Checks) != 2 || out.Checks[0].Name != report.CheckA || out.Checks[1].Name != report.CheckPTR {
		t.Fatalf("res = %v", res)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{moduletest.With(args, "api_host", "127.0.0.1"), "api_token_secret"},
		{moduletest.With(args, "vms", 100), "100"},
		{moduletest.With(args, "index", 0), "index"},
		{moduletest.With(args, "vm_vnet", []any{3}), "vm_vnet"},
		{moduletest.With(args, "resolver", map[string]any{"port": 53}), "server"},
	} {
		out, res := l.verify(tc.args)
		if !out.Failed || !strings.Contains(out.Msg, tc.want) || len(out.Checks) != 0 {
			t.Errorf("args %v: res = %v, want a failure naming %q", tc.args, res, tc.want)
		}
	}
	if st := l.srv.Stats(); len(st.Requests) != 0 {
		t.Fatalf("requests %v, want none", st.Requests)
	}
}

// The token secret is in no part of the result, passed or failed.
func TestVerifyMasksTheSecret(t *testing.T) {
	l := newLab(t)
	_, secret := l.srv.RootToken()
	for _, args := range []map[string]any{l.verifyArgs(), l.verifyArgs("vms", 2), l.verifyArgs("api_token_secret", "x"+secret)} {
		_, res := l.verify(args)
		if b, _ := json.Marshal(res); strings.Contains(string(b), secret) {
			t.Fatalf("secret in %s", b)
		}
	}
}

// A query the resolver drops is asked again (dig +tries=2): one lost packet fails no check.
func TestVerifyAsksAgain(t *testing.T) {
	l := newLab(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pc.Close() }()
	up, err := net.Dial("udp", l.dnsAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = up.Close() }()
	// A relay to the lab's server that drops the first query it gets.
	go func() {
		buf := make([]byte, 4096)
		for i := 0; ; i++ {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if i == 0 {
				continue
			}
			_, _ = up.Write(buf[:n])
			m, err := up.Read(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:m], from)
		}
	}()
	out, res := l.verify(l.verifyArgs("resolver", map[string]any{"server": "127.0.0.1", "port": pc.LocalAddr().(*net.UDPAddr).Port}))
	if out.Failed || !out.Checks[0].OK || !out.Checks[1].OK {
		t.Fatalf("res = %v", res)
	}
}

// Squatting (issue 24): a VM tdemo's pool holds in index 2's range, tagged as tother's, fails
// tdemo's verify, named by the pool.
func TestVerifyFailsTheSquatter(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	var upid string
	l.must(l.root.Post(ctx, "/nodes/"+node+"/qemu/9000/clone", map[string]any{"newid": 10202, "name": "squat", "pool": "tenant-tdemo"}, &upid))
	l.must(l.root.WaitTask(ctx, upid))
	l.must(l.root.Put(ctx, "/nodes/"+node+"/qemu/10202/config", map[string]any{"tags": "tenant-tother"}, nil))
	out, res := l.verify(l.verifyArgs())
	want := `Pool's VMs in the tenant's own vmid range: tenant-tdemo: vmid 10202 ("squat") is held by tenant tdemo's pool, in index 2's range 10200-10299, not its own`
	if !out.Failed || !strings.Contains(out.Msg, want) {
		t.Fatalf("res = %v\nwant a message with %q", res, want)
	}
}

// A VM on a node that is offline fails its PVE checks (PVE answers 595); with the node in the
// operator's maintenance list it gets one passing CheckLeft instead, the run warns naming the VM
// and the node and returns the node in pending_nodes (#25, drill (b)). A node in maintenance that
// is online is checked as usual, and a maintenance entry that names no node is refused.
func TestVerifyMaintenance(t *testing.T) {
	const node2 = "dv02hyp002p03"
	cfg := pvesim.DefaultConfig()
	cfg.Nodes = append(cfg.Nodes, pvesim.NodeConfig{Name: node2, MaxCPU: 16, MaxMem: 68719476736})
	cfg.Storages = append(cfg.Storages, pvesim.StorageConfig{ID: "shared", Type: "rbd", Content: []string{"images"}, Shared: true, Clone: true})
	cfg.Templates[0].Config["scsi0"] = "shared:base-9000-disk-0,size=3G"
	cfg.Templates[0].Config["ide2"] = "shared:vm-9000-cloudinit,media=cdrom"
	l := newLabWith(t, cfg, map[string]any{"count": 2, "placement": "spread", "site": map[string]any{"nodes": []any{node, node2}}})
	l.setDNS("tdemo-2.tdemo.mobile.deevnet.net. A", "10.20.129.11")
	l.setDNS("11.129.20.10.in-addr.arpa. PTR", "tdemo-2.tdemo.mobile.deevnet.net.")
	args := func(kv ...any) map[string]any { return l.verifyArgs(append([]any{"vms", 2}, kv...)...) }
	out, res := l.verify(args("maintenance", []any{node2}))
	if out.Failed || out.Msg != "every check passed" || len(out.Checks) != 8 || fmt.Sprint(res["pending_nodes"]) != "[]" {
		t.Fatalf("online node in maintenance: res = %v", res)
	}
	if err := l.srv.SetNodeOffline(node2, "", 0); err != nil {
		t.Fatal(err)
	}
	out, res = l.verify(args())
	if !out.Failed || !strings.Contains(out.Msg, "tdemo-2 (10102): PVE answered 595") {
		t.Fatalf("offline node not in maintenance: res = %v", res)
	}
	out, res = l.verify(args("maintenance", []any{node2}))
	wantChecks(t, out.Checks, []string{
		"A record through the resolver | tdemo-1.tdemo.mobile.deevnet.net | ok | 10.20.129.10",
		"A record through the resolver | tdemo-2.tdemo.mobile.deevnet.net | ok | 10.20.129.11",
		"PTR record through the resolver | 10.20.129.10 | ok | tdemo-1.tdemo.mobile.deevnet.net.",
		"PTR record through the resolver | 10.20.129.11 | ok | tdemo-2.tdemo.mobile.deevnet.net.",
		"PVE configuration (name, address, gateway) | tdemo-1 (10101) | ok | name tdemo-1, ipconfig0 ip=10.20.129.10/24,gw=10.20.129.1",
		"VM running | tdemo-1 (10101) | ok | status running",
		"VM left on its node in maintenance | tdemo-2 (10102) | ok | " + report.LeftDetail(node2),
	})
	warn := "VM tdemo-2 (10102): " + report.LeftDetail(node2)
	if out.Failed || !strings.Contains(out.Msg, "1 VM(s) on nodes offline in maintenance") ||
		fmt.Sprint(res["pending_nodes"]) != "["+node2+"]" || fmt.Sprint(res["warnings"]) != "["+warn+"]" {
		t.Fatalf("offline node in maintenance: res = %v", res)
	}
	out, res = l.verify(l.verifyArgs("maintenance", []any{"dv02hyp002p09"}))
	if !out.Failed || !strings.Contains(out.Msg, `maintenance[0]: "dv02hyp002p09" is not a cluster node`) || len(out.Checks) != 0 {
		t.Fatalf("unknown node: res = %v", res)
	}
}

// With the attachment's envelope, one more check adds up every guest of the tenant's pool (planned
// or not) from the configurations it reads anyway, and fails when what runs, or what is allocated,
// goes over it; a stopped guest takes disk only. A limit below 1 is refused before any read.
func TestVerifyEnvelope(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	env := map[string]any{"vms": 2, "cores": 4, "memory": 4096, "disk": 8}
	l.srv.ResetStats()
	out, res := l.verify(l.verifyArgs("envelope", env))
	if out.Failed || len(out.Checks) != 5 {
		t.Fatalf("inside the envelope: %v", res)
	}
	if got := details(out.Checks[4:]); got[0] != "Pool's use inside the tenant's envelope | tenant-tdemo | ok | "+
		"uses 1 VMs (1 running), 2 vCPUs (2 running), 2048 MiB (2048 running), 3 GiB of 2 VMs, 4 vCPUs, 4096 MiB, 8 GiB" {
		t.Fatalf("envelope check: %q", got)
	}
	// The planned VM's configuration is read once, for both checks.
	if n := l.srv.Stats().Requests["GET /nodes/{node}/qemu/{vmid}/config"]; n != 1 {
		t.Fatalf("config read %d times, want 1", n)
	}

	// A guest the tenant made outside the plan counts: a stopped one with 16 vCPUs takes disk only ...
	var upid string
	l.must(l.root.Post(ctx, "/nodes/"+node+"/qemu/9000/clone", map[string]any{"newid": 10150, "name": "extra", "pool": "tenant-tdemo"}, &upid))
	l.must(l.root.WaitTask(ctx, upid))
	l.must(l.root.Put(ctx, "/nodes/"+node+"/qemu/10150/config", map[string]any{"cores": 8, "sockets": 2, "memory": "current=8192"}, nil))
	if out, res := l.verify(l.verifyArgs("envelope", env)); out.Failed {
		t.Fatalf("a stopped guest over the envelope's vCPUs and memory: %v", res)
	}
	// ... and once it runs it takes its vCPUs and memory: the run fails naming each limit.
	l.must(l.root.Post(ctx, "/nodes/"+node+"/qemu/10150/status/start", nil, &upid))
	l.must(l.root.WaitTask(ctx, upid))
	out, _ = l.verify(l.verifyArgs("envelope", env, "fail_on_failed", false))
	want := "Pool's use inside the tenant's envelope | tenant-tdemo | FAIL | uses 2 VMs (2 running), 18 vCPUs (18 running), " +
		"10240 MiB (10240 running), 6 GiB of 2 VMs, 4 vCPUs, 4096 MiB, 8 GiB: 18 running vCPUs, over the envelope's 4 (envelope.cores); " +
		"10240 MiB of running memory, over the envelope's 4096 (envelope.memory)"
	if got := details(out.Checks); got[len(got)-1] != want || !strings.Contains(out.Msg, "envelope.cores") {
		t.Fatalf("over the envelope:\n%s\nwant last\n%s\nmsg %q", strings.Join(got, "\n"), want, out.Msg)
	}
	// Disk counts whether the guest runs or not.
	l.must(l.root.Put(ctx, "/nodes/"+node+"/qemu/10150/resize", map[string]any{"disk": "scsi0", "size": "+3G"}, nil))
	out, _ = l.verify(l.verifyArgs("envelope", env, "fail_on_failed", false))
	if d := out.Checks[len(out.Checks)-1].Detail; !strings.Contains(d, "9 GiB of disk, over the envelope's 8 (envelope.disk)") {
		t.Fatalf("disk: %q", d)
	}

	l.srv.ResetStats()
	out, res = l.verify(l.verifyArgs("envelope", map[string]any{"vms": 0, "cores": 4, "memory": 4096, "disk": 8}))
	if !out.Failed || !strings.Contains(out.Msg, "envelope.vms 0 must be at least 1") || l.srv.Stats().Requests["GET /cluster/resources"] != 0 {
		t.Fatalf("an envelope of 0 VMs: %v", res)
	}
}
