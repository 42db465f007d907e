package vm

import (
	"strings"
	"testing"
)

func tdemo1() Desired {
	return Desired{
		Tenant: "tdemo", Pool: "tenant-tdemo", VMID: 10101, Name: "tdemo-1", Node: "dv02hyp002p02",
		State: StateStarted, Template: "9000", Cores: 2, Memory: 2048, Disk: 10 << 30,
		Bridge: "tn01v0", IPConfig0: Props{"ip": "10.20.129.10/24", "gw": "10.20.129.1"},
		Nameserver: []string{"10.20.99.1"}, SearchDomain: "tdemo.mobile.deevnet.net", CIUser: "debian",
		SSHKeys: []string{key1}, Tags: []string{"tenant-tdemo"}, Description: "tenant tdemo VM 1",
	}
}

// converged is tdemo-1's config the way PVE stores it once converged.
func converged() map[string]string {
	return map[string]string{
		"name": "tdemo-1", "cores": "2", "memory": "2048",
		"net0":      "virtio=BC:24:11:5E:7A:01,bridge=tn01v0,firewall=1",
		"ipconfig0": "gw=10.20.129.1,ip=10.20.129.10/24", "nameserver": "10.20.99.1",
		"searchdomain": "tdemo.mobile.deevnet.net", "ciuser": "debian",
		"sshkeys": EncodeSSHKeys([]string{key1}), "tags": "tenant-tdemo",
		"description": "tenant tdemo VM 1\n", "scsi0": "local-lvm:vm-10101-disk-0,size=10G",
		"ide2": "local-lvm:vm-10101-cloudinit,media=cdrom", "cipassword": "**********",
	}
}

func TestCompareConvergedIsEmpty(t *testing.T) {
	d := tdemo1()
	d.CIPassword = "s3cret"
	dl := Compare(d, converged())
	if len(dl.Changes) != 0 || len(dl.Params) != 0 || dl.Resize != nil {
		t.Fatalf("converged VM shows changes: %+v", dl)
	}
}

func TestCompareFreshCloneKeepsMACAndEncodesKeys(t *testing.T) {
	cur := map[string]string{
		"name": "tdemo-1", "cores": "1", "memory": "current=512",
		"net0":  "virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=1",
		"scsi0": "local-lvm:base-9000-disk-0/vm-10101-disk-0,size=2G", "ide2": "local-lvm:vm-10101-cloudinit,media=cdrom",
	}
	d := tdemo1()
	d.CIPassword = "s3cret"
	dl := Compare(d, cur)
	want := map[string]any{
		"cores": 2, "memory": "2048", "net0": "virtio=BC:24:11:AA:BB:CC,bridge=tn01v0,firewall=1",
		"ipconfig0": "ip=10.20.129.10/24,gw=10.20.129.1", "nameserver": "10.20.99.1",
		"searchdomain": "tdemo.mobile.deevnet.net", "ciuser": "debian", "sshkeys": EncodeSSHKeys([]string{key1}),
		"cipassword": "s3cret", "tags": "tenant-tdemo", "description": "tenant tdemo VM 1",
	}
	for k, v := range want {
		if dl.Params[k] != v {
			t.Errorf("param %s = %v, want %v", k, dl.Params[k], v)
		}
	}
	if len(dl.Params) != len(want) {
		t.Errorf("params %v, want exactly %v", dl.Params, want)
	}
	if dl.Resize == nil || dl.Resize.Key != "scsi0" || dl.Resize.Size != 10<<30 {
		t.Errorf("resize = %+v, want scsi0 to 10G", dl.Resize)
	}
	for _, c := range dl.Changes {
		if s, _ := c.After.(string); strings.Contains(s, "s3cret") {
			t.Fatalf("change %s shows the password", c.Key)
		}
	}
}

func TestCompareDiskOnlyGrows(t *testing.T) {
	cur := converged()
	cur["scsi0"] = "local-lvm:vm-10101-disk-0,size=20G"
	dl := Compare(tdemo1(), cur)
	if dl.Resize != nil || len(dl.Warnings) != 1 || !strings.Contains(dl.Warnings[0], "only grow") {
		t.Fatalf("shrink not refused with a warning: %+v", dl)
	}
}

