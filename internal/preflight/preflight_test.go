package preflight

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// twoNodes is the lab's cluster (extensions/molecule/shared/pvesim.yml): two nodes, a QDevice,
// tenant tdemo's thin pool on each node.
func twoNodes() pvesim.Config {
	cfg := pvesim.DefaultConfig()
	cfg.Nodes = append(cfg.Nodes, pvesim.NodeConfig{Name: "dv02hyp002p03", MaxCPU: 16, MaxMem: 68719476736})
	cfg.Quorum = pvesim.QuorumConfig{QDevice: &pvesim.QDeviceConfig{Host: "dv02hyp001p01"}}
	cfg.Disks = []pvesim.DiskConfig{{VG: "pve", ThinPool: "tenant-tdemo", Size: 256 << 30}}
	return cfg
}

func input() Input {
	good := Packages{FRR: "10.4.1-1+pve1", Ifupdown2: "3.3.0-1+pmx1"}
	return Input{Nodes: []string{"dv02hyp002p02", "dv02hyp002p03"}, Template: 9000, Storages: []string{"local-lvm"},
		TenantVG: "pve", Tenants: []string{"tdemo"}, Hookscript: true, SnippetsDir: "/var/lib/vz/snippets",
		QDevice: "dv02hyp001p01", Packages: map[string]Packages{"dv02hyp002p02": good, "dv02hyp002p03": good}}
}

func byName(checks []Check) map[string]Check {
	m := map[string]Check{}
	for _, c := range checks {
		m[c.Name] = c
	}
	return m
}

// Each assumption broken in turn: exactly its check differs (with the words of the difference),
// every other check is ok, and the simulator counts no write.
func TestEachBrokenAssumptionIsReportedAlone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   func(*pvesim.Config)
		after func(*pvesim.Server)
		in    func(*Input)
		check string
		want  string
	}{
		{name: "none"},
		{name: "pve 8", cfg: func(c *pvesim.Config) { c.Version, c.Release = "8.4.1", "8.4" }, check: "pve_version", want: "version 8.4.1, not 9.x"},
		{name: "no fabrics endpoint", after: func(s *pvesim.Server) {
			s.InjectFault(pvesim.Fault{Method: "GET", Path: "/cluster/sdn/fabrics/all", Status: 501, Message: "Method 'GET /cluster/sdn/fabrics/all' not implemented"})
		}, check: "api_endpoints", want: "GET /cluster/sdn/fabrics/all: PVE API 501"},
		{name: "privilege missing", after: func(s *pvesim.Server) { s.DropPrivileges([]string{"VM.Migrate"}) },
			check: "privileges", want: "privilege VM.Migrate does not exist"},
		{name: "tenant thin pool missing", after: func(s *pvesim.Server) {
			if err := s.SetDisks("dv02hyp002p03", pvesim.DiskRequest{VG: "pve", ThinPool: "tenant-tdemo", Remove: true}); err != nil {
				t.Fatal(err)
			}
		}, check: "tenant_storage", want: "node dv02hyp002p03: no thin pool pve/tenant-tdemo"},
		{name: "shared storage without images", cfg: func(c *pvesim.Config) {
			c.Storages = append(c.Storages, pvesim.StorageConfig{ID: "shared", Type: "dir", Content: []string{"iso"}, Path: "/mnt/shared"})
		}, in: func(in *Input) { in.Storages = append(in.Storages, "shared") }, check: "storages", want: "storage shared has content iso, not images"},
		{name: "no snippets on local", cfg: func(c *pvesim.Config) { c.Storages[0].Content = []string{"iso", "vztmpl", "backup"} },
			check: "hookscript_storage", want: "without snippets"},
		{name: "template is a VM", cfg: func(c *pvesim.Config) {
			c.Templates[0].Template = false
			delete(c.Templates[0].Config, "template")
		}, check: "template", want: "9000 is a VM, not a template"},
		{name: "template with a NIC", cfg: func(c *pvesim.Config) { c.Templates[0].Config["net0"] = "virtio,bridge=vmbr0" },
			check: "template", want: "9000 has net0"},
		{name: "template without agent", cfg: func(c *pvesim.Config) { c.Templates[0].Config["agent"] = "0" },
			check: "template_guest", want: `agent is "0", not 1`},
		{name: "two votes", cfg: func(c *pvesim.Config) { c.Quorum = pvesim.QuorumConfig{Votes: map[string]int{"dv02hyp002p02": 2}} },
			check: "quorum", want: "node dv02hyp002p02 has quorum_votes 2, not 1"},
		{name: "frr 8", in: func(in *Input) {
			in.Packages["dv02hyp002p03"] = Packages{FRR: "8.4.4-1.1~deb12u1", Ifupdown2: "3.3.0-1+pmx1"}
		},
			check: "node_packages", want: "dv02hyp002p03: frr 8.4.4-1.1~deb12u1, not 10.x"},
		{name: "ifupdown", in: func(in *Input) { in.Packages["dv02hyp002p02"] = Packages{FRR: "10.4.1-1+pve1"} },
			check: "node_packages", want: "dv02hyp002p02: ifupdown2 is not installed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := twoNodes()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			srv, c := pvesimtest.Start(t, cfg)
			if tc.after != nil {
				tc.after(srv)
			}
			in := input()
			if tc.in != nil {
				tc.in(&in)
			}
			srv.ResetStats()
			checks, err := Run(context.Background(), c, in)
			if err != nil {
				t.Fatal(err)
			}
			if st := srv.Stats(); st.Writes != 0 {
				t.Fatalf("%d write(s): %v", st.Writes, st.Requests)
			}
			for _, ch := range checks {
				switch {
				case ch.Name == tc.check:
					if ch.Status != Differs || !strings.Contains(strings.Join(ch.Differs, "\n"), tc.want) {
						t.Errorf("%s: %s %q, want it to differ with %q", ch.Name, ch.Status, ch.Differs, tc.want)
					}
				case ch.Status != OK:
					t.Errorf("%s: %s %q (found %s), want ok", ch.Name, ch.Status, ch.Differs, ch.Found)
				}
			}
			failed := Failed(checks)
			if fatal := tc.check != "" && tc.check != "template_guest"; fatal != slices.Contains(failed, tc.check) || len(failed) > 1 {
				t.Errorf("failed checks %v (broken: %q)", failed, tc.check)
			}
		})
	}
}

