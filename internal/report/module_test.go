package report_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
	"github.com/deevnet/tenant/internal/report"
	"github.com/deevnet/tenant/internal/sdn"
	"github.com/deevnet/tenant/internal/vm"
)

const node = "dv02hyp002p02"

// lab is an in-process pvesim converged by the collection's own modules (fabric, tdemo's VRF,
// one apply, its VM) and a DNS server answering tdemo-1's A and PTR records.
type lab struct {
	t        testing.TB
	srv      *pvesim.Server
	root     *pve.Client
	dnsAddr  *net.UDPAddr
	dnsMu    sync.Mutex        // the DNS server's goroutines read dnsNames while a test changes it
	dnsNames map[string]string // "name type" -> rdata
}

// setDNS answers rdata for key ("name type"); an empty rdata drops the name (NXDOMAIN).
func (l *lab) setDNS(key, rdata string) {
	l.dnsMu.Lock()
	defer l.dnsMu.Unlock()
	if rdata == "" {
		delete(l.dnsNames, key)
		return
	}
	l.dnsNames[key] = rdata
}

func newLab(t testing.TB) *lab {
	t.Helper()
	return newLabWith(t, pvesim.DefaultConfig(), map[string]any{"count": 1})
}

// newLabWith is newLab on cfg, tdemo's VMs made with vmArgs (count, placement, site).
func newLabWith(t testing.TB, cfg pvesim.Config, vmArgs map[string]any) *lab {
	t.Helper()
	srv, root := pvesimtest.Start(t, cfg)
	l := &lab{t: t, srv: srv, root: root, dnsNames: map[string]string{
		"tdemo-1.tdemo.mobile.deevnet.net. A":   "10.20.129.10",
		"10.129.20.10.in-addr.arpa. PTR":        "tdemo-1.tdemo.mobile.deevnet.net.",
		"www.tdemo.mobile.deevnet.net. CNAME":   "tdemo-1.tdemo.mobile.deevnet.net.",
		"tother-1.tother.mobile.deevnet.net. A": "10.20.130.10",
	}}
	l.must(l.root.Post(context.Background(), "/pools", map[string]any{"poolid": "tenant-tdemo"}, nil))
	l.exec(sdn.FabricModule(), map[string]any{"nodes": []any{map[string]any{"name": node, "interfaces": []any{"vmbr0.51"}}}})
	l.exec(sdn.VRFModule(), map[string]any{"name": "tdemo", "index": 1})
	l.exec(sdn.ApplyModule(), map[string]any{"allow_foreign_pending": true})
	l.exec(vm.Module(), moduletest.With(map[string]any{"name": "tdemo", "index": 1, "template": "9000", "state": "started"}, flatten(vmArgs)...))
	l.startDNS()
	return l
}

// flatten is m as moduletest.With's key, value list.
func flatten(m map[string]any) []any {
	var out []any
	for k, v := range m {
		out = append(out, k, v)
	}
	return out
}

func (l *lab) must(err error) {
	l.t.Helper()
	if err != nil {
		l.t.Fatal(err)
	}
}

func (l *lab) conn() map[string]any {
	id, secret := l.srv.RootToken()
	return map[string]any{"api_host": l.srv.Host(), "api_port": l.srv.Port(), "api_user": "root@pam", "api_token_id": id,
		"api_token_secret": secret, "ca_path": l.srv.CAFile()}
}

func (l *lab) exec(mod module.Entry, args map[string]any) map[string]any {
	l.t.Helper()
	all := l.conn()
	for k, v := range args {
		all[k] = v
	}
	res, code := moduletest.Execute(l.t, mod, all)
	if code != 0 {
		l.t.Fatalf("setup module failed: %v", res)
	}
	return res
}

