package pvesim

import (
	"testing"

	"github.com/deevnet/tenant/internal/sdnrender"
)

func TestFabricInterfaceProperty(t *testing.T) {
	for in, want := range map[string]sdnrender.FabricInterface{
		"name=ens19,":              {Name: "ens19"},
		"ens20":                    {Name: "ens20"},
		"name=ens21,ip=3.3.3.4/31": {Name: "ens21", IP: "3.3.3.4/31"},
		"name=ens22,hello_multiplier=50,ip6=a::1/64": {Name: "ens22", HelloMultiplier: 50, IP6: "a::1/64"},
	} {
		if got := fabricInterface(in); got != want {
			t.Errorf("%q: got %+v, want %+v", in, got, want)
		}
	}
}
