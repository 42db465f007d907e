package plan

// VMIDRange is the vmids ADR-0002 gives the tenant of index: 10000+100*index+k, k in 0..99.
// Ownership checks compare a guest's vmid with the range of the pool that holds it.
func VMIDRange(index int) (first, last int) {
	first = 10000 + 100*index
	return first, first + maxVMs
}

// VMIDIndex is the index whose range holds vmid; false below the first tenant range.
func VMIDIndex(vmid int) (int, bool) {
	if vmid < 10000 {
		return 0, false
	}
	return (vmid - 10000) / 100, true
}
