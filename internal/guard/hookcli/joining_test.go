package hookcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check mode is the plan (issue 56): a VM this run takes over is in no pool yet, so a -check sweep
// would not name it; -joining names the pool it joins, and the sweep shows the hookscript the real
// run's sweep then sets. A real sweep refuses -joining.
func TestSweepJoiningShowsTheVMThisRunTakesOver(t *testing.T) {
	answer := fakePvesh(t)
	envelopes := filepath.Join(t.TempDir(), EnvelopeFile)
	if err := os.WriteFile(envelopes, []byte(`{"tenants": {"tdemo": {"pool": "tenant-tdemo", "envelope": {"vms": 8, "cores": 16, "memory": 32768, "disk": 256}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	answer("/cluster/resources", []map[string]any{{"type": "qemu", "vmid": 10101, "node": "p02", "status": "running"}})
	answer("/nodes/p02/qemu/10101/config", map[string]any{"net0": "virtio=BC:24:11:00:01:01,bridge=tn01v0"})
	p02 := newNode(t, "p02", nil)
	out, errOut, rc := p02.guard(t, envelopes, "-check", "sweep")
	if rc != 0 || out != "" {
		t.Fatalf("without -joining: rc %d, stdout %q, stderr %q", rc, out, errOut)
	}
	out, errOut, rc = p02.guard(t, envelopes, "-check", "-joining", "10101=tenant-tdemo", "sweep")
	want := "tenant tdemo: VM 10101: hookscript local:snippets/deevnet-envelope-guard, was none; it runs unguarded until its next start (not stopped)\n"
	if rc != 0 || out != want {
		t.Fatalf("with -joining: rc %d, stdout %q (want %q), stderr %q", rc, out, want, errOut)
	}
	if _, errOut, rc = p02.guard(t, envelopes, "-joining", "10101=tenant-tdemo", "sweep"); rc != 1 || !strings.Contains(errOut, "-joining: only with -check") {
		t.Fatalf("a real sweep with -joining: rc %d, stderr %q", rc, errOut)
	}
	if _, errOut, rc = p02.guard(t, envelopes, "-check", "-joining", "10101", "sweep"); rc != 1 || !strings.Contains(errOut, `-joining "10101": want VMID=POOL`) {
		t.Fatalf("a bad -joining: rc %d, stderr %q", rc, errOut)
	}
	// the wire: the port of the VM this run takes over is admitted in the plan, nothing written
	answer("/cluster/sdn/vnets", []map[string]any{{"vnet": "tn01v0", "zone": "tn01", "alias": "tenant-tdemo"}})
	answer("/cluster/sdn/vnets/tn01v0/subnets", []map[string]any{{"subnet": "tn01-10.20.129.0-24", "cidr": "10.20.129.0/24"}})
	answer("/nodes/p02/qemu/10101/config", map[string]any{"net0": "virtio=BC:24:11:00:01:01,bridge=tn01v0", "ipconfig0": "ip=10.20.129.10/24,gw=10.20.129.1"})
	file := filepath.Join(t.TempDir(), "wire.nft")
	wire := func(args ...string) string {
		t.Helper()
		out, errOut, rc := p02.guard(t, envelopes, append([]string{"-nft=", "-wire-file", file}, args...)...)
		if rc != 0 {
			t.Fatalf("wire %v: exit %d: %s", args, rc, errOut)
		}
		return out
	}
	if out := wire("-check", "-joining", "10101=tenant-tdemo", "wire"); !strings.Contains(out, "+ tenant tdemo: VM 10101 net0 on tn01v0") {
		t.Fatalf("wire -check -joining: %q", out)
	}
	// Terraform's VNet has no alias yet: the takeover marks it in this run (-joining-vnets)
	answer("/cluster/sdn/vnets", []map[string]any{{"vnet": "tn01v0", "zone": "tn01"}})
	if out := wire("-check", "-joining", "10101=tenant-tdemo", "wire"); strings.Contains(out, "+ tenant tdemo: VM 10101") {
		t.Fatalf("wire -check, an unmarked VNet, without -joining-vnets: %q", out)
	}
	if out := wire("-check", "-joining", "10101=tenant-tdemo", "-joining-vnets", "tn01v0=tenant-tdemo", "wire"); !strings.Contains(out, "+ tenant tdemo: VM 10101 net0 on tn01v0") {
		t.Fatalf("wire -check -joining-vnets: %q", out)
	}
	if _, errOut, rc := p02.guard(t, envelopes, "-nft=", "-wire-file", file, "-joining-vnets", "tn01v0=tenant-tdemo", "wire"); rc != 1 || !strings.Contains(errOut, "-joining-vnets: only with -check") {
		t.Fatalf("a real wire with -joining-vnets: rc %d, %q", rc, errOut)
	}
	if out := wire("-check", "wire"); strings.Contains(out, "10101") {
		t.Fatalf("wire -check without -joining names 10101: %q", out)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("-check wrote the table: %v", err)
	}
}
