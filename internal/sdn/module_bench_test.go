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

// BenchmarkVRFNoOp is one tenant_vrf no-op run (four VNets) at 20 ms of API latency, the
// playbook's case: its wall time is the GETs' round trips. apply=true also reads each node's
// zone status. go test ./internal/sdn -run '^$' -bench VRFNoOp -benchtime 20x
func BenchmarkVRFNoOp(b *testing.B) {
	for _, apply := range []bool{false, true} {
		b.Run(fmt.Sprintf("apply=%t", apply), func(b *testing.B) {
			e := newEnv(b)
			setup(b, e)
			args := map[string]any{"name": "tdemo", "index": 1, "vnet_count": 4, "apply": true}
			must(b, e.vrf(args, false), true)
			args["apply"] = apply
			e.srv.SetLatency(20 * time.Millisecond)
			e.srv.ResetStats()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := e.vrf(args, false); r.failed() || r.changed() {
					b.Fatal(r.res)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(e.requests())/float64(b.N), "requests/op")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
}
