package access

import (
	"testing"

	"github.com/deevnet/tenant/internal/plan"
)

// Every role a tenant's grants name is TenantRole (the module's own) or a built-in role whose
// privileges BuiltinRoleNeeds lists: the preflight checks exactly what onboarding grants.
func TestBuiltinRoleNeedsCoverTheGrants(t *testing.T) {
	site := plan.DefaultSite()
	tn, err := site.Tenant("tdemo", 1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := desired(tn, 1, 9000, []string{"local-lvm"}, []string{"vmbr9"}, true)
	d.Grants = append(d.Grants, storageGrant(tn, 9000))
	seen := map[string]bool{}
	for _, g := range d.Grants {
		seen[g.Role] = true
		if _, ok := BuiltinRoleNeeds[g.Role]; !ok && g.Role != TenantRole {
			t.Errorf("grant %s on %s: role %s is not in BuiltinRoleNeeds", g.Role, g.Path, g.Role)
		}
	}
	for r := range BuiltinRoleNeeds {
		if !seen[r] {
			t.Errorf("BuiltinRoleNeeds lists %s, which no grant names", r)
		}
	}
}
