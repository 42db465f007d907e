package cgroupslice

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The guest proof of io.max (issue 53, docs/adr/0014-tenant-envelope.md decision 3, "Disk I/O"):
// inside test/guest/run.sh's QEMU guest (its own kernel, DEEVNET_GUEST=1; `make test-guard-guest`),
// never on the machine running the tests. One RAM disk (brd's ram0) stands for a node's physical
// volume shared by two tenants; each tenant's thin pool data device is a dm-linear half of it
// named as LVM names it (pve-tenant--<name>_tdata), a real dm-thin pool over it (metadata on
// ram1, ram2), one thin volume each standing for a VM disk. The hog's group gets io.max from the
// guard's own code (Devices from the pool data device's name, then Ensure); a process in it
// writes (or reads) its thin volume with O_DIRECT as fast as it can, while a process in the other
// tenant's group writes a fixed amount into its own. Not proven here: LVM's own tools and a real
// disk's contention (a RAM disk has none to share: the other tenant's time shows the hog's
// throttled writes do not slow it, not how a disk would split).
func TestIOMaxGuest(t *testing.T) {
	if os.Getenv("DEEVNET_GUEST") != "1" {
		t.Skip("needs test/guest/run.sh's guest (make test-guard-guest): it mounts cgroup2, makes RAM disks and dm-thin pools")
	}
	// another guest run of this package (make test-route's) has no RAM disks or dmsetup: this
	// test is make test-guard-guest's, whose guest run.sh gives both (or fails to build)
	for _, need := range []string{"/dev/ram0", "/sbin/dmsetup"} {
		if _, err := os.Stat(need); err != nil {
			t.Skipf("%s not in this guest: make test-guard-guest runs this test (GUEST_MODS brd dm_thin_pool, GUEST_TOOLS /sbin/dmsetup)", need)
		}
	}
	root := "/sys/fs/cgroup"
	if b, _ := os.ReadFile("/proc/self/mountinfo"); !strings.Contains(string(b), " - cgroup2 ") {
		if err := syscall.Mount("cgroup2", root, "cgroup2", 0, ""); err != nil {
			t.Fatalf("mounting cgroup2 in the guest: %v", err)
		}
	}
	const mib = 1 << 20
	dmsetup := func(args ...string) {
		t.Helper()
		cmd := exec.Command("dmsetup", args...)
		cmd.Env = append(os.Environ(), "DM_DISABLE_UDEV=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("dmsetup %v: %v: %s", args, err, out)
		}
	}
	// ram0 (16 MiB): the shared PV; each tenant's pool data 8 MiB of it, 64 KiB blocks
	vol := map[string]string{}
	for i, tenant := range []string{"thog", "tother"} {
		data := DMName("pve", "tenant-"+tenant) + "_tdata"
		dmsetup("create", data, "--noudevsync", "--table", fmt.Sprintf("0 16384 linear /dev/ram0 %d", i*16384))
		pool := DMName("pve", "tenant-"+tenant) + "-tpool"
		dmsetup("create", pool, "--noudevsync", "--table", fmt.Sprintf("0 16384 thin-pool /dev/ram%d /dev/mapper/%s 128 0", i+1, data))
		dmsetup("message", "/dev/mapper/"+pool, "0", "create_thin 0")
		vol[tenant] = DMName("pve", "vm-"+strconv.Itoa(101+i)+"-disk-0")
		dmsetup("create", vol[tenant], "--noudevsync", "--table", "0 32768 thin /dev/mapper/"+pool+" 0")
		vol[tenant] = "/dev/mapper/" + vol[tenant]
	}
	devs, err := Devices("/sys", DMName("pve", "tenant-thog")+"_tdata")
	if err != nil || len(devs) != 1 {
		t.Fatalf("the devices under thog's pool data: %v %v, want ram0's", devs, err)
	}
	ram0 := strings.TrimSpace(read(t, "/sys/class/block/ram0/dev"))
	if devs[0] != ram0 {
		t.Fatalf("Devices: %v, want ram0 %s", devs, ram0)
	}
	other, err := Ensure(root, "tother", Limits{MemoryMiB: 256, Cores: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		io    IOLimit // on ram0; none: the control
		op    string  // write or read
		block int
		cap   float64 // bytes or operations a second the hog must be held to; 0: the control
		iops  bool
	}{
		{"write 4 MiB/s", IOLimit{WBps: 4 * mib}, "write", 64 << 10, 4 * mib, false},
		{"write 200 IOPS", IOLimit{WIOPS: 200}, "write", 4 << 10, 200, true},
		{"read 4 MiB/s", IOLimit{RBps: 4 * mib}, "read", 64 << 10, 4 * mib, false},
		{"no io.max (the control)", IOLimit{}, "write", 64 << 10, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := Limits{MemoryMiB: 256, Cores: 1}
			if c.cap > 0 {
				c.io.Dev = devs[0]
				l.IO = []IOLimit{c.io}
			}
			hog, err := Ensure(root, "thog", l)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("thog io.max: %q", strings.TrimSpace(read(t, filepath.Join(hog, "io.max"))))
			a := startHelper(t, hog, c.op, vol["thog"], c.block, 4*time.Second, 0)
			time.Sleep(time.Second)
			b := startHelper(t, other, "write", vol["tother"], 64<<10, time.Minute, 8*mib)
			ar, br := a.result(t), b.result(t)
			rate, unit := float64(ar.bytes)/ar.seconds, "MiB/s"
			if c.iops {
				rate, unit = float64(ar.ops)/ar.seconds, "IOPS"
			}
			shown := rate
			if !c.iops {
				shown = rate / mib
			}
			t.Logf("thog %s %d bytes (%d ops) in %.2f s: %.1f %s; tother wrote %d bytes in %.3f s meanwhile",
				c.op, ar.bytes, ar.ops, ar.seconds, shown, unit, br.bytes, br.seconds)
			if br.bytes != 8*mib {
				t.Fatalf("tother wrote %d bytes, want %d", br.bytes, 8*mib)
			}
			if c.cap == 0 {
				// the device is fast enough for the caps above to mean something
				if rate < 3*4*mib {
					t.Fatalf("without io.max thog %s only %.1f MiB/s: ram0 too slow to show a 4 MiB/s cap", c.op, rate/mib)
				}
				return
			}
			if rate > 1.15*c.cap || rate < 0.7*c.cap {
				t.Fatalf("thog held at %.1f %s, want its cap %.0f (within -30%%/+15%%)", shown, unit, map[bool]float64{true: c.cap, false: c.cap / mib}[c.iops])
			}
			// the bound: the other tenant's 8 MiB, written while the hog is held, in under 3 s
			if br.seconds > 3 {
				t.Fatalf("tother's 8 MiB took %.3f s while thog was held, want under 3 s", br.seconds)
			}
		})
	}
}

