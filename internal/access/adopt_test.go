package access

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/pvesim"
	"github.com/deevnet/tenant/internal/pvesim/pvesimtest"
)

// Onboarding a tenant whose VRF the Terraform module built (the bpg/proxmox provider's calls
// replayed): its VNets carry no mark, so only adopt grants it, and only when the VRF is the
// plan's by identity.
func TestAdoptGrantsAVRFAnotherToolBuilt(t *testing.T) {
	srv, root := pvesimtest.Start(t, pvesim.DefaultConfig())
	pvesimtest.Replay(t, root, "../../tests/takeover/terraform-tdemo.json")
	tdemo := map[string]any{"name": "tdemo", "index": 1}
	w0 := writes(srv)
	if res := run(t, srv, tdemo); res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), `index: zone tn01 is not tenant tdemo's: its vnet tn01v0 is marked "(no mark)"`) {
		t.Fatalf("without adopt: %v", res["msg"])
	}
	if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1, "adopt": true, "state": "absent"}); res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), "adopt: grants a tenant what another tool built, so it needs state=present") {
		t.Fatalf("adopt with state absent: %v", res["msg"])
	}
	if w := writes(srv) - w0; w != 0 {
		t.Fatalf("refusals wrote %d times", w)
	}
	// Another VNI than the plan's: refused, naming the field.
	if err := root.Put(context.Background(), "/cluster/sdn/zones/tn01", map[string]any{"vrf-vxlan": 10099}, nil); err != nil {
		t.Fatal(err)
	}
	w0 = writes(srv)
	if res := run(t, srv, map[string]any{"name": "tdemo", "index": 1, "adopt": true}); res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), "vrf_vxlan: zone tn01 has VNI 10099 (plan 10001)") {
		t.Fatalf("adopt, VNI differs: %v", res["msg"])
	}
	if w := writes(srv) - w0; w != 0 {
		t.Fatalf("refusals wrote %d times", w)
	}
	if err := root.Put(context.Background(), "/cluster/sdn/zones/tn01", map[string]any{"vrf-vxlan": 10001}, nil); err != nil {
		t.Fatal(err)
	}
	res := run(t, srv, map[string]any{"name": "tdemo", "index": 1, "adopt": true})
	if res["failed"] == true || res["changed"] != true || res["token_secret"] == nil {
		t.Fatalf("adopt: %v", res)
	}
	// Once tenant_vrf has taken the VRF over (its mark), onboarding needs no adopt.
	if err := root.Put(context.Background(), "/cluster/sdn/vnets/tn01v0", map[string]any{"alias": "tenant-tdemo"}, nil); err != nil {
		t.Fatal(err)
	}
	w0 = writes(srv)
	if res := run(t, srv, tdemo); res["failed"] == true || res["changed"] != false || writes(srv) != w0 {
		t.Fatalf("after the takeover: %v", res)
	}
}
