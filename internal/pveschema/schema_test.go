package pveschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// sharedAPIDir finds ../shared/pve-api (or $PVE_API_DIR) to compare the embedded copy with.
func sharedAPIDir() string {
	for _, d := range []string{os.Getenv("PVE_API_DIR"), "../../../shared/pve-api"} {
		if _, err := os.Stat(filepath.Join(d, "subset.json")); d != "" && err == nil {
			return d
		}
	}
	return ""
}

// TestEmbeddedSchemaInStep keeps internal/pveschema in step with the
// shared reference data when that directory exists.
func TestEmbeddedSchemaInStep(t *testing.T) {
	dir := sharedAPIDir()
	if dir == "" {
		t.Skip("shared pve-api directory not present (set PVE_API_DIR)")
	}
	for _, f := range []string{"subset.json", "formats.json"} {
		want, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := schemaFS.ReadFile(f)
		if string(got) != string(want) {
			t.Errorf("internal/pveschema/%s differs from %s: copy it again", f, filepath.Join(dir, f))
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "apidata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tree []map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	infos := map[string]map[string]any{}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if p, ok := n["path"].(string); ok {
			if info, ok := n["info"].(map[string]any); ok {
				infos[p] = info
			}
		}
		if ch, ok := n["children"].([]any); ok {
			for _, c := range ch {
				walk(c.(map[string]any))
			}
		}
	}
	for _, n := range tree {
		walk(n)
	}
	b, _ := schemaFS.ReadFile("extra.json")
	var extra struct {
		Paths map[string]struct {
			Info map[string]any `json:"info"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &extra); err != nil {
		t.Fatal(err)
	}
	for p, n := range extra.Paths {
		for m, info := range n.Info {
			if !reflect.DeepEqual(info, infos[p][m]) {
				t.Errorf("extra.json %s %s differs from apidata.json", m, p)
			}
		}
	}
}