// helper is a process of this test binary doing I/O (TestIOHelper) from inside a group.
type helper struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

type ioResult struct {
	bytes, ops int64
	seconds    float64
}

// startHelper starts a process that, once in the group at dir, does op (write or read) on path
// with O_DIRECT in blocks of block bytes, over its first 4 MiB again and again, for d or until
// total bytes (0: no total).
func startHelper(t *testing.T, dir, op, path string, block int, d time.Duration, total int64) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestIOHelper$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("DEEVNET_IO_HELPER=%s %s %d %d %d", op, path, block, d.Milliseconds(), total))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// in the group before its first I/O: it waits for a line on stdin
	if err := Move(dir, cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	return &helper{cmd, bufio.NewReader(stdout)}
}

func (h *helper) result(t *testing.T) ioResult {
	t.Helper()
	for {
		line, err := h.out.ReadString('\n')
		if err != nil {
			t.Fatalf("the I/O helper ended without its result: %v", err)
		}
		var r ioResult
		if _, err := fmt.Sscanf(line, "IOHELPER bytes=%d ops=%d seconds=%g", &r.bytes, &r.ops, &r.seconds); err == nil {
			return r
		}
		if strings.HasPrefix(line, "IOHELPER ") {
			t.Fatalf("the I/O helper: %s", line)
		}
	}
}

// TestIOHelper is the helper process of TestIOMaxGuest (DEEVNET_IO_HELPER set), nothing otherwise.
func TestIOHelper(t *testing.T) {
	spec := os.Getenv("DEEVNET_IO_HELPER")
	if spec == "" {
		t.Skip("the I/O helper of TestIOMaxGuest")
	}
	var op, path string
	var block int
	var ms, total int64
	if _, err := fmt.Sscanf(spec, "%s %s %d %d %d", &op, &path, &block, &ms, &total); err != nil {
		fmt.Printf("IOHELPER bad spec %q: %v\n", spec, err)
		return
	}
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Printf("IOHELPER no go: %v\n", err)
		return
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_DIRECT, 0)
	if err != nil {
		fmt.Printf("IOHELPER open: %v\n", err)
		return
	}
	defer func() { _ = f.Close() }()
	// O_DIRECT wants an aligned buffer: a page of an anonymous mapping is
	buf, err := syscall.Mmap(-1, 0, block, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		fmt.Printf("IOHELPER mmap: %v\n", err)
		return
	}
	for i := range buf {
		buf[i] = byte(i)
	}
	start, deadline := time.Now(), time.Now().Add(time.Duration(ms)*time.Millisecond)
	var done, ops int64
	for time.Now().Before(deadline) && (total == 0 || done < total) {
		off := done % (4 << 20)
		var n int
		if op == "read" {
			n, err = f.ReadAt(buf, off)
		} else {
			n, err = f.WriteAt(buf, off)
		}
		if err != nil {
			fmt.Printf("IOHELPER %s at %d: %v\n", op, off, err)
			return
		}
		done, ops = done+int64(n), ops+1
	}
	fmt.Printf("IOHELPER bytes=%d ops=%d seconds=%g\n", done, ops, time.Since(start).Seconds())
}
