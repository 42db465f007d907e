package pvesim

import "testing"

// Drives are stored as qemu-server stores them (create_disks, then print_drive), whatever
// spelling the request used. The wanted strings are PVE's: a config file of a PVE 9 node
// holds "scsi0: local-lvm:vm-100-disk-0,iothread=1,size=32G" and
// "ide2: local-lvm:vm-100-cloudinit,media=cdrom"; the sent ones are what the Terraform
// provider bpg/proxmox sends (CustomStorageDevice.EncodeValues: "file=" first, size in bytes,
// options in its own order, a trailing comma when it has none).
func TestDriveStoredAsPVEPrintsIt(t *testing.T) {
	c := rootClient(t, startSim(t))
	qemu := "/nodes/" + node + "/qemu"
	if _, exit := c.task("POST", qemu+"/9000/clone", vals("newid", "10101", "name", "tdemo-1")); exit != "OK" {
		t.Fatalf("clone: %s", exit)
	}
	if _, exit := c.task("PUT", qemu+"/10101/resize", vals("disk", "scsi0", "size", "8G")); exit != "OK" {
		t.Fatalf("resize: %s", exit)
	}
	// The clone's cloud-init drive goes first (bpg deletes and re-creates it), then the disk's
	// options and the new cloud-init drive in one update.
	if _, exit := c.task("POST", qemu+"/10101/config", vals("delete", "ide2")); exit != "OK" {
		t.Fatalf("delete ide2: %s", exit)
	}
	for _, tc := range []struct{ key, sent, want string }{
		{"scsi0", "file=local-lvm:base-9000-disk-0/vm-10101-disk-0,size=8589934592,backup=1,iothread=1,ssd=1,discard=on,cache=writeback,replicate=1",
			"local-lvm:base-9000-disk-0/vm-10101-disk-0,backup=1,cache=writeback,discard=on,iothread=1,replicate=1,size=8G,ssd=1"},
		// the size sent is not stored: PVE reads the volume's own (8G after the resize)
		{"scsi0", "file=local-lvm:base-9000-disk-0/vm-10101-disk-0,size=1073741824,iothread=on,", "local-lvm:base-9000-disk-0/vm-10101-disk-0,iothread=1,size=8G"},
		{"ide2", "file=local-lvm:cloudinit,", "local-lvm:vm-10101-cloudinit,media=cdrom"},
		{"ide2", "local-lvm:cloudinit,format=raw", "local-lvm:vm-10101-cloudinit,media=cdrom"},
		{"ide0", "none,media=cdrom,size=4M", "none,media=cdrom"},
	} {
		if _, exit := c.task("POST", qemu+"/10101/config", vals(tc.key, tc.sent)); exit != "OK" {
			t.Fatalf("%s=%s: %s", tc.key, tc.sent, exit)
		}
		var cfg map[string]any
		c.ok("GET", qemu+"/10101/config", nil, &cfg)
		if cfg[tc.key] != tc.want {
			t.Errorf("%s sent %q stored %q, PVE stores %q", tc.key, tc.sent, cfg[tc.key], tc.want)
		}
	}

	// A create's cloud-init drive is allocated the same way; on a storage with a path it is a
	// qcow2 file.
	cfg := c.createVM(vals("vmid", "302", "scsi0", "local-lvm:4,ssd=on", "ide2", "file=local-lvm:cloudinit,"))
	if cfg["ide2"] != "local-lvm:vm-302-cloudinit,media=cdrom" || cfg["scsi0"] != "local-lvm:vm-302-disk-0,size=4G,ssd=1" {
		t.Errorf("create stored ide2 %q scsi0 %q", cfg["ide2"], cfg["scsi0"])
	}
}

func TestDriveRefusals(t *testing.T) {
	c := rootClient(t, startSim(t))
	qemu := "/nodes/" + node + "/qemu"
	if _, exit := c.task("POST", qemu+"/9000/clone", vals("newid", "10101")); exit != "OK" {
		t.Fatalf("clone: %s", exit)
	}
	for _, tc := range []struct{ key, sent, want string }{
		{"ide0", "file=local-lvm:cloudinit,", "ide0 - cloud-init drive is already attached at 'ide2'\n"},
		{"scsi1", "file=local-lvm:vm-10101-disk-7,size=8589934592,", "volume local-lvm:vm-10101-disk-7 does not exist\n"},
	} {
		r := c.do("PUT", qemu+"/10101/config", vals(tc.key, tc.sent))
		if r.Status != 500 || r.Message != tc.want {
			t.Errorf("%s=%s: %d %q %v, want %q", tc.key, tc.sent, r.Status, r.Message, r.Errors, tc.want)
		}
	}
	c.ok("PUT", qemu+"/10101/config", vals("delete", "ide2"), nil)
	if r := c.do("PUT", qemu+"/10101/config", vals("ide0", "nope:cloudinit")); r.Status != 500 || r.Message != "storage 'nope' does not exist\n" {
		t.Errorf("cloud-init on an unknown storage: %d %q", r.Status, r.Message)
	}
}
