package pvesim

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestVMLifecycle(t *testing.T) {
	// a template with a NIC (the default has none, ADR-0013): its clone gets a new MAC
	s := startSim(t, func(c *Config) { c.Templates[0].Config["net0"] = "virtio=BC:24:11:00:90:00,bridge=vmbr0" })
	c := rootClient(t, s)
	evpnBase(t, c)
	c.ok("POST", "/pools", vals("poolid", "tenant-tdemo"), nil)

	var next int
	c.ok("GET", "/cluster/nextid", nil, &next)
	if next != 100 {
		t.Fatalf("nextid = %d", next)
	}
	r := c.do("GET", "/cluster/nextid", vals("vmid", "9000"))
	if r.Status != 400 || r.Errors["vmid"] != "VM 9000 already exists" {
		t.Fatalf("nextid taken: %d %v", r.Status, r.Errors)
	}

	upid, exit := c.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10101", "name", "tdemo-1", "pool", "tenant-tdemo"))
	if exit != "OK" || !strings.Contains(upid, ":qmclone:9000:root@pam!sim:") {
		t.Fatalf("clone %q %q", upid, exit)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10101"))
	if r.Status != 500 || r.Message != "unable to create VM 10101: config file already exists\n" {
		t.Fatalf("clone onto existing: %d %q", r.Status, r.Message)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10102", "storage", "local-lvm"))
	if r.Status != 500 || r.Message != "parameter 'storage' not allowed for linked clones\n" {
		t.Fatalf("linked clone with storage: %d %q", r.Status, r.Message)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10102", "full", "1", "storage", "local"))
	if r.Status != 400 || r.Errors["storage"] != "storage 'local' does not support vm images" {
		t.Fatalf("full clone to iso storage: %d %v", r.Status, r.Errors)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10102", "name", "bad_name"))
	if r.Status != 400 || !strings.HasPrefix(r.Errors["name"], "invalid format - value does not look like a valid DNS name") {
		t.Fatalf("bad name: %d %v", r.Status, r.Errors)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "10102", "full", "true"))
	if r.Status != 400 || r.Errors["full"] != "type check ('boolean') failed - got 'true'" {
		t.Fatalf("form boolean true: %d %v", r.Status, r.Errors)
	}

	var cfg map[string]any
	c.ok("GET", "/nodes/"+node+"/qemu/10101/config", nil, &cfg)
	if cfg["name"] != "tdemo-1" || cfg["template"] != nil || cfg["cores"] != float64(2) {
		t.Fatalf("clone config = %v", cfg)
	}
	if cfg["net0"] == "virtio=BC:24:11:00:90:00,bridge=vmbr0" || !regexp.MustCompile(`^virtio=BC:24:11:[0-9A-F:]{8},bridge=vmbr0$`).MatchString(cfg["net0"].(string)) {
		t.Fatalf("clone must get a new MAC: %v", cfg["net0"])
	}
	digest := cfg["digest"].(string)

	// cloud-init + net0 on a VNet; sshkeys must be percent-encoded
	key := "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIDuS8eU%2B%2Fh6h0n%20ops%40deevnet"
	upid, exit = c.task("POST", "/nodes/"+node+"/qemu/10101/config", vals(
		"ipconfig0", "ip=10.20.129.10/24,gw=10.20.129.1", "nameserver", "10.20.99.1", "searchdomain", "tdemo.mobile.deevnet.net",
		"ciuser", "ops", "cipassword", "s3cret", "sshkeys", key, "tags", "Tenant-tdemo;b,a", "cores", "4", "memory", "4096",
		"net0", "virtio,bridge=tn01v0", "description", "tenant tdemo", "digest", digest))
	if exit != "OK" || !strings.Contains(upid, ":qmconfig:10101:") {
		t.Fatalf("config %q %q", upid, exit)
	}
	c.ok("GET", "/nodes/"+node+"/qemu/10101/config", nil, &cfg)
	if cfg["sshkeys"] != key || cfg["cipassword"] != "**********" || cfg["tags"] != "a;b;tenant-tdemo" || cfg["cores"] != float64(4) {
		t.Fatalf("config after update = %v", cfg)
	}
	if !regexp.MustCompile(`^virtio=BC:24:11:[0-9A-F:]{8},bridge=tn01v0$`).MatchString(cfg["net0"].(string)) {
		t.Fatalf("net0 = %v", cfg["net0"])
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/10101/config", vals("cores", "2", "digest", digest))
	if r.Status != 500 || r.Message != "checksum mismatch (file change by other user?)\n" {
		t.Fatalf("stale digest: %d %q", r.Status, r.Message)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/10101/config", vals("sshkeys", "ssh-ed25519 AAAA"))
	if r.Status != 400 || !strings.HasPrefix(r.Errors["sshkeys"], "invalid format - invalid urlencoded string") {
		t.Fatalf("raw sshkeys: %d %v", r.Status, r.Errors)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/10101/config", vals("sshkeys", "not%20a%20key"))
	if r.Status != 500 || r.Message != "SSH public key validation error\n" {
		t.Fatalf("bad ssh key: %d %q", r.Status, r.Message)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/10101/config", vals("ipconfig0", "gw=10.20.129.1"))
	if r.Status != 400 || !strings.Contains(r.Errors["ipconfig0"], "missing property - 'ipconfig0.gw' requires this property") {
		t.Fatalf("gw without ip: %d %v", r.Status, r.Errors)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/10101/config", vals("digest", digest))
	if r.Status != 500 || r.Message != "no options specified\n" {
		t.Fatalf("empty config: %d %q", r.Status, r.Message)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/10101/config", vals("net0", "virtio,bridge=tn01v0,bogus=1"))
	if r.Status != 400 || !strings.Contains(r.Errors["net0"], "net0.bogus: property is not defined in schema") {
		t.Fatalf("bad net0 key: %d %v", r.Status, r.Errors)
	}
	c.ok("PUT", "/nodes/"+node+"/qemu/10101/config", vals("onboot", "1"), nil)

	// resize: grow relative and absolute, refuse shrink
	if _, exit = c.task("PUT", "/nodes/"+node+"/qemu/10101/resize", vals("disk", "scsi0", "size", "+2G")); exit != "OK" {
		t.Fatalf("resize +2G: %s", exit)
	}
	c.ok("GET", "/nodes/"+node+"/qemu/10101/config", nil, &cfg)
	if !strings.HasSuffix(cfg["scsi0"].(string), "size=5G") {
		t.Fatalf("scsi0 after +2G = %v", cfg["scsi0"])
	}
	r = c.do("PUT", "/nodes/"+node+"/qemu/10101/resize", vals("disk", "scsi0", "size", "4G"))
	if r.Status != 500 || r.Message != "shrinking disks is not supported\n" {
		t.Fatalf("shrink: %d %q", r.Status, r.Message)
	}

	// power: net0's VNet is staged, not applied: the start task fails as PVE's tap_plug does,
	// and the VM stays stopped; once applied, it starts.
	if _, exit = c.task("POST", "/nodes/"+node+"/qemu/10101/status/start", nil); exit != "bridge 'tn01v0' does not exist" {
		t.Fatalf("start on an unapplied VNet: %s", exit)
	}
	var stopped map[string]any
	c.ok("GET", "/nodes/"+node+"/qemu/10101/status/current", nil, &stopped)
	if stopped["status"] != "stopped" {
		t.Fatalf("after a failed start: %v", stopped["status"])
	}
	if _, exit = c.task("PUT", "/cluster/sdn", nil); exit != "OK" {
		t.Fatalf("apply: %s", exit)
	}
	if _, exit = c.task("POST", "/nodes/"+node+"/qemu/10101/status/start", nil); exit != "OK" {
		t.Fatalf("start: %s", exit)
	}
	if _, exit = c.task("POST", "/nodes/"+node+"/qemu/10101/status/start", nil); exit != "VM 10101 already running" {
		t.Fatalf("second start: %s", exit)
	}
	var st map[string]any
	c.ok("GET", "/nodes/"+node+"/qemu/10101/status/current", nil, &st)
	if st["status"] != "running" {
		t.Fatalf("status = %v", st)
	}
	r = c.do("DELETE", "/nodes/"+node+"/qemu/10101", nil)
	if r.Status != 500 || r.Message != "VM 10101 is running - destroy failed\n" {
		t.Fatalf("delete running: %d %q", r.Status, r.Message)
	}
	if _, exit = c.task("POST", "/nodes/"+node+"/qemu/10101/status/shutdown", vals("forceStop", "1", "timeout", "30")); exit != "OK" {
		t.Fatalf("shutdown: %s", exit)
	}
	if _, exit = c.task("POST", "/nodes/"+node+"/qemu/10101/status/stop", nil); exit != "OK" {
		t.Fatalf("stop stopped: %s", exit)
	}
	r = c.do("POST", "/nodes/"+node+"/qemu/10101/status/reboot", nil)
	if r.Status != 500 || r.Message != "VM 10101 not running\n" {
		t.Fatalf("reboot stopped: %d %q", r.Status, r.Message)
	}
	var pool map[string]any
	c.ok("GET", "/pools/tenant-tdemo", nil, &pool)
	if len(pool["members"].([]any)) != 1 {
		t.Fatalf("pool = %v", pool)
	}
	if _, exit = c.task("DELETE", "/nodes/"+node+"/qemu/10101", vals("purge", "1", "destroy-unreferenced-disks", "1")); exit != "OK" {
		t.Fatalf("destroy: %s", exit)
	}
	c.ok("GET", "/pools/tenant-tdemo", nil, &pool)
	if len(pool["members"].([]any)) != 0 {
		t.Fatalf("pool after destroy = %v", pool)
	}
	r = c.do("GET", "/nodes/"+node+"/qemu/10101/config", nil)
	if r.Status != 500 || r.Message != "Configuration file 'nodes/"+node+"/qemu-server/10101.conf' does not exist\n" {
		t.Fatalf("config of destroyed VM: %d %q", r.Status, r.Message)
	}

	// tasks: bad and unknown UPIDs
	r = c.do("GET", "/nodes/"+node+"/tasks/garbage/status", nil)
	if r.Status != 400 || r.Errors["upid"] != "unable to parse worker upid" {
		t.Fatalf("bad upid: %d %v", r.Status, r.Errors)
	}
	r = c.do("GET", "/nodes/"+node+"/tasks/UPID:"+node+":00000001:00000001:00000001:qmstart:1:root@pam:/status", nil)
	if r.Status != 400 || r.Errors["upid"] != "no such task" {
		t.Fatalf("unknown upid: %d %v", r.Status, r.Errors)
	}
	var log []map[string]any
	c.ok("GET", "/nodes/"+node+"/tasks/"+upid+"/log", nil, &log)
	if len(log) == 0 || log[len(log)-1]["t"] != "TASK OK" {
		t.Fatalf("task log = %v", log)
	}
}

func TestCloneLockAndTaskFaults(t *testing.T) {
	s := startSim(t, func(c *Config) { c.TaskDuration = 150 * time.Millisecond })
	c := rootClient(t, s)
	var upid string
	c.ok("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "200"), &upid)
	var cfg map[string]any
	c.ok("GET", "/nodes/"+node+"/qemu/200/config", nil, &cfg)
	if cfg["lock"] != "clone" {
		t.Fatalf("clone lock while running: %v", cfg["lock"])
	}
	r := c.do("POST", "/nodes/"+node+"/qemu/200/config", vals("cores", "1"))
	if r.Status != 500 || r.Message != "VM is locked (clone)\n" {
		t.Fatalf("config while locked: %d %q", r.Status, r.Message)
	}
	var st map[string]any
	c.ok("GET", "/nodes/"+node+"/tasks/"+upid+"/status", nil, &st)
	if st["status"] != "running" || st["user"] != "root@pam" || st["tokenid"] != "sim" {
		t.Fatalf("running task status = %v", st)
	}
	time.Sleep(200 * time.Millisecond)
	c.ok("GET", "/nodes/"+node+"/qemu/200/config", nil, &cfg)
	if cfg["lock"] != nil {
		t.Fatalf("lock after task: %v", cfg["lock"])
	}

	s.SetTaskDuration(0)
	s.FailTask(TaskFault{Type: "qmclone", Nth: 1, ExitStatus: "clone failed: disk full"})
	if _, exit := c.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "201")); exit != "clone failed: disk full" {
		t.Fatalf("injected task failure: %q", exit)
	}
	if r := c.do("GET", "/nodes/"+node+"/qemu/201/config", nil); r.Status != 500 {
		t.Fatalf("failed clone left a VM: %d", r.Status)
	}
	s.InjectFault(Fault{Method: "POST", Path: "/nodes/{node}/qemu/{vmid}/clone", Nth: 1, Status: 500, Message: "injected"})
	if r := c.do("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "202")); r.Status != 500 || r.Message != "injected\n" || r.Reason != "injected" {
		t.Fatalf("injected fault: %d %q %q", r.Status, r.Message, r.Reason)
	}
	if _, exit := c.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "202")); exit != "OK" {
		t.Fatalf("second clone after one-shot fault: %s", exit)
	}
	st2 := s.Stats()
	if st2.Requests["POST /nodes/{node}/qemu/{vmid}/clone"] != 4 || st2.Writes < 5 {
		t.Fatalf("stats = %+v", st2)
	}
}

func TestAuthErrors(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.auth = ""
	if r := c.do("GET", "/version", nil); r.Status != 401 || r.Reason != "No ticket" {
		t.Fatalf("no auth: %d %q", r.Status, r.Reason)
	}
	c.auth = "PVEAPIToken=root@pam!sim=wrong"
	if r := c.do("GET", "/version", nil); r.Status != 401 || r.Reason != "Authentication failed!" {
		t.Fatalf("bad secret: %d %q", r.Status, r.Reason)
	}
	c = rootClient(t, s)
	if r := c.do("GET", "/nodes/"+node+"/nope", nil); r.Status != 501 || r.Message != fmt.Sprintf("Method 'GET /nodes/%s/nope' not implemented\n", node) {
		t.Fatalf("unknown path: %d %q", r.Status, r.Message)
	}
	var v map[string]any
	c.ok("GET", "/version", nil, &v)
	if !strings.HasPrefix(v["version"].(string), "9.") {
		t.Fatalf("version = %v", v)
	}
	// JSON bodies: true/false accepted
	c.asJSON = true
	c.ok("POST", "/cluster/sdn/zones", vals("zone", "simple1", "type", "simple"), nil)
	c.asJSON = false
	r := c.do("POST", "/cluster/sdn/zones", vals("zone", "z2", "type", "simple", "bogus", "1"))
	if r.Status != 400 || r.Errors["bogus"] != "property is not defined in schema and the schema does not allow additional properties" {
		t.Fatalf("unknown param: %d %v", r.Status, r.Errors)
	}
	r = c.do("POST", "/cluster/sdn/zones", vals("zone", "z2"))
	if r.Status != 400 || r.Errors["type"] != "property is missing and it is not optional" || r.Reason != "Parameter verification failed." {
		t.Fatalf("missing type: %d %v %q", r.Status, r.Errors, r.Reason)
	}
}

func TestVMCreateAndCloudinitDump(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	cfg := c.createVM(vals("vmid", "300", "name", "fresh", "scsi0", "local-lvm:8", "net0", "virtio,bridge=vmbr0",
		"ipconfig0", "ip=10.0.0.5/24,gw=10.0.0.1", "nameserver", "10.0.0.53", "ciuser", "ops", "sshkeys", "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIA%20k"))
	if cfg["scsi0"] != "local-lvm:vm-300-disk-0,size=8G" {
		t.Fatalf("scsi0 = %v", cfg["scsi0"])
	}
	if r := c.do("POST", "/nodes/"+node+"/qemu", vals("vmid", "300")); r.Status != 500 || r.Message != "unable to create VM 300: config file already exists\n" {
		t.Fatalf("create existing: %d %q", r.Status, r.Message)
	}
	var dump string
	c.ok("GET", "/nodes/"+node+"/qemu/300/cloudinit/dump", vals("type", "network"), &dump)
	if !strings.Contains(dump, "address: '10.0.0.5/24'") || !strings.Contains(dump, "gateway: '10.0.0.1'") || !strings.Contains(dump, "- '10.0.0.53'") {
		t.Fatalf("network dump:\n%s", dump)
	}
	c.ok("GET", "/nodes/"+node+"/qemu/300/cloudinit/dump", vals("type", "user"), &dump)
	if !strings.Contains(dump, "user: ops") || !strings.Contains(dump, "  - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA k") {
		t.Fatalf("user dump:\n%s", dump)
	}
}

func TestGuestAgentInterfaces(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	c.task("POST", "/nodes/"+node+"/qemu/9000/clone", vals("newid", "150"))
	// the template has no NIC (ADR-0013): the clone gets its net0 with its address
	c.task("POST", "/nodes/"+node+"/qemu/150/config", vals("ipconfig0", "ip=10.20.129.10/24,gw=10.20.129.1", "net0", "virtio,bridge=vmbr0"))
	if r := c.do("GET", "/nodes/"+node+"/qemu/150/agent/network-get-interfaces", nil); r.Status != 500 || r.Message != "VM 150 is not running\n" {
		t.Fatalf("agent on stopped VM: %d %q", r.Status, r.Message)
	}
	c.task("POST", "/nodes/"+node+"/qemu/150/status/start", nil)
	var res struct {
		Result []struct {
			Name string `json:"name"`
			IPs  []struct {
				Addr string `json:"ip-address"`
			} `json:"ip-addresses"`
		} `json:"result"`
	}
	c.ok("GET", "/nodes/"+node+"/qemu/150/agent/network-get-interfaces", nil, &res)
	if len(res.Result) != 2 || res.Result[1].Name != "eth0" || res.Result[1].IPs[0].Addr != "10.20.129.10" {
		t.Fatalf("agent interfaces = %+v", res)
	}
}

// A create allocates each "STORAGE:SIZE" disk as vm-<vmid>-disk-<n>, n counting in key order, on
// a storage that exists and holds images, and stores it as print_drive writes it (options sorted).
func TestVMCreateAllocatesDisks(t *testing.T) {
	c := rootClient(t, startSim(t))
	create := "/nodes/" + node + "/qemu"
	cfg := c.createVM(vals("vmid", "301", "scsi0", "local-lvm:4", "virtio1", "local-lvm:2,iothread=1"))
	if cfg["scsi0"] != "local-lvm:vm-301-disk-0,size=4G" || cfg["virtio1"] != "local-lvm:vm-301-disk-1,iothread=1,size=2G" {
		t.Errorf("disks: scsi0 %v, virtio1 %v", cfg["scsi0"], cfg["virtio1"])
	}
	if r := c.do("POST", create, vals("vmid", "302", "scsi0", "nope:4")); r.Status != 500 || r.Message != "storage 'nope' does not exist\n" {
		t.Errorf("unknown storage: %d %q", r.Status, r.Message)
	}
	// check_storage_access names the "storage" parameter whichever drive asks (Qemu.pm:191)
	if r := c.do("POST", create, vals("vmid", "302", "scsi0", "local:4")); r.Status != 400 || r.Errors["storage"] != "storage 'local' does not support vm images" {
		t.Errorf("iso storage: %d %v", r.Status, r.Errors)
	}
}
