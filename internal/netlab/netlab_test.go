package netlab

import (
	"os/exec"
	"strings"
	"testing"
)

// Up builds the unconverged lab (no egress yet) and Down removes every namespace.
func TestUpDown(t *testing.T) {
	Require(t)
	lab, err := Up(Config{Tenants: 3})
	if err != nil {
		t.Fatal(err)
	}
	downed := false
	t.Cleanup(func() {
		if !downed {
			_ = lab.Down()
		}
	})
	if len(lab.Namespaces()) != 7 || !strings.HasPrefix(lab.HV, "dvt-") {
		t.Fatalf("namespaces: %v", lab.Namespaces())
	}
	// the perimeter side works before any hypervisor route exists
	if err := lab.Ping(lab.Mgmt, lab.MgmtGW); err != nil {
		t.Errorf("management host -> perimeter: %v", err)
	}
	if err := lab.Ping(lab.Perimeter, lab.OutsideHost); err != nil {
		t.Errorf("perimeter -> outside: %v", err)
	}
	// egress is not there until transit_route converges the hypervisor
	if lab.Ping(lab.Tenants[0].NS, lab.OutsideHost) == nil {
		t.Error("tenant reaches the outside host before convergence")
	}
	if _, err := lab.Run("somebody-elses-ns", "true"); err == nil {
		t.Error("Run accepted a namespace outside the lab")
	}
	if err := lab.Down(); err != nil {
		t.Fatal(err)
	}
	downed = true
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), lab.Prefix) {
		t.Errorf("namespaces left after Down: %s", out)
	}
	if _, err := Up(Config{Tenants: 64}); err == nil {
		t.Error("64 tenants accepted")
	}
}
