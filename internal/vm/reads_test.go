package vm_test

import (
	"strings"
	"testing"
)

// One tenant_vm run reads the inventory once, whatever the number of VMs, and each VM's config
// at most once per state (before the writes, and once after them for the result).
func TestEachListReadOncePerRun(t *testing.T) {
	e := newSim(t)
	args := map[string]any{"count": 3, "cores": 2, "memory": 1024, "disk": "8G", "ciuser": "debian", "sshkeys": []any{sshKey}}
	for _, what := range []string{"first run", "no-op", "check mode"} {
		e.srv.ResetStats()
		res, code := e.run(args, what == "check mode", true)
		if code != 0 {
			t.Fatalf("%s: %v", what, res)
		}
		s := e.srv.Stats()
		for key, n := range s.Requests {
			limit := 0
			switch {
			case !strings.HasPrefix(key, "GET "):
				continue
			case key == "GET /cluster/resources", strings.HasPrefix(key, "GET /pools/"), strings.HasPrefix(key, "GET /cluster/sdn/"):
				limit = 1
			case strings.HasSuffix(key, "/pending"), key == "GET /cluster/nextid":
				limit = 3 // one per VM
			default:
				continue
			}
			if n > limit {
				t.Errorf("%s: %s read %d times, want at most %d", what, key, n, limit)
			}
		}
		if what != "first run" && s.Writes != 0 {
			t.Errorf("%s: %d writes", what, s.Writes)
		}
	}
}
