// Package vm converges a tenant's Proxmox VE virtual machines: clone from a template into the
// tenant's pool with the vmid and name from the plan, then configure (cores, memory, disk,
// net0 on the tenant's VNet, cloud-init), then set the power state, all in one pass and with a
// key-by-key comparison against PVE's normalised config so that a second run writes nothing.
//
// The package holds the pure logic (desired config, normalisation, comparison) and the
// ordered API operations; it talks to PVE through the small API interface, which the shared
// client in internal/pve satisfies.
package vm
