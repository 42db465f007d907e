package envelope

import (
	"strings"
	"testing"
)

func TestCheckDeclaration(t *testing.T) {
	e := Envelope{VMs: 8, Cores: 16, Memory: 32768, Disk: 256} // the substrate's default
	for _, c := range []struct {
		name                       string
		count, cores, memory, disk int
		want                       []string // substrings, one per broken limit; none: accepted
	}{
		{name: "the demo tenant", count: 2, cores: 1, memory: 1024, disk: 8},
		{name: "exactly the envelope", count: 8, cores: 2, memory: 4096, disk: 32},
		{name: "one VM too many", count: 9, cores: 1, memory: 1024, disk: 8,
			want: []string{"tenant.vms.count is 9, over the tenant's envelope of 8 (envelope.vms"}},
		{name: "the contract's largest valid declaration", count: 99, cores: 64, memory: 262144, disk: 4096, want: []string{
			"tenant.vms.count is 99, over the tenant's envelope of 8",
			"tenant.vms.count x tenant.vms.cores (99 x 64) is 6336 vCPUs, over the tenant's envelope of 16 vCPUs (envelope.cores",
			"tenant.vms.count x tenant.vms.memory (99 x 262144 MiB) is 25952256 MiB, over the tenant's envelope of 32768 MiB (envelope.memory",
			"tenant.vms.count x tenant.vms.disk (99 x 4096 GiB) is 405504 GiB, over the tenant's envelope of 256 GiB (envelope.disk"}},
		{name: "memory alone", count: 2, cores: 1, memory: 16385, disk: 8,
			want: []string{"(2 x 16385 MiB) is 32770 MiB, over the tenant's envelope of 32768 MiB"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := e.CheckDeclaration(c.count, c.cores, c.memory, c.disk)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if n := strings.Count(err.Error(), "over the tenant's envelope"); n != len(c.want) {
				t.Errorf("%d limits named, want %d: %v", n, len(c.want), err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message lacks %q: %v", w, err)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	if err := (Envelope{VMs: 1, Cores: 1, Memory: 1, Disk: 1}).Validate("envelope"); err != nil {
		t.Fatal(err)
	}
	err := Envelope{VMs: 0, Cores: 4, Memory: -1, Disk: 10}.Validate("substrate_tenant_envelope")
	if err == nil || !strings.Contains(err.Error(), "substrate_tenant_envelope.vms 0 must be at least 1") ||
		!strings.Contains(err.Error(), "substrate_tenant_envelope.memory -1 must be at least 1 MiB") || strings.Contains(err.Error(), "cores") {
		t.Fatalf("Validate: %v", err)
	}
	// the disk I/O rates: not given (0) is no cap; given, at least 1
	if err := (Envelope{VMs: 1, Cores: 1, Memory: 1, Disk: 1, DiskWriteMBps: 1, DiskReadIOPS: 1}).Validate("envelope"); err != nil {
		t.Fatal(err)
	}
	err = Envelope{VMs: 1, Cores: 1, Memory: 1, Disk: 1, DiskReadMBps: -1, DiskWriteIOPS: -5}.Validate("envelope")
	if err == nil || err.Error() != "envelope.disk_read_mbps -1 must be at least 1 (or not given: no cap); envelope.disk_write_iops -5 must be at least 1 (or not given: no cap)" {
		t.Fatalf("Validate: %v", err)
	}
}

// The wire's limits are shown where verify and the site report show the envelope, and only when
// the attachment carries them; a negative one is refused naming it, a missing one is not.
func TestWireLimitsShownAndValidated(t *testing.T) {
	e := Envelope{VMs: 8, Cores: 16, Memory: 32768, Disk: 256, Bandwidth: 1000, Broadcast: 200}
	if got := e.String(); got != "8 VMs, 16 vCPUs, 32768 MiB, 256 GiB, 1000 Mbit/s, 200 broadcast frames/s" {
		t.Fatalf("String() = %q", got)
	}
	old := Envelope{VMs: 8, Cores: 16, Memory: 32768, Disk: 256}
	if got := old.String(); got != "8 VMs, 16 vCPUs, 32768 MiB, 256 GiB" {
		t.Fatalf("an attachment from before the wire: String() = %q", got)
	}
	if err := old.Validate("envelope"); err != nil {
		t.Fatalf("an envelope without the wire's limits refused: %v", err)
	}
	e.Bandwidth = -1
	if err := e.Validate("envelope"); err == nil || err.Error() != "envelope.bandwidth -1 must be at least 1 Mbit/s, or left out" {
		t.Fatalf("Validate: %v", err)
	}
}

// The DNS quota's limits are optional (0: an attachment from before them) but never negative.
func TestValidateDNSQuota(t *testing.T) {
	hw := Envelope{VMs: 8, Cores: 16, Memory: 32768, Disk: 256}
	if err := hw.Validate("envelope"); err != nil {
		t.Errorf("without the DNS quota: %v", err)
	}
	with := hw
	with.DNSRecords, with.DNSUpdates = 1000, 60
	if err := with.Validate("envelope"); err != nil {
		t.Errorf("with the DNS quota: %v", err)
	}
	bad := hw
	bad.DNSRecords, bad.DNSUpdates = -1, -5
	err := bad.Validate("envelope")
	if err == nil || !strings.Contains(err.Error(), "envelope.dns_records -1 must be at least 1 (records in each zone), or not given") ||
		!strings.Contains(err.Error(), "envelope.dns_updates -5 must be at least 1 (UPDATE messages a minute)") {
		t.Errorf("negative DNS quota: %v", err)
	}
}
