package report_test

import (
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
)

// TestReportShowsQuorum: the report's Quorum section is votequorum's view as PVE's API shows it
// (docs/adr/0015-quorum.md): one member quorate alone; two members and a QDevice keep quorum with
// one away (2 of 3); with the QDevice's host down too there is none (1 of 3), and the report says so.
func TestReportShowsQuorum(t *testing.T) {
	_, md := newLab(t).report(true, tdemo(passed))
	wantIn(t, "one member", md, "## Quorum", "The cluster is quorate: 1 of 1 expected votes, quorum 1.",
		"| dv02hyp002p02 | 1 | 1 | yes |", "No QDevice.")

	const node2 = "dv02hyp002p03"
	cfg := pvesim.DefaultConfig()
	cfg.Nodes = append(cfg.Nodes, pvesim.NodeConfig{Name: node2, MaxCPU: 16, MaxMem: 68719476736})
	cfg.Quorum.QDevice = &pvesim.QDeviceConfig{Host: "dv02hyp001p01"}
	l := newLabWith(t, cfg, map[string]any{"count": 1})
	l.must(l.srv.SetNodeOffline(node2, "", 0))
	_, md = l.report(true, tdemo(passed))
	wantIn(t, "two members and a QDevice, one away", md, "The cluster is quorate: 2 of 3 expected votes, quorum 2.",
		"| dv02hyp002p03 | 2 | 1 | **no** |", "| QDevice dv02hyp001p01:5403 (Fifty-Fifty split) | | 1 | Connected |")
	l.must(l.srv.SetQDevice(false))
	res, md := l.report(true, tdemo(passed))
	wantIn(t, "the QDevice's host down too", md,
		"The cluster is **NOT quorate**: /etc/pve is read-only, every write of a run fails: 1 of 3 expected votes, quorum 2.",
		"| QDevice dv02hyp001p01:5403 (Fifty-Fifty split) | | 1 | Connect failed |")
	q, _ := res["substrate"].(map[string]any)["quorum"].(map[string]any)
	if q["quorate"] != false || q["total_votes"] != 1.0 && q["total_votes"] != 1 || q["expected_votes"] != 3.0 && q["expected_votes"] != 3 {
		t.Errorf("the module's substrate.quorum: %v", q)
	}
}
