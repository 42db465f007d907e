package reconcile

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Act runs only outside check mode and only when the plan changes something; an error from
// act is reported as acted, one from plan is not.
func TestRunStopsBeforeAct(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name          string
		check, change bool
		planErr       error
		actErr        error
		wantActed     bool
		wantErr       error
	}{
		{"check mode", true, true, nil, nil, false, nil},
		{"nothing to change", false, false, nil, nil, false, nil},
		{"plan fails", false, true, boom, nil, false, boom},
		{"acts", false, true, nil, nil, true, nil},
		{"act fails", false, true, nil, boom, true, boom},
	} {
		ran := false
		p, acted, err := Run(context.Background(), tc.check, func(context.Context) (string, bool, error) {
			return "the plan", tc.change, tc.planErr
		}, func(_ context.Context, p string) error {
			ran = true
			if p != "the plan" {
				t.Errorf("%s: act got %q", tc.name, p)
			}
			return tc.actErr
		})
		if ran != tc.wantActed || acted != tc.wantActed || !errors.Is(err, tc.wantErr) || p != "the plan" {
			t.Errorf("%s: ran %v acted %v err %v plan %q", tc.name, ran, acted, err, p)
		}
	}
}

func TestDiffsShowAbsentAsEmpty(t *testing.T) {
	p := Plan{
		{Kind: "zone", ID: "zone/tn01", Action: Create, After: map[string]any{"mtu": 1450}},
		{Kind: "vnet", ID: "vnet/tn01v0", Action: Delete, Before: map[string]any{"tag": 1}},
	}
	d := p.Diffs()
	if len(d) != 2 || d[0].BeforeHeader != "zone/tn01" || !reflect.DeepEqual(d[0].Before, map[string]any{}) ||
		!reflect.DeepEqual(d[1].After, map[string]any{}) || !reflect.DeepEqual(d[1].Before, map[string]any{"tag": 1}) {
		t.Fatalf("diffs = %+v", d)
	}
}

// An unchanged object is rendered like a change: its entry, headed by its ID, both sides as given.
func TestDiffsKeepUnchanged(t *testing.T) {
	same := map[string]any{"cores": "2"}
	d := Plan{{Kind: "vm", ID: "tdemo-1 (vmid 10101)", Action: Unchanged, Before: same, After: same}}.Diffs()
	if len(d) != 1 || d[0].BeforeHeader != "tdemo-1 (vmid 10101)" || d[0].AfterHeader != "tdemo-1 (vmid 10101)" ||
		!reflect.DeepEqual(d[0].Before, same) || !reflect.DeepEqual(d[0].After, same) {
		t.Fatalf("diffs = %+v", d)
	}
}

func TestHelpers(t *testing.T) {
	got := SortedValues(map[int]string{3: "c", 1: "a", 2: "b"}, strings.Compare)
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("SortedValues = %v", got)
	}
	if BoolInt(true) != 1 || BoolInt(false) != 0 {
		t.Fatal("BoolInt")
	}
}
