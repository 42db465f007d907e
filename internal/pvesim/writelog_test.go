package pvesim

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The write log names each accepted write's object and the parameters' names, never their values;
// a refused write is not in it, and ?since= gives only what came after.
func TestWriteLog(t *testing.T) {
	s := startSim(t)
	c := rootClient(t, s)
	hc := httpClientFor(t, s)
	get := func(q string) (int, []WriteRecord) {
		t.Helper()
		res, err := hc.Get(s.URL() + "/_sim/writes" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		var env struct {
			Data struct {
				Seq    int           `json:"seq"`
				Writes []WriteRecord `json:"writes"`
			}
		}
		if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
			t.Fatal(err)
		}
		return env.Data.Seq, env.Data.Writes
	}
	seq0, _ := get("")
	c.ok("POST", "/pools", vals("poolid", "tenant-a", "comment", "secret-comment"), nil)
	c.do("POST", "/pools", vals("poolid", "tenant-a")) // refused: it exists
	c.ok("PUT", "/pools/tenant-a", vals("comment", "x"), nil)
	seq, ws := get("?since=" + strconv.Itoa(seq0))
	if seq != seq0+2 || len(ws) != 2 {
		t.Fatalf("seq %d (from %d), writes %+v", seq, seq0, ws)
	}
	if ws[0].Method != "POST" || ws[0].Route != "/pools" || ws[0].Path != "/pools" || !reflect.DeepEqual(ws[0].Params, []string{"comment", "poolid"}) ||
		ws[0].IDs["poolid"] != "tenant-a" || len(ws[0].IDs) != 1 || ws[0].Username != "root@pam!sim" || ws[0].Time <= 0 {
		t.Fatalf("first write %+v", ws[0])
	}
	if ws[1].Route != "/pools/{poolid}" || ws[1].Path != "/pools/tenant-a" || ws[1].Vars["poolid"] != "tenant-a" {
		t.Fatalf("second write %+v", ws[1])
	}
	b, _ := json.Marshal(ws)
	if strings.Contains(string(b), "secret-comment") {
		t.Fatalf("a parameter's value in the log: %s", b)
	}
	if _, ws = get("?since=" + strconv.Itoa(seq)); len(ws) != 0 {
		t.Fatalf("after the last: %+v", ws)
	}
	res, err := hc.Get(s.URL() + "/_sim/writes?since=x")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != 400 {
		t.Fatalf("since=x: %d", res.StatusCode)
	}
}