func TestCompareNormalisation(t *testing.T) {
	cur := converged()
	// Same meaning, other spelling: no change.
	cur["tags"] = "Tenant-tdemo"
	cur["memory"] = "current=2048"
	cur["nameserver"] = "10.20.99.1"
	cur["sshkeys"] = strings.ReplaceAll(cur["sshkeys"], "%2B", "%2b")
	if dl := Compare(tdemo1(), cur); len(dl.Changes) != 0 {
		t.Fatalf("equivalent spellings reported as changes: %+v", dl.Changes)
	}
	// A different gateway or an extra key is a change of ipconfig0 alone.
	cur["ipconfig0"] = "ip=10.20.129.10/24,gw=10.20.129.254"
	dl := Compare(tdemo1(), cur)
	if len(dl.Changes) != 1 || dl.Changes[0].Key != "ipconfig0" {
		t.Fatalf("changes = %+v", dl.Changes)
	}
	// A foreign extra tag is removed: the module owns the tag set.
	cur = converged()
	cur["tags"] = "tenant-tdemo;handmade"
	if dl := Compare(tdemo1(), cur); len(dl.Changes) != 1 || dl.Params["tags"] != "tenant-tdemo" {
		t.Fatalf("changes = %+v", dl.Changes)
	}
}

func TestCompareUnmanagedKeysAreLeftAlone(t *testing.T) {
	d := Desired{Name: "tdemo-1", VMID: 10101, State: StatePresent}
	if dl := Compare(d, map[string]string{"name": "tdemo-1", "cores": "8", "sshkeys": "junk"}); len(dl.Changes) != 0 {
		t.Fatalf("unmanaged keys changed: %+v", dl.Changes)
	}
}

// Ownership is the pool's: a tag, which the tenant's own token may set, neither gives nor
// takes a VM.
func TestCheckOwner(t *testing.T) {
	d := tdemo1()
	ok := []Observed{
		{Name: "tdemo-1", Pool: "tenant-tdemo"},
		{Name: "tdemo-1", Pool: "tenant-tdemo", Tags: []string{"tenant-tother"}},
	}
	for _, o := range ok {
		if err := checkOwner(d, o); err != nil {
			t.Errorf("checkOwner(%+v) = %v", o, err)
		}
	}
	bad := map[string]Observed{
		"is held by tenant tother's pool tenant-tother": {Name: "x", Pool: "tenant-tother", Tags: []string{"tenant-tdemo"}},
		"is in pool ops, not tenant-tdemo":              {Name: "x", Pool: "ops"},
		"a tag does not make it the tenant's":           {Name: "x", Tags: []string{"tenant-tdemo"}},
		"does not own":                                  {Name: "x"},
		"is a template":                                 {Name: "x", Template: true},
	}
	for want, o := range bad {
		if err := checkOwner(d, o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkOwner(%+v) = %v, want %q", o, err, want)
		}
	}
}

func TestOwnerOfReadsThePoolNotTags(t *testing.T) {
	cases := map[string]Observed{
		"tdemo": {Pool: "tenant-tdemo", Tags: []string{"tenant-tother"}},
		"":      {Tags: []string{"tenant-tother"}},
		"tx":    {Pool: "tenant-tx"},
	}
	for want, o := range cases {
		if got := OwnerOf(o); got != want {
			t.Errorf("OwnerOf(%+v) = %q, want %q", o, got, want)
		}
	}
}

func TestSquatsNameThePoolsTenant(t *testing.T) {
	inv := &Inventory{VMs: map[int]Observed{
		10101: {VMID: 10101, Name: "tdemo-1", Pool: "tenant-tdemo"},
		10202: {VMID: 10202, Name: "grab", Pool: "tenant-tdemo", Tags: []string{"tenant-tother"}},
		9001:  {VMID: 9001, Name: "low", Pool: "tenant-tdemo"},
		10203: {VMID: 10203, Name: "tother-3", Pool: "tenant-tother"},
		9000:  {VMID: 9000, Name: "tmpl", Pool: "tenant-tdemo", Template: true},
	}}
	got := Squats(inv, "tenant-tdemo", 10100, 10199)
	want := []string{
		`vmid 9001 ("low") is held by tenant tdemo's pool, below every tenant's range, not its own`,
		`vmid 10202 ("grab") is held by tenant tdemo's pool, in index 2's range 10200-10299, not its own`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Squats = %q\nwant %q", got, want)
	}
}

func TestValidateNamesFieldAndRule(t *testing.T) {
	d := tdemo1()
	d.Storage = "local"
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "storage") || !strings.Contains(err.Error(), "full") {
		t.Fatalf("Validate = %v", err)
	}
	d = tdemo1()
	d.State = "running"
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "state") {
		t.Fatalf("Validate = %v", err)
	}
}
