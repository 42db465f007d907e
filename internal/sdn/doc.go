// Package sdn turns a desired set of Proxmox VE SDN objects (EVPN controller, fabric and its
// nodes, zones, VNets, subnets) into the smallest list of staged API writes, and stages and
// applies them safely.
//
// The request and response types are our own rather than go-proxmox's: its v0.8 SDN types use
// wrong JSON names for EVPN zone fields (exit-nodes*, dpid), cannot send
// exitnodes-local-routing=0, carry no lock-token on writes or apply, and cannot read the
// pending view. go-proxmox is still used, through internal/pve, for transport, auth and tasks.
//
// Every object is compared in PVE's pending view (?pending=1), so an object staged by an earlier
// run that was never applied counts as present, and only the keys the caller owns are compared
// (never the server-generated mac or the digest). Values are normalised first: numbers and
// booleans to decimal strings, node lists sorted, a boolean at its default equal to absent.
//
// The Ansible modules over it (pve_sdn_fabric, tenant_vrf, pve_sdn_apply) are module*.go.
package sdn
