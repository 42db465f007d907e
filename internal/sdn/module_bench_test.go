package sdn

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkConverge10Tenants: staging 10 tenants and one apply, then the no-op run, with 2 ms of
// API latency per request (a LAN round trip to the node); requests per run as custom metrics.
func BenchmarkConverge10Tenants(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b)
		setup(b, e)
		e.srv.SetLatency(2 * time.Millisecond)
		e.srv.ResetStats()
		b.StartTimer()
		var expect []any
		for k := 1; k <= 10; k++ {
			r := e.vrf(map[string]any{"name": fmt.Sprintf("t%02d", k), "index": k}, false)
			expect = append(expect, toAny(r.strs("pending_objects"))...)
		}
		if r := e.apply(map[string]any{"expect": expect}, false); r.failed() {
			b.Fatal(r.msg())
		}
		b.StopTimer()
		b.ReportMetric(float64(e.requests()), "requests/converge")
		e.srv.ResetStats()
		for k := 1; k <= 10; k++ {
			e.vrf(map[string]any{"name": fmt.Sprintf("t%02d", k), "index": k}, false)
		}
		e.apply(map[string]any{"expect": expect}, false)
		b.ReportMetric(float64(e.requests()), "requests/noop")
		_ = e.srv.Close()
		b.StartTimer()
	}
}