// startDNS answers from dnsNames on 127.0.0.1 (UDP), NXDOMAIN otherwise.
func (l *lab) startDNS() {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		l.t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		l.dnsMu.Lock()
		v, ok := l.dnsNames[q.Name+" "+dns.TypeToString[q.Qtype]]
		l.dnsMu.Unlock()
		if ok {
			rr, err := dns.NewRR(fmt.Sprintf("%s 300 IN %s %s", q.Name, dns.TypeToString[q.Qtype], v))
			if err == nil {
				m.Answer = append(m.Answer, rr)
			}
		} else {
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	l.t.Cleanup(func() { _ = srv.Shutdown() })
	l.dnsAddr = pc.LocalAddr().(*net.UDPAddr)
}

var passed = []any{
	map[string]any{"name": "A via resolver", "target": "tdemo-1.tdemo.mobile.deevnet.net", "ok": true, "detail": "10.20.129.10", "time": "2026-12-01T04:00:00Z"},
	map[string]any{"name": "PTR via resolver", "target": "10.20.129.10", "ok": true, "detail": "tdemo-1.tdemo.mobile.deevnet.net.", "time": "2026-12-01T04:00:01Z"},
}

// report runs substrate_report as Ansible runs the binary and returns its result.
func (l *lab) report(check bool, tenants ...any) (map[string]any, string) {
	l.t.Helper()
	args := l.conn()
	args["tenants"] = tenants
	args["resolver"] = map[string]any{"server": "127.0.0.1", "port": l.dnsAddr.Port}
	args["generated_at"] = "2026-12-01T04:00:02Z"
	args["_ansible_check_mode"] = check
	res, code := moduletest.Execute(l.t, report.Module(), args)
	if code != 0 {
		l.t.Fatalf("substrate_report failed: %v", res)
	}
	md, _ := res["report"].(string)
	return res, md
}

func tdemo(checks []any) map[string]any {
	return map[string]any{"name": "tdemo", "index": 1, "vms": 1,
		"records": []any{map[string]any{"name": "www", "type": "CNAME"}}, "checks": checks}
}

func mermaidOf(t *testing.T, md string) string {
	t.Helper()
	_, after, ok := strings.Cut(md, "```mermaid\n")
	if !ok {
		t.Fatalf("no mermaid block in\n%s", md)
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("mermaid block not closed")
	}
	return block
}

func wantIn(t *testing.T, what, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%s lacks %q:\n%s", what, p, text)
		}
	}
}

func TestHealthySiteIsDrawnFromWhatWasReadBack(t *testing.T) {
	l := newLab(t)
	l.srv.ResetStats()
	res, md := l.report(true, tdemo(passed))
	if res["changed"] != false {
		t.Fatalf("changed = %v", res["changed"])
	}
	if w := l.srv.Stats().Writes; w != 0 {
		t.Fatalf("substrate_report sent %d writes", w)
	}
	mm := mermaidOf(t, md)
	wantIn(t, "mermaid", mm,
		`Fabric ufab · openfabric · 10.20.255.0/24`, `dv02hyp002p02<br/>VTEP 10.20.255.1`,
		`tdemo · index 1 · VRF vrf_tn01 · zone tn01 · VNI 10001 · checks 2/2 passed`,
		`VNet tn01v0 · VNI 20016<br/>10.20.129.0/24 gw 10.20.129.1"]:::ok`,
		`VM tdemo-1 · 10101<br/>10.20.129.10<br/>on dv02hyp002p02 · running"]:::ok`,
		"Perimeter", "Resolver 10.20.99.1")
	wantIn(t, "report", md, "**All 2 checks passed.**",
		"| tdemo | A via resolver | tdemo-1.tdemo.mobile.deevnet.net | ✅ pass | 10.20.129.10 | 2026-12-01T04:00:00Z |",
		"| www.tdemo.mobile.deevnet.net. | CNAME | tdemo-1.tdemo.mobile.deevnet.net. |",
		"| 10.129.20.10.in-addr.arpa. | PTR | tdemo-1.tdemo.mobile.deevnet.net. |",
		"| dv02hyp002p02 | online | ufab | 10.20.255.1 |")
	_, secret := l.srv.RootToken()
	if strings.Contains(fmt.Sprint(res), secret) {
		t.Fatal("the token secret is in the module's result")
	}
	sub, _ := res["substrate"].(map[string]any)
	if vms, _ := sub["vms"].([]any); len(vms) != 2 { // the template and tdemo-1
		t.Fatalf("substrate vms = %v", sub["vms"])
	}
}

