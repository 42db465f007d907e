package vm_test

import (
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// BenchmarkNoOp is one tenant_vm no-op run (three VMs) at 20 ms of API latency, the playbook's
// case: its wall time is the GETs' round trips.
// go test ./internal/vm -run '^$' -bench NoOp -benchtime 20x
func BenchmarkNoOp(b *testing.B) {
	e := newSim(b)
	args := map[string]any{"count": 3, "cores": 2, "memory": 1024, "ciuser": "debian", "sshkeys": []any{sshKey}}
	if res, code := e.run(args, false, false); code != 0 {
		b.Fatal(res)
	}
	e.srv.SetLatency(20 * time.Millisecond)
	e.srv.ResetStats()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res, code := e.run(args, false, false); code != 0 || res["changed"] != false {
			b.Fatal(res)
		}
	}
	b.StopTimer()
	pvesimtest.ReportPerOp(b, e.srv)
}
