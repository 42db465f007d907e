package report_test

import (
	"testing"
	"time"

	"github.com/deevnet/tenant/internal/module/moduletest"
	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
	"github.com/deevnet/tenant/internal/report"
)

// BenchmarkVerifyNoOp is one tenant_verify run of a converged tenant (three VMs, a maintenance
// list, an envelope) at 20 ms of API latency: its wall time is the GETs' round trips.
// go test ./internal/report -run '^$' -bench VerifyNoOp -benchtime 20x
func BenchmarkVerifyNoOp(b *testing.B) {
	l := newLabWith(b, pvesim.DefaultConfig(), map[string]any{"count": 3})
	args := l.verifyArgs("vms", 3, "fail_on_failed", false, "maintenance", []any{node},
		"envelope", map[string]any{"vms": 8, "cores": 64, "memory": 65536, "disk": 1024})
	l.srv.SetLatency(20 * time.Millisecond)
	l.srv.ResetStats()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res, code := moduletest.Execute(b, report.VerifyModule(), args); code != 0 {
			b.Fatal(res)
		}
	}
	b.StopTimer()
	pvesimtest.ReportPerOp(b, l.srv)
}
