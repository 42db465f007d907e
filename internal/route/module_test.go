package route

import (
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/moduletest"
)

// Invalid declarations fail on the field and the rule before any netlink access: the Manager
// here has no handle at all, so reaching the kernel would panic (a failed result).
func TestArgumentErrors(t *testing.T) {
	mod := ModuleWith(&Manager{})
	for name, c := range map[string]struct {
		args map[string]any
		want string
	}{
		"host bits":   {map[string]any{"routes": []any{map[string]any{"dest": "10.20.129.5/24", "device": "x"}}}, `routes[0].dest: "10.20.129.5/24" has host bits set (did you mean 10.20.129.0/24?)`},
		"bad gateway": {map[string]any{"routes": []any{map[string]any{"dest": "default", "gateway": "100.64.0"}}}, `routes[0].gateway: "100.64.0" is not an IP address`},
		"no target":   {map[string]any{"routes": []any{map[string]any{"dest": "default"}}}, "routes[0]: give a gateway, a device or both"},
		"bad table":   {map[string]any{"routes": []any{map[string]any{"dest": "default", "device": "tr0", "table": "255"}}}, "routes[0].table"},
		"bad state":   {map[string]any{"state": "gone"}, "state"},
		"exclusive":   {map[string]any{"state": "absent", "exclusive": true}, "exclusive: only meaningful with state=present"},
		"fwd name":    {map[string]any{"forwarding": []any{"../../all"}}, "forwarding[0]"},
		"no dest":     {map[string]any{"routes": []any{map[string]any{"device": "tr0"}}}, "dest"},
	} {
		res, code := moduletest.Execute(t, mod, c.args)
		msg, _ := res["msg"].(string)
		if code != 1 || res["changed"] != false || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d, %v; want a failure containing %q", name, code, res, c.want)
		}
	}
}

// transit_route is its own binary, outside the registry's test: its options struct is checked here.
func TestModuleOptionsMatchSpec(t *testing.T) {
	if err := Module().Check(); err != nil {
		t.Fatal(err)
	}
}
