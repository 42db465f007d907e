package pvesim

import "testing"

// /cluster/resources' maxcpu is vmstatus's cpus (qemu-server QemuServer.pm): sockets x cores
// capped at the node's CPU count, then vcpus when set. It is not what a guest may run with, so
// the envelope guard reads running guests' configurations instead (internal/guard).
func TestConformanceMaxCPUCappedAtTheNode(t *testing.T) {
	s := startSim(t) // the default node has 16 CPUs
	c := rootClient(t, s)
	for _, tc := range []struct {
		name    string
		params  []string
		maxcpu  float64
		because string
	}{
		{"inside the node", []string{"sockets", "2", "cores", "4"}, 8, "2 x 4"},
		{"over the node", []string{"sockets", "4", "cores", "16"}, 16, "4 x 16 = 64, capped at the node's 16 CPUs"},
		{"vcpus after the cap", []string{"sockets", "4", "cores", "16", "vcpus", "2"}, 2, "vcpus 2 replaces the capped 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.ok("PUT", "/nodes/"+node+"/qemu/9000/config", vals(tc.params...), nil)
			var rs []map[string]any
			c.ok("GET", "/cluster/resources", vals("type", "vm"), &rs)
			for _, e := range rs {
				if e["id"] == "qemu/9000" {
					if e["maxcpu"] != tc.maxcpu {
						t.Fatalf("maxcpu %v, want %v (%s)", e["maxcpu"], tc.maxcpu, tc.because)
					}
					return
				}
			}
			t.Fatalf("no qemu/9000 in %v", rs)
		})
	}
}