func TestStoppedVMAndFailedCheckShowInTableAndPicture(t *testing.T) {
	l := newLab(t)
	var upid string
	l.must(l.root.Post(context.Background(), fmt.Sprintf("/nodes/%s/qemu/10101/status/stop", node), nil, &upid))
	l.must(l.root.WaitTask(context.Background(), upid))
	l.setDNS("www.tdemo.mobile.deevnet.net. CNAME", "")
	failed := append([]any{}, passed...)
	failed = append(failed, map[string]any{"name": "record via resolver", "target": "www.tdemo.mobile.deevnet.net CNAME", "ok": false, "detail": "no answer", "time": "2026-12-01T04:00:01Z"})
	_, md := l.report(false, tdemo(failed))
	mm := mermaidOf(t, md)
	wantIn(t, "mermaid", mm,
		`VM tdemo-1 · 10101<br/>10.20.129.10<br/>on dv02hyp002p02 · STOPPED"]:::bad`,
		`1 of 3 checks FAILED`, `FAILED checks<br/>record via resolver: www.tdemo.mobile.deevnet.net CNAME"]:::bad`,
		"style t0 fill:#fff6f5,stroke:#c62828")
	wantIn(t, "report", md, "**1 of 3 checks FAILED.**",
		"| tdemo | record via resolver | www.tdemo.mobile.deevnet.net CNAME | ❌ **FAIL** | no answer |",
		"| www.tdemo.mobile.deevnet.net. | CNAME | **no answer** |",
		"pool tenant-tdemo **(stopped)**")
}

func TestMissingVMAndUnknownTenantZone(t *testing.T) {
	l := newLab(t)
	var upid string
	ctx := context.Background()
	l.must(l.root.Post(ctx, fmt.Sprintf("/nodes/%s/qemu/10101/status/stop", node), nil, &upid))
	l.must(l.root.WaitTask(ctx, upid))
	l.must(l.root.Delete(ctx, fmt.Sprintf("/nodes/%s/qemu/10101", node), nil, &upid))
	l.must(l.root.WaitTask(ctx, upid))
	// tother is onboarded but its network half never ran: no zone, no VNet, no VM.
	_, md := l.report(false, tdemo(passed), map[string]any{"name": "tother", "index": 2})
	mm := mermaidOf(t, md)
	wantIn(t, "mermaid", mm,
		`VM tdemo-1 · 10101<br/>MISSING in PVE"]:::missing`,
		`tother · index 2 · zone tn02 MISSING · not verified yet`,
		`VNet tn02v0 · VNI 20032<br/>MISSING in PVE"]:::missing`, "style t1 fill:#fff6f5")
	wantIn(t, "report", md, "| VM tdemo-1 | tdemo-1 (vmid 10101) 10.20.129.10 | **MISSING** |",
		"| tother | (none) | | not verified yet | | |", "| zone (VRF) | tn02 = vrf_tn02, VNI 10002 | **MISSING** |")
}

func TestLabelsCannotBreakTheDiagram(t *testing.T) {
	l := newLab(t)
	bad := []any{map[string]any{"name": `a "quoted" <b>check</b> | pipe`, "ok": false, "detail": "x\ny"}}
	_, md := l.report(false, tdemo(bad))
	mm := mermaidOf(t, md)
	if strings.Contains(mm, `"quoted"`) || strings.Contains(mm, "<b>") {
		t.Fatalf("unescaped label:\n%s", mm)
	}
	wantIn(t, "mermaid", mm, "a #quot;quoted#quot; #lt;b#gt;check#lt;/b#gt; #124; pipe")
	wantIn(t, "report", md, `| a "quoted" <b>check</b> \| pipe |`, "| x y |")
}

