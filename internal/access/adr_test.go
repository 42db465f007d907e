package access

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

// adrPrivileges lists the privileges in the first column of the ADR-0013 table whose header
// starts with header.
func adrPrivileges(t *testing.T, header string) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/adr/0013-tenant-privileges.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && !strings.HasPrefix(line, "|"):
			in = false
		case in && !strings.HasPrefix(line, "|---"):
			cell := strings.TrimSpace(strings.Split(line, "|")[1])
			for _, p := range strings.Split(cell, ",") {
				out = append(out, strings.TrimSpace(p))
			}
		}
	}
	slices.Sort(out)
	return out
}

// ADR-0013 lists exactly the custom role's privileges, and as dropped exactly the rest of
// PVEVMAdmin as the simulator (PVE's built-in roles) defines it.
func TestADRListsTheRoleAndWhatItDrops(t *testing.T) {
	if got, want := adrPrivileges(t, "| privilege | needed by"), tenantRole().Privs; !slices.Equal(got, want) {
		t.Errorf("ADR-0013 lists the role's privileges %q, the code has %q", got, want)
	}
	srv := startSim(t)
	var admin map[string]any
	if err := rootClient(t, srv).Get(context.Background(), "/access/roles/PVEVMAdmin", nil, &admin); err != nil {
		t.Fatal(err)
	}
	var dropped []string
	for p := range admin {
		if !slices.Contains(tenantRole().Privs, p) {
			dropped = append(dropped, p)
		}
	}
	slices.Sort(dropped)
	if got := adrPrivileges(t, "| privilege | what it would let"); !slices.Equal(got, dropped) {
		t.Errorf("ADR-0013 names as dropped %q; PVEVMAdmin minus the role is %q", got, dropped)
	}
	for _, p := range tenantRole().Privs {
		if _, ok := admin[p]; !ok {
			t.Errorf("the role holds %s, which PVEVMAdmin does not: not a narrowing", p)
		}
	}
}
