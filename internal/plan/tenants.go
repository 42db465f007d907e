package plan

import "fmt"

// TenantRef is one entry of a module's tenants option: the name and the index every identifier of
// the tenant is derived from.
type TenantRef struct {
	Name  string
	Index int
}

// DistinctTenants refuses a tenants list that names a tenant or an index twice: two entries with
// one index derive the same zone, VNIs and vmids, and one name listed twice is a mistake. The
// error names both entries (tenants[i]).
func DistinctTenants(list []TenantRef) error {
	names, indexes := map[string]int{}, map[int]int{}
	for i, t := range list {
		if j, dup := names[t.Name]; dup {
			return fmt.Errorf("tenants[%d].name: %s is also tenants[%d]'s", i, t.Name, j)
		}
		if j, dup := indexes[t.Index]; dup {
			return fmt.Errorf("tenants[%d].index: %d is also tenants[%d]'s (%s)", i, t.Index, j, list[j].Name)
		}
		names[t.Name], indexes[t.Index] = i, i
	}
	return nil
}
