package cgroupslice

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeRoot is a directory laid out like a cgroup2 mount root that offers the given controllers.
func fakeRoot(t *testing.T, controllers string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{"cgroup.controllers": controllers, "cgroup.subtree_control": "", "cgroup.procs": ""} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPlaceWritesLimitsAndPid(t *testing.T) {
	root := fakeRoot(t, "cpuset cpu io memory hugetlb pids rdma misc\n")
	for i, pid := range []int{4242, 4242, 5151} { // the second run changes nothing; the third adds a VM
		dir, err := Place(root, "tdemo", Limits{MemoryMiB: 32768, Cores: 16}, pid)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if want := filepath.Join(root, "deevnet.slice", "tenant-tdemo.slice"); dir != want {
			t.Fatalf("dir %s, want %s", dir, want)
		}
		for file, want := range map[string]string{
			"cgroup.subtree_control":                        "+memory +cpu",
			"deevnet.slice/cgroup.subtree_control":          "+memory +cpu",
			"deevnet.slice/tenant-tdemo.slice/memory.max":   "34359738368", // 32768 MiB in bytes
			"deevnet.slice/tenant-tdemo.slice/cpu.max":      "1600000 100000",
			"deevnet.slice/tenant-tdemo.slice/cgroup.procs": itoa(pid),
		} {
			if got := read(t, filepath.Join(root, file)); got != want {
				t.Fatalf("run %d: %s is %q, want %q", i, file, got, want)
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestRefusedBeforeAnythingIsCreated(t *testing.T) {
	for _, c := range []struct {
		name, controllers, tenant string
		l                         Limits
		want                      string
	}{
		{"cgroup v1 controllers", "hugetlb\n", "tdemo", Limits{MemoryMiB: 1024, Cores: 1},
			`cgroup.controllers lists "hugetlb": the cgroup v2 controller(s) memory, cpu are not available there`},
		{"no cpu", "memory pids", "tdemo", Limits{MemoryMiB: 1024, Cores: 1}, "controller(s) cpu are not available"},
		{"a path in the name", "cpu memory", "../etc", Limits{MemoryMiB: 1024, Cores: 1}, `tenant "../etc": must be a lower-case DNS label`},
		{"no memory", "cpu memory", "tdemo", Limits{MemoryMiB: 0, Cores: 1}, "tenant tdemo: memory 0 MiB and cores 1 must each be at least 1"},
		{"no cores", "cpu memory", "tdemo", Limits{MemoryMiB: 1024, Cores: 0}, "memory 1024 MiB and cores 0 must each be at least 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := fakeRoot(t, c.controllers)
			_, err := Place(root, c.tenant, c.l, 4242)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(root, Parent)); err == nil {
				t.Fatalf("%s created", Parent)
			}
			if got := read(t, filepath.Join(root, "cgroup.subtree_control")); got != "" {
				t.Fatalf("subtree_control written: %q", got)
			}
		})
	}
}

func TestErrorsNameTheFile(t *testing.T) {
	root := fakeRoot(t, "cpu memory")
	// A directory where memory.max should be: the write fails, and the error says which file.
	if err := os.MkdirAll(filepath.Join(Dir(root, "tdemo"), "memory.max"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Place(root, "tdemo", Limits{MemoryMiB: 1024, Cores: 2}, 4242)
	want := `writing "1073741824" to ` + filepath.Join(Dir(root, "tdemo"), "memory.max")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if err := Move(Dir(root, "tdemo"), 0); err == nil || !strings.Contains(err.Error(), "pid 0: must be at least 1") {
		t.Fatalf("pid 0: %v", err)
	}
}

// cgroup2Root is this machine's cgroup2 mount point, from /proc/self/mountinfo.
func cgroup2Root(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// "36 25 0:31 / /sys/fs/cgroup rw,... shared:9 - cgroup2 cgroup2 rw,..."
		pre, post, ok := strings.Cut(s.Text(), " - ")
		if ok && strings.HasPrefix(post, "cgroup2 ") {
			return strings.Fields(pre)[4]
		}
	}
	t.Fatal("no cgroup2 mount in /proc/self/mountinfo: PVE 9 nodes and systemd hosts have one")
	return ""
}

// TestRealKernel places a process in a real cgroup v2 group, so it changes the cgroups of the
// machine it runs on: it runs only inside the throw-away QEMU guest of test/guest/run.sh (make
// test-route; DEEVNET_GUEST=1, cgroup2 mounted by the guest's init, root, its own kernel), never
// on a build or CI machine, where it skips whatever the user. There it proves, against the kernel:
// the refusal before anything is created where the controllers are not offered, Move into a bare
// group, and the full placement with the limits read back (issue 35, part 3; issue 53, item 6).
func TestRealKernel(t *testing.T) {
	if os.Getenv("DEEVNET_GUEST") != "1" {
		t.Skip("moves a process between the real cgroups of the machine it runs on: runs only in the " +
			"throw-away QEMU guest (make test-route, test/guest/run.sh sets DEEVNET_GUEST=1)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the guest runs its tests as root: placing a process needs it")
	}
	root := cgroup2Root(t)
	ctrl := read(t, filepath.Join(root, "cgroup.controllers"))
	if have := strings.Fields(ctrl); !contains(have, "memory") || !contains(have, "cpu") {
		t.Fatalf("the guest kernel's cgroup2 root offers %q, want memory and cpu", strings.TrimSpace(ctrl))
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	pid := sleep.Process.Pid
	tenant := "deevnet-test-" + itoa(os.Getpid()%10000)

	t.Run("refused where the controllers are not offered", func(t *testing.T) {
		// A group's cgroup.controllers is what its parent enables in cgroup.subtree_control: a
		// grandchild of a group just made, whose subtree_control is empty, is offered none.
		bare := filepath.Join(root, "deevnet-test-bare-"+itoa(os.Getpid()%10000))
		inner := filepath.Join(bare, "inner")
		for _, d := range []string{bare, inner} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { _ = os.Remove(inner); _ = os.Remove(bare) })
		_, err := Place(inner, tenant, Limits{MemoryMiB: 64, Cores: 1}, pid)
		if err == nil || !strings.Contains(err.Error(), "are not available there") {
			t.Fatalf("error %v, want the controllers refused", err)
		}
		if _, err := os.Stat(filepath.Join(inner, Parent)); err == nil {
			t.Fatalf("%s created", filepath.Join(inner, Parent))
		}
	})
	t.Run("moved into a bare group", func(t *testing.T) { moveIntoRealGroup(t, root, pid) })
	t.Run("placed with its limits", func(t *testing.T) {
		dir, err := Place(root, tenant, Limits{MemoryMiB: 64, Cores: 1}, pid)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(itoa(pid)), 0o644)
			_ = os.Remove(dir)
			_ = os.Remove(filepath.Join(root, Parent))
		})
		if got := strings.TrimSpace(read(t, filepath.Join(dir, "memory.max"))); got != "67108864" {
			t.Fatalf("memory.max %q", got)
		}
		if got := strings.TrimSpace(read(t, filepath.Join(dir, "cpu.max"))); got != "100000 100000" {
			t.Fatalf("cpu.max %q", got)
		}
		wantCgroup(t, pid, "/"+Parent+"/tenant-"+tenant+".slice")
	})
}

// moveIntoRealGroup proves Move against the kernel where only a bare group can be made: the pid
// is then in that group by /proc/<pid>/cgroup.
func moveIntoRealGroup(t *testing.T, root string, pid int) {
	dir := filepath.Join(root, "deevnet-test-"+itoa(os.Getpid()%10000))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("a bare group on the real cgroup2 (root is needed): %v", err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(itoa(pid)), 0o644)
		_ = os.Remove(dir)
	})
	if err := Move(dir, pid); err != nil {
		t.Fatal(err)
	}
	wantCgroup(t, pid, "/"+filepath.Base(dir))
	if err := Move(dir, 999999999); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "cgroup.procs")) {
		t.Fatalf("a pid that does not exist: %v, want an error naming cgroup.procs", err)
	}
}

