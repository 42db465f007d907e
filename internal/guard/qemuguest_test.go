package guard

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/cgroupslice"
)

// The guest proof of QEMUOverheadMiB (issue 53): inside test/guest/run.sh's QEMU guest (its own
// kernel, DEEVNET_GUEST=1; `make test-guard-guest`), never on the machine running the tests. A
// real qemu-system-x86_64 with the template's machine and devices (as test/guest/qemu-overhead.sh
// starts it) and its guest RAM preallocated (-mem-prealloc: all of it touched), paused (-S: no
// guest code runs, so no TCG code buffer, which a KVM node has none of), is started inside a
// tenant's group: with memory.max = its RAM + QEMUOverheadMiB it runs, and the kernel's own count
// (memory.current: page tables and kernel memory included, which VmRSS is not) is reported; with
// memory.max = its RAM alone (the share, as before issue 53) the kernel OOM-kills it in the group.
func TestQEMUMemoryGuest(t *testing.T) {
	if os.Getenv("DEEVNET_GUEST") != "1" {
		t.Skip("needs test/guest/run.sh's guest with QEMU in it (make test-guard-guest)")
	}
	if _, err := os.Stat("/usr/bin/qemu-system-x86_64"); err != nil {
		t.Skip("no QEMU in this guest: make test-guard-guest runs this test (GUEST_TOOLS, GUEST_FILES)")
	}
	root := "/sys/fs/cgroup"
	if b, _ := os.ReadFile("/proc/self/mountinfo"); !strings.Contains(string(b), " - cgroup2 ") {
		if err := syscall.Mount("cgroup2", root, "cgroup2", 0, ""); err != nil {
			t.Fatalf("mounting cgroup2 in the guest: %v", err)
		}
	}
	dir := t.TempDir()
	disk, cd := filepath.Join(dir, "disk.raw"), filepath.Join(dir, "ci.raw")
	for f, size := range map[string]int64{disk: 3 << 30, cd: 4 << 20} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(f, size); err != nil {
			t.Fatal(err)
		}
	}
	for _, mem := range []int{256, 512} {
		for _, c := range []struct {
			name     string
			max      int // memory.max in MiB
			survives bool
		}{
			{"with QEMU's own memory", mem + QEMUOverheadMiB(mem, nil), true},
			{"the share alone (the control)", mem, false},
		} {
			t.Run(strconv.Itoa(mem)+" MiB "+c.name, func(t *testing.T) {
				tenant := "tq" + strconv.Itoa(mem) + map[bool]string{true: "a", false: "b"}[c.survives]
				group, err := cgroupslice.Ensure(root, tenant, cgroupslice.Limits{MemoryMiB: c.max, Cores: 1})
				if err != nil {
					t.Fatal(err)
				}
				qmp := filepath.Join(dir, tenant+".qmp")
				// the shell enters the group, then becomes QEMU: every page QEMU touches is the group's
				cmd := exec.Command("sh", "-c", `echo $$ > "$1/cgroup.procs" && shift && exec "$@"`, "sh", group,
					"/usr/bin/qemu-system-x86_64", "-accel", "tcg", "-machine", "pc", "-smp", "2,sockets=1,cores=2", "-m", strconv.Itoa(mem), "-mem-prealloc", "-S",
					"-nodefaults", "-no-user-config", "-display", "none", "-vnc", "unix:"+filepath.Join(dir, tenant+".vnc"), "-vga", "std",
					"-chardev", "socket,id=qmp,path="+qmp+",server=on,wait=off", "-mon", "chardev=qmp,mode=control",
					"-device", "pci-bridge,id=pci.1,chassis_nr=1,bus=pci.0,addr=0x1e", "-device", "pci-bridge,id=pci.2,chassis_nr=2,bus=pci.0,addr=0x1f",
					"-device", "piix3-usb-uhci,id=uhci,bus=pci.0,addr=0x1.0x2", "-device", "usb-tablet,id=tablet,bus=uhci.0,port=1",
					"-device", "virtio-balloon-pci,id=balloon0,bus=pci.0,addr=0x3",
					"-chardev", "socket,path="+filepath.Join(dir, tenant+".qga")+",server=on,wait=off,id=qga0", "-device", "virtio-serial,id=qga0,bus=pci.0,addr=0x8",
					"-device", "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0",
					"-drive", "file="+cd+",if=none,id=drive-ide2,media=cdrom,format=raw", "-device", "ide-cd,bus=ide.1,unit=0,drive=drive-ide2,id=ide2",
					"-device", "virtio-scsi-pci,id=virtioscsi0,bus=pci.1,addr=0x1",
					"-drive", "file="+disk+",if=none,id=drive-scsi0,format=raw,cache=none,aio=io_uring,discard=on,detect-zeroes=unmap",
					"-device", "scsi-hd,bus=virtioscsi0.0,channel=0,scsi-id=0,lun=0,drive=drive-scsi0,id=scsi0",
					"-device", "virtio-net-pci,id=net0,bus=pci.0,addr=0x12")
				out, err := os.Create(filepath.Join(dir, tenant+".log"))
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stdout, cmd.Stderr = out, out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				t.Cleanup(func() {
					_ = cmd.Process.Kill()
					if err := <-exited; err != nil {
						t.Logf("QEMU ended: %v", err) // killed here, or earlier by the OOM killer
					}
				})
				// up: its monitor greets (the main loop runs, after -mem-prealloc touched all the RAM;
				// the socket itself exists before that)
				var waitErr error
				up, gone := false, false
				for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline) && !up && !gone; {
					select {
					case waitErr = <-exited:
						gone = true
						exited <- waitErr
					case <-time.After(500 * time.Millisecond):
						up = greets(qmp)
					}
				}
				events := kv(t, filepath.Join(group, "memory.events"))
				if !c.survives {
					if up || events["oom_kill"] < 1 {
						b, _ := os.ReadFile(out.Name())
						t.Fatalf("QEMU of %d MiB under memory.max %d MiB: up %v, oom_kill %d, exit %v: want it OOM-killed in its group (%s)", mem, c.max, up, events["oom_kill"], waitErr, b)
					}
					t.Logf("memory.max %d MiB (its RAM alone): QEMU OOM-killed in %s (oom_kill %d, %v)", c.max, filepath.Base(group), events["oom_kill"], waitErr)
					return
				}
				if !up {
					b, _ := os.ReadFile(out.Name())
					t.Fatalf("QEMU of %d MiB under memory.max %d MiB not up: exit %v, oom_kill %d: %s", mem, c.max, waitErr, events["oom_kill"], b)
				}
				select {
				case waitErr = <-exited:
					exited <- waitErr
					b, _ := os.ReadFile(out.Name())
					t.Fatalf("QEMU of %d MiB under memory.max %d MiB ended once up: %v, oom_kill %d: %s", mem, c.max, waitErr, kv(t, filepath.Join(group, "memory.events"))["oom_kill"], b)
				case <-time.After(2 * time.Second):
				}
				cur := kv(t, filepath.Join(group, "memory.stat"))
				current, _ := strconv.ParseInt(strings.TrimSpace(read(t, filepath.Join(group, "memory.current"))), 10, 64)
				status := kv(t, "/proc/"+strconv.Itoa(cmd.Process.Pid)+"/status")
				t.Logf("QEMU of %d MiB (RAM preallocated, paused) under memory.max %d MiB: memory.current %d MiB = RAM + %d MiB (anon %d, file %d, kernel %d, pagetables %d MiB); VmRSS %d MiB; oom_kill %d",
					mem, c.max, current>>20, current>>20-int64(mem), cur["anon"]>>20, cur["file"]>>20, cur["kernel"]>>20, cur["pagetables"]>>20, status["VmRSS:"]>>10, events["oom_kill"])
				if events["oom_kill"] != 0 || current>>20 > int64(c.max) {
					t.Fatalf("oom_kill %d, memory.current %d MiB over memory.max %d", events["oom_kill"], current>>20, c.max)
				}
			})
		}
	}
}

// greets says whether QEMU's QMP monitor at path answers query-status within a few seconds: its
// greeting comes from the monitor's own thread before the machine is made, an answer to a
// command from the main loop, once -mem-prealloc has touched all the RAM.
func greets(path string) bool {
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	for _, cmd := range []string{"", `{"execute": "qmp_capabilities"}`, `{"execute": "query-status"}`} {
		if cmd != "" {
			if _, err := conn.Write([]byte(cmd + "\n")); err != nil {
				return false
			}
		}
		line, err := r.ReadString('\n')
		if err != nil || (cmd != "" && !strings.Contains(line, `"return"`)) {
			return false
		}
	}
	return true
}

// kv reads a "key value" file (memory.stat, memory.events, /proc/<pid>/status) into numbers.
func kv(t *testing.T, file string) map[string]int64 {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	out := map[string]int64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fs := strings.Fields(s.Text()); len(fs) >= 2 {
			out[fs[0]], _ = strconv.ParseInt(fs[1], 10, 64)
		}
	}
	return out
}

func read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