func TestRefusesBadInputBeforeReading(t *testing.T) {
	l := newLab(t)
	args := l.conn()
	args["tenants"] = []any{map[string]any{"name": "tdemo", "index": 0}}
	l.srv.ResetStats()
	res, code := moduletest.Execute(t, report.Module(), args)
	if code == 0 || !strings.Contains(fmt.Sprint(res["msg"]), "index: 0 is reserved") {
		t.Fatalf("index 0: code %d, %v", code, res)
	}
	if n := len(l.srv.Stats().Requests); n != 0 {
		t.Fatalf("%d requests before refusing", n)
	}
}

// A VM on another VNet than 0 (tenant.vms.vnet) is expected at that VNet's address and drawn on
// that VNet; without its placement the same VM reads as misaddressed.
func TestVMOnSecondVNetIsPlannedThere(t *testing.T) {
	l := newLab(t)
	l.exec(sdn.VRFModule(), map[string]any{"name": "tdemo", "index": 1, "vnet_count": 2})
	l.exec(sdn.ApplyModule(), map[string]any{"allow_foreign_pending": true})
	l.exec(vm.Module(), map[string]any{"name": "tdemo", "index": 1, "template": "9000", "vnet_count": 2,
		"vms": []any{map[string]any{"index": 1, "vnet": 0}, map[string]any{"index": 2, "vnet": 1}}, "state": "started"})
	declared := func(vmVNet ...any) map[string]any {
		return map[string]any{"name": "tdemo", "index": 1, "vms": 2, "vnets": 2, "vm_vnet": vmVNet}
	}
	_, md := l.report(false, declared(0, 1))
	mm := mermaidOf(t, md)
	wantIn(t, "mermaid", mm,
		`VNet tn01v1 · VNI 20017<br/>10.20.129.128/25 gw 10.20.129.129"]:::ok`,
		`VM tdemo-2 · 10102<br/>10.20.129.139<br/>on `, "t0_m1 --- t0_v1")
	if strings.Contains(mm, "ADDRESS") {
		t.Fatalf("a VM is flagged misaddressed with its VNet declared:\n%s", mm)
	}
	_, md = l.report(false, declared())
	wantIn(t, "mermaid without vm_vnet", mermaidOf(t, md), "ADDRESS 10.20.129.139, PLAN 10.20.129.11")
}

// A failed GET ends the read: Read returns its error, naming the path, and sends no request
// after it (the next lists, the VNets' subnets, the guests).
func TestReadStopsAtTheFirstFailure(t *testing.T) {
	l := newLab(t)
	l.srv.InjectFault(pvesim.Fault{Method: "GET", Path: "/cluster/sdn/controllers", Status: 500, Message: "broken"})
	before := l.srv.Stats().Requests
	_, err := report.Read(t.Context(), l.root)
	if err == nil || !strings.Contains(err.Error(), "reading back /cluster/sdn/controllers") {
		t.Fatalf("Read: %v, want the failed GET named", err)
	}
	after := l.srv.Stats().Requests
	for _, p := range []string{"GET /cluster/sdn/zones", "GET /cluster/sdn/vnets", "GET /cluster/resources"} {
		if after[p] != before[p] {
			t.Errorf("%s sent %d time(s) after the failure", p, after[p]-before[p])
		}
	}
	if after["GET /nodes"] != before["GET /nodes"]+1 {
		t.Errorf("GET /nodes sent %d time(s), want 1 (the reads before the failure)", after["GET /nodes"]-before["GET /nodes"])
	}
}

