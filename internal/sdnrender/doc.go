// Package sdnrender renders what a Proxmox VE 9 node writes when SDN is
// applied (libpve-network-perl 1.3.0 with the proxmox-frr templates):
// /etc/network/interfaces.d/sdn, /etc/frr/frr.conf and the fabricd/ospfd
// lines of /etc/frr/daemons. It covers EVPN controllers (fabric and peers
// mode), EVPN zones, vnets and subnets, and openfabric/OSPF fabrics. It has
// no HTTP and no state: the running SDN config and a node go in, text comes
// out. Sources and rules: /work/shared/pve-api/NODE-RENDERING.md.
//
// Not covered (rendered as if absent): bgp/isis/faucet controllers (so no
// eBGP, no loopback update-source in peers mode), non-EVPN zones,
// frr.conf.local merging, the IPv6 router-id MAC derivation in peers mode.
// In peers mode the node's local VTEP IP cannot be derived without the
// node's /etc/network/interfaces, so Node.LocalIP gives it; without it the
// EVPN part is skipped on that node like PVE skips a node it cannot place.
//
// Contract used by pvesim --render-dir / --reload-command (the lab consumes
// it): after each PUT /cluster/sdn, for every configured node N, pvesim
// writes atomically (temp file + rename)
//
//	DIR/N/etc/network/interfaces.d/sdn   Files.Interfaces
//	DIR/N/etc/frr/frr.conf               Files.FRR (always written, also
//	                                     when no controller/fabric exists)
//	DIR/N/etc/frr/daemons.pve            "fabricd=yes|no\nospfd=yes|no\n"
//
// then runs the reload command as exec(PATH, N, DIR/N) without a shell,
// for all nodes at once (in parallel, as PVE), each under --reload-timeout
// (default 2m); its output goes into the apply task's log, which stays
// running until every node is done. Exit 0 means the node reloaded;
// anything else is a failed reload: GET /nodes/N/sdn/zones then reports
// error (pending while the reload runs) and the apply task still ends OK,
// as in PVE. Without --reload-command nothing runs and reloads succeed
// unless a reload fault is injected (POST /_sim/faults "reload_faults").
// GET /_sim/nodes/N/files/<path> serves the same three files.
package sdnrender