// A node whose packages could not be read, and the guard turned off: unknown and skipped, neither
// a failure.
func TestUnreadAndSkipped(t *testing.T) {
	_, c := pvesimtest.Start(t, twoNodes())
	in := input()
	in.Hookscript, in.Storages = false, nil
	in.Packages = map[string]Packages{"dv02hyp002p02": {Error: "not reachable"}}
	checks, err := Run(context.Background(), c, in)
	if err != nil {
		t.Fatal(err)
	}
	m := byName(checks)
	if m["node_packages"].Status != Unknown || m["hookscript_storage"].Status != Skipped || m["storages"].Status != Skipped {
		t.Fatalf("checks %+v", checks)
	}
	if f := Failed(checks); len(f) != 0 {
		t.Fatalf("failed %v", f)
	}
	lines := strings.Join(Lines(checks), "\n")
	for _, w := range []string{"unknown  dv02hyp002p02: not reachable", "dv02hyp002p03: not read"} {
		if !strings.Contains(lines, w) {
			t.Errorf("table lacks %q:\n%s", w, lines)
		}
	}
}

// The vm readers get a client that refuses every write before it is sent.
func TestReadOnlyRefusesWrites(t *testing.T) {
	ro := readOnly{nil}
	for _, err := range []error{ro.Post(context.Background(), "/x", nil, nil), ro.Put(context.Background(), "/x", nil, nil),
		ro.Delete(context.Background(), "/x", nil, nil), ro.WaitTask(context.Background(), "UPID")} {
		if err == nil || !strings.Contains(err.Error(), "only reads") {
			t.Fatalf("err %v", err)
		}
	}
}

func TestMajor(t *testing.T) {
	for v, want := range map[string]string{"10.4.1-1+pve1": "", "1:10.2.2-1": "", "8.4.4-1": "frr 8.4.4-1, not 10.x", "": "frr is not installed"} {
		if got := major(v, "10", "frr"); got != want {
			t.Errorf("major(%q) = %q, want %q", v, got, want)
		}
	}
}