// Squatting (issue 24): tdemo's VM takes vmid 10202, tother's second, and carries tother's tag.
// The report names the holder by the pool, in tother's row and in tdemo's, and the forged tag
// does not make the VM tother's.
func TestSquattedVMIDIsNamedByThePool(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	l.must(l.root.Post(ctx, "/pools", map[string]any{"poolid": "tenant-tother"}, nil))
	var upid string
	l.must(l.root.Post(ctx, "/nodes/"+node+"/qemu/9000/clone", map[string]any{"newid": 10202, "name": "grab", "pool": "tenant-tdemo"}, &upid))
	l.must(l.root.WaitTask(ctx, upid))
	l.must(l.root.Put(ctx, fmt.Sprintf("/nodes/%s/qemu/10202/config", node), map[string]any{"tags": "tenant-tother"}, nil))
	_, md := l.report(false, tdemo(passed), map[string]any{"name": "tother", "index": 2, "vms": 2})
	wantIn(t, "report", md,
		"**(vmid 10202 is held by tenant tdemo's pool (pool tenant-tdemo), not tenant-tother)**",
		"| VM grab | (not planned) | none on dv02hyp002p02, stopped, bridge ",
		`pool tenant-tdemo **(vmid 10202 ("grab") is held by tenant tdemo's pool, in index 2's range 10200-10299, not its own; stopped)** |`)
	wantIn(t, "mermaid", mermaidOf(t, md), "VM tother-2 · 10202<br/>none<br/>on dv02hyp002p02 · VMID 10202 IS HELD BY TENANT TDEMO'S POOL")
}

// The envelope check tenant_verify made is the report's envelope row and a box in the tenant's
// picture, marked over when it failed.
func TestEnvelopeUseShowsInTableAndPicture(t *testing.T) {
	l := newLab(t)
	env := map[string]any{"vms": 2, "cores": 4, "memory": 4096, "disk": 8}
	checksOf := func() []any {
		out, res := l.verify(l.verifyArgs("envelope", env, "fail_on_failed", false))
		var checks []any
		for _, c := range out.Checks {
			checks = append(checks, map[string]any{"name": c.Name, "target": c.Target, "ok": c.OK, "detail": c.Detail, "time": c.Time})
		}
		if len(checks) != 5 {
			t.Fatalf("verify: %v", res)
		}
		return checks
	}
	_, md := l.report(false, tdemo(checksOf()))
	wantIn(t, "report", md, "| envelope (pool tenant-tdemo) | 2 VMs, 4 vCPUs, 4096 MiB, 8 GiB | "+
		"1 VMs (1 running), 2 vCPUs (2 running), 2048 MiB (2048 running), 3 GiB |")
	wantIn(t, "mermaid", mermaidOf(t, md),
		`t0_env["envelope 2 VMs, 4 vCPUs, 4096 MiB, 8 GiB<br/>1 VMs (1 running), 2 vCPUs (2 running), 2048 MiB (2048 running), 3 GiB"]:::ok`)

	l.must(l.root.Put(context.Background(), "/nodes/"+node+"/qemu/10101/resize", map[string]any{"disk": "scsi0", "size": "+6G"}, nil))
	_, md = l.report(false, tdemo(checksOf()))
	over := "1 VMs (1 running), 2 vCPUs (2 running), 2048 MiB (2048 running), 9 GiB: 9 GiB of disk, over the envelope's 8 (envelope.disk)"
	wantIn(t, "report", md, "| envelope (pool tenant-tdemo) | 2 VMs, 4 vCPUs, 4096 MiB, 8 GiB | **"+over+" (OVER)** |")
	wantIn(t, "mermaid", mermaidOf(t, md), `t0_env["envelope 2 VMs, 4 vCPUs, 4096 MiB, 8 GiB<br/>`+over+`"]:::bad`)
}

// TestReportNamesThePlaybookThatWroteIt: generated_by names the playbook in the report's first
// line (deevnet.tenant.report's report said it was verify's); verify's by default.
func TestReportNamesThePlaybookThatWroteIt(t *testing.T) {
	l := newLab(t)
	_, md := l.report(false, tdemo(passed))
	wantIn(t, "default", md, "Generated 2026-12-01T04:00:02Z by `deevnet.tenant.verify` from")
	args := l.conn()
	args["tenants"] = []any{tdemo(passed)}
	args["generated_at"] = "2026-12-01T04:00:02Z"
	args["generated_by"] = "deevnet.tenant.report"
	res, code := moduletest.Execute(t, report.Module(), args)
	if code != 0 {
		t.Fatalf("substrate_report failed: %v", res)
	}
	md, _ = res["report"].(string)
	wantIn(t, "generated_by", md, "Generated 2026-12-01T04:00:02Z by `deevnet.tenant.report` from")
}
