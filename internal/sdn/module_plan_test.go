package sdn

import (
	"fmt"
	"strings"
	"testing"
)

// Check mode is the plan (issue 56): with nothing pending, because check mode staged nothing, the
// apply a real run makes of what this run stages (expect) is shown as changed with a diff naming
// the objects, and nothing is written; without expect it stays "nothing pending", unchanged.
func TestApplyCheckModeShowsWhatThisRunStages(t *testing.T) {
	e := newEnv(t)
	expect := []any{"zone/tn01", "vnet/tn01v0"}
	r := e.apply(map[string]any{"expect": expect}, true)
	if r.failed() || !r.changed() || !strings.Contains(r.msg(), "would apply zone/tn01, vnet/tn01v0 (staged by this run before it") {
		t.Fatalf("check mode with expect: %+v", r.res)
	}
	if d := fmt.Sprint(r.res["diff"]); !strings.Contains(d, "zone/tn01") || !strings.Contains(d, "vnet/tn01v0") {
		t.Fatalf("diff does not name the objects: %s", d)
	}
	if a, _ := e.writes(); a != 0 {
		t.Fatalf("check mode wrote %d times", a)
	}
	r = e.apply(map[string]any{"expect": []any{}}, true)
	if r.failed() || r.changed() || r.msg() != "nothing pending" {
		t.Fatalf("check mode without expect: %+v", r.res)
	}
}