func wantCgroup(t *testing.T, pid int, want string) {
	t.Helper()
	for _, line := range strings.Split(read(t, "/proc/"+itoa(pid)+"/cgroup"), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			if p != want {
				t.Fatalf("pid %d in %s, want %s", pid, p, want)
			}
			return
		}
	}
	t.Fatalf("pid %d has no cgroup2 line", pid)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestHolds(t *testing.T) {
	root := fakeRoot(t, "cpu memory\n")
	dir := Dir(root, "tdemo")
	if in, err := Holds(dir, 4242); err != nil || in {
		t.Fatalf("a group not made yet: %v %v, want false", in, err)
	}
	if _, err := Place(root, "tdemo", Limits{MemoryMiB: 1024, Cores: 1}, 4242); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("17\n4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for pid, want := range map[int]bool{4242: true, 17: true, 424: false, 42420: false} {
		if in, err := Holds(dir, pid); err != nil || in != want {
			t.Errorf("Holds(%d): %v %v, want %v", pid, in, err, want)
		}
	}
}

// Changes names each limit that differs from the group's, so the guard writes and reports only a
// change; a group not made yet is not made by asking.
func TestChanges(t *testing.T) {
	root := fakeRoot(t, "cpu memory\n")
	dir := Dir(root, "tdemo")
	if ch, made, err := Changes(dir, Limits{MemoryMiB: 1024, Cores: 2}); err != nil || made || ch != nil {
		t.Fatalf("a group not made yet: %v %v %v", ch, made, err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("Changes made the group")
	}
	if _, err := Ensure(root, "tdemo", Limits{MemoryMiB: 32768, Cores: 16}); err != nil {
		t.Fatal(err)
	}
	// the kernel reads a value back with a newline
	if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte("1600000 100000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		l    Limits
		want string
	}{
		{Limits{MemoryMiB: 32768, Cores: 16}, ""},
		{Limits{MemoryMiB: 2048, Cores: 16}, "memory.max 34359738368 -> 2147483648"},
		{Limits{MemoryMiB: 2048, Cores: 4}, "memory.max 34359738368 -> 2147483648, cpu.max 1600000 100000 -> 400000 100000"},
	} {
		ch, made, err := Changes(dir, c.l)
		if err != nil || !made || strings.Join(ch, ", ") != c.want {
			t.Errorf("Changes(%v): %q %v %v, want %q", c.l, ch, made, err, c.want)
		}
	}
	if err := os.Remove(filepath.Join(dir, "cpu.max")); err != nil {
		t.Fatal(err)
	}
	if ch, _, err := Changes(dir, Limits{MemoryMiB: 32768, Cores: 1}); err != nil || strings.Join(ch, ", ") != "cpu.max none -> 100000 100000" {
		t.Fatalf("a missing cpu.max: %q %v", ch, err)
	}
	if err := os.Remove(filepath.Join(dir, "memory.max")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "memory.max"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Changes(dir, Limits{MemoryMiB: 1, Cores: 1}); err == nil || !strings.Contains(err.Error(), "reading "+filepath.Join(dir, "memory.max")) {
		t.Fatalf("an unreadable memory.max: %v, want the file named", err)
	}
}

// io.max: one line per device behind the tenant's storage, as the kernel reads it back; the io
// controller handed down only when there is one (a node without it keeps memory and CPU); a
// change names each device's line before and after, and a device no longer named goes back to
// no cap.
func TestIOMax(t *testing.T) {
	root := fakeRoot(t, "cpu io memory\n")
	sda := IOLimit{Dev: "8:0", RBps: 400 << 20, WBps: 200 << 20, WIOPS: 4000}
	nvme := IOLimit{Dev: "259:0", RBps: 400 << 20, WBps: 200 << 20, WIOPS: 4000}
	l := Limits{MemoryMiB: 1024, Cores: 2, IO: []IOLimit{sda, nvme}}
	dir, err := Ensure(root, "tdemo", l)
	if err != nil {
		t.Fatal(err)
	}
	want := "8:0 rbps=419430400 wbps=209715200 riops=max wiops=4000\n259:0 rbps=419430400 wbps=209715200 riops=max wiops=4000"
	if got := read(t, filepath.Join(dir, "io.max")); got != want {
		t.Fatalf("io.max %q, want %q", got, want)
	}
	for _, f := range []string{"cgroup.subtree_control", "deevnet.slice/cgroup.subtree_control"} {
		if got := read(t, filepath.Join(root, f)); got != "+memory +cpu +io" {
			t.Fatalf("%s %q", f, got)
		}
	}
	if ch, _, err := Changes(dir, l); err != nil || ch != nil {
		t.Fatalf("Changes of what is there: %q %v", ch, err)
	}
	// the write rate halved, nvme no longer behind the storage
	sda.WBps = 100 << 20
	ch, _, err := Changes(dir, Limits{MemoryMiB: 1024, Cores: 2, IO: []IOLimit{sda}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ch, ", "), "io.max 8:0 rbps=419430400 wbps=209715200 riops=max wiops=4000 -> 8:0 rbps=419430400 wbps=104857600 riops=max wiops=4000, "+
		"io.max 259:0 rbps=419430400 wbps=209715200 riops=max wiops=4000 -> 259:0 rbps=max wbps=max riops=max wiops=max"; got != want {
		t.Fatalf("Changes %q, want %q", got, want)
	}
	if _, err := Ensure(root, "tdemo", Limits{MemoryMiB: 1024, Cores: 2, IO: []IOLimit{sda}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "io.max")); got != "8:0 rbps=419430400 wbps=104857600 riops=max wiops=4000" {
		t.Fatalf("io.max %q", got)
	}
	// without io: memory and cpu only, even where the root has no io controller
	root2 := fakeRoot(t, "cpu memory\n")
	if _, err := Ensure(root2, "tdemo", Limits{MemoryMiB: 1024, Cores: 2}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(root2, "cgroup.subtree_control")); got != "+memory +cpu" {
		t.Fatalf("subtree_control %q", got)
	}
	if _, err := os.Stat(filepath.Join(Dir(root2, "tdemo"), "io.max")); !os.IsNotExist(err) {
		t.Fatalf("io.max written without io limits: %v", err)
	}
}

// Bad io.max input is refused, naming it, before anything is created.
func TestIOMaxRefused(t *testing.T) {
	for _, c := range []struct {
		controllers string
		io          []IOLimit
		want        string
	}{
		{"cpu memory", []IOLimit{{Dev: "8:0", WBps: 1}}, "the cgroup v2 controller(s) io are not available there"},
		{"cpu io memory", []IOLimit{{Dev: "sda", WBps: 1}}, `tenant tdemo: io.max device "sda": must be one MAJ:MIN, once`},
		{"cpu io memory", []IOLimit{{Dev: "8:0", WBps: 1}, {Dev: "8:0", RBps: 1}}, `io.max device "8:0": must be one MAJ:MIN, once`},
		{"cpu io memory", []IOLimit{{Dev: "8:0", WBps: -1}}, "tenant tdemo: io.max on 8:0: rbps 0, wbps -1, riops 0, wiops 0: no rate may be negative"},
	} {
		root := fakeRoot(t, c.controllers)
		_, err := Ensure(root, "tdemo", Limits{MemoryMiB: 1024, Cores: 2, IO: c.io})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.io, err, c.want)
		}
		if _, err := os.Stat(filepath.Join(root, Parent)); !os.IsNotExist(err) {
			t.Errorf("%v: %s created before the refusal", c.io, Parent)
		}
	}
}
