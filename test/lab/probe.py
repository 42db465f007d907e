"""The plan of the packet sweep (test/lab/probe.sh; issue 24): which VM probes which address, with
which protocol and port, what the answer must be and where the packets are counted. Every address
is read from what ships and from the lab as the playbooks left it, never written here:
  the nodes       the inventory's substrate_node (management, transit, underlay, VTEP loopback),
                  each checked against the node's rendered /etc/network/interfaces (and the VTEP
                  against pvesim's fabric); every other address those files hold (the VNets' anycast
                  gateways) is probed too
  the perimeter   the addresses of its namespace; the NAT address is its uplink's
                  (perimeter_uplink_interfaces); substrate_site.transit_gateway must be one of them
  the resolver    substrate_site.resolver, PowerDNS substrate_pdns.server (the site's inventory)
  the hosts       the management host's and the controller's (the jump host) site addresses
  the VMs         LAB_DIR/vms (read back from pvesim by lab.sh vms), each VNet's VNI from pvesim

  probe.py sweep LAB_DIR INVENTORY                 the plan of the sweep (JSON on stdout)
  probe.py move LAB_DIR INVENTORY TENANT           the vmbr0 move with TENANT's token (net0 of its
                                                   first VM on the site bridge); prints the answer
  probe.py movesweep LAB_DIR INVENTORY TENANT      the plan of the management probes from that VM
  probe.py restore LAB_DIR TENANT VNET             net0 back on VNET (the substrate's token)
"""
import ipaddress
import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml

from pvesimapi import Pvesim

TCP_PORTS = (22, 53, 179, 8006)        # ssh, DNS, BGP, the PVE API
UDP_PORTS = (53, 3784, 3785, 4789)     # DNS, BFD control and echo, VXLAN
TIMEOUT = 2.0


def sh(lab, host, cmd):
    """Output of cmd run over the lab's ssh on host (lab: the guest, a node name, perimeter)."""
    return subprocess.run(["ssh", "-F", lab + "/ssh_config", host, cmd], check=True, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL).stdout


def inventory(inv, lab):
    """The hostvars of the site's inventory plus the lab's (as the playbooks read them)."""
    venv = sys.executable.rsplit("/", 1)[0]
    out = subprocess.run([venv + "/ansible-inventory", "-i", inv, "-i", lab + "/inventory.yml", "--list"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ns_addrs(lab, ns):
    """{address: interface} of namespace ns in the guest ("" is the guest's own), loopback aside."""
    cmd = ("ip -n %s" % ns if ns else "ip") + " -4 -o addr show"
    return parse_addrs(sh(lab, "lab", cmd))


def parse_addrs(text):
    """{address: interface} of `ip -4 -o addr show` output, loopback aside."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if not ipaddress.ip_address(f[3].split("/")[0]).is_loopback:
            out[f[3].split("/")[0]] = f[1]
    return out


def rendered_addrs(text):
    """{address: iface} of an ifupdown2 interfaces text (address lines inside iface stanzas)."""
    out, iface = {}, None
    for line in text.splitlines():
        f = line.split()
        if f[:1] == ["iface"]:
            iface = f[1]
        elif f[:1] == ["address"] and iface:
            out[f[1].split("/")[0]] = iface
    return out


def vms(lab):
    rows = []
    with open(lab + "/vms", encoding="utf-8") as f:
        for line in f:
            vmid, name, node, br, mac, cidr, gw, dom = line.split()
            rows.append({"vmid": int(vmid), "name": name, "node": node, "bridge": br, "mac": mac, "addr": cidr.split("/")[0],
                         "gw": gw, "dom": dom, "zone": None})
    return rows


class Lab:
    """What the sweep reads from the lab in directory lab: the nodes' rendered files and the
    namespaces' addresses over its ssh, pvesim's VNets and fabric, the VMs lab.sh vms wrote.
    (Site reads through it only, so that its tests can hand it other answers.)"""

    def __init__(self, lab):
        self.lab = lab
        self._api = None

    def api(self):
        if self._api is None:
            self._api = Pvesim(self.lab)
        return self._api

    def rendered(self, node):
        """The node's /etc/network/interfaces and interfaces.d, as one text."""
        return sh(self.lab, node, "cat /etc/network/interfaces /etc/network/interfaces.d/* 2>/dev/null || true")

    def addrs(self, ns):
        return ns_addrs(self.lab, ns)

    def vnets(self):
        return self.api().get("/cluster/sdn/vnets")

    def fabric_nodes(self):
        return self.api().get("/cluster/sdn/fabrics/node")

    def vms(self):
        return vms(self.lab)


class Site:
    """What the sweep knows about the site, read as the module docstring says (lab: a Lab)."""

    def __init__(self, lab, inv):
        self.lab = lab
        hv = inv["_meta"]["hostvars"]
        self.node_names = inv["hypervisors"]["hosts"]
        first = hv[self.node_names[0]]
        self.site = first["substrate_site"]
        self.pdns = first["substrate_pdns"]["server"]
        perim = hv[inv["perimeter"]["hosts"][0]]
        self.uplinks = perim["perimeter_uplink_interfaces"]
        self.vnets = {v["vnet"]: v for v in lab.vnets()}
        fabric = {n["node_id"]: n["ip"] for n in lab.fabric_nodes() if n.get("fabric_id", self.site["fabric"]) == self.site["fabric"]}
        self.vms = lab.vms()
        for vm in self.vms:   # None: a VM on no VNet (moved to the site bridge)
            vm["zone"] = self.vnets.get(vm["bridge"], {}).get("zone")
        self.dests = []   # (address, what, receivers, kind)
        self.errors = []
        seen = set()

        def dest(addr, what, receivers, kind, zone=None):
            if addr in seen:
                return
            seen.add(addr)
            self.dests.append({"addr": addr, "what": what, "receivers": receivers, "kind": kind, "zone": zone})
        net = ipaddress.ip_network(self.site["network"])
        vnet_gw = {}
        for n in self.node_names:
            sn = hv[n]["substrate_node"]
            have = rendered_addrs(lab.rendered(n))
            want = {"management": (sn["management"], self.site["bridge"]),
                    "transit": (sn["transit"], "%s.%d" % (self.site["bridge"], self.site["transit_vlan"])),
                    "underlay": (sn["underlay"], "%s.%d" % (self.site["bridge"], self.site["underlay_vlan"])),
                    "VTEP": (sn["loopback"], None)}
            for role, (addr, iface) in want.items():
                addr = addr.split("/")[0]
                if addr not in have or (iface and have[addr] != iface):
                    self.errors.append("%s: the inventory's %s address %s is not on %s in the rendered interfaces (%s)"
                                       % (n, role, addr, iface or "any interface", have))
                dest(addr, "%s %s %s" % (n, role, addr), [n], "node")
            if fabric.get(n) != sn["loopback"].split("/")[0]:
                self.errors.append("%s: pvesim's fabric has VTEP %s, the inventory %s" % (n, fabric.get(n), sn["loopback"]))
            for addr, iface in sorted(have.items()):
                if iface in self.vnets:
                    vnet_gw[addr] = iface
                elif ipaddress.ip_address(addr) in net:
                    dest(addr, "%s %s %s" % (n, iface, addr), [n], "node")
        # the anycast gateways: on every node; a VM's own zone's is its gateway (on its node)
        for addr, vnet in sorted(vnet_gw.items()):
            dest(addr, "gateway %s %s" % (vnet, addr), list(self.node_names), "gateway", self.vnets[vnet]["zone"])
        p_addrs = lab.addrs("perimeter")
        self.nat = next((a for a, i in p_addrs.items() if i in self.uplinks), None)
        if self.site["transit_gateway"] not in p_addrs:
            self.errors.append("the perimeter has no transit_gateway %s (%s)" % (self.site["transit_gateway"], p_addrs))
        if not self.nat:
            self.errors.append("the perimeter has no address on its uplink %s" % self.uplinks)
        for addr, iface in sorted(p_addrs.items()):
            dest(addr, "perimeter %s %s" % (iface, addr), ["perimeter"], "perimeter")
        for ns, what in (("mgmt", "management host"), ("", "controller (jump host)")):
            for addr in sorted(a for a in lab.addrs(ns) if ipaddress.ip_address(a) in net):
                dest(addr, "%s %s" % (what, addr), [ns], "host")
        r_addrs = lab.addrs("resolver")
        for addr, what in ((self.site["resolver"], "resolver"), (self.pdns, "PowerDNS")):
            if addr not in r_addrs:
                self.errors.append("%s's address %s is on no host of the lab (resolver host: %s)" % (what, addr, sorted(r_addrs)))
            dest(addr, "%s %s" % (what, addr), ["resolver"], what)
        self.outside = sorted(lab.addrs("outside"))
        for vm in self.vms:
            dest(vm["addr"], "%s (%s) %s" % (vm["name"], vm["zone"], vm["addr"]), ["vm-" + vm["name"]], "vm", vm["zone"])

    def receivers(self):
        return sorted({r for d in self.dests for r in d["receivers"]} | {"outside"})

    def vni(self, zone):
        """The VNI of the first VNet of another zone than zone (VXLAN probes inject into it)."""
        return next((int(v["tag"]) for k, v in sorted(self.vnets.items()) if v["zone"] != zone), 0)


def probes_of(site, vm):
    out = []

    def add(d, proto, port, rule, **kw):
        p = {"src": vm["name"], "dst": d["addr"], "what": d["what"], "proto": proto, "port": port, "rule": rule,
             "receiver": d["receivers"], "qname": "%s.%s" % (vm["name"], vm["dom"]), "vni": site.vni(vm["zone"])}
        p.update(kw)
        out.append(p)
    for d in site.dests:
        if d["kind"] == "vm" and d["addr"] == vm["addr"]:
            continue
        if d["kind"] == "vm" and d["zone"] == vm["zone"]:
            add(d, "icmp", 0, "allowed")     # its own peers
            continue
        own_gw = d["kind"] == "gateway" and d["zone"] == vm["zone"]
        rcv = [vm["node"]] if own_gw else d["receivers"]
        add(dict(d, receivers=rcv, what=d["what"] + (" (own, on %s)" % vm["node"] if own_gw else "")), "icmp", 0, "allowed" if own_gw else "forbidden")
        for proto, ports in (("tcp", TCP_PORTS), ("udp", UDP_PORTS)):
            for port in ports:
                rule = "forbidden"
                if own_gw:
                    rule = "gateway"
                elif d["kind"] == "resolver" and port == 53:
                    rule = "allowed"
                add(dict(d, receivers=rcv), proto, port, rule)
    for addr in site.outside:      # egress: through the perimeter's masquerade
        add({"addr": addr, "what": "outside %s (egress, NAT)" % addr, "receivers": ["outside"]}, "icmp", 0, "allowed", seen_src=site.nat)
    return out


def plan(site, vms_, probes, setup=None):
    if site.errors:
        for e in site.errors:
            print("probe: " + e, file=sys.stderr)
        sys.exit(1)
    return {"timeout": TIMEOUT, "sources": [site.site["overlay"], site.nat], "receivers": site.receivers(),
            "vms": [{"name": v["name"], "ns": "vm-" + v["name"], "addr": v["addr"], "icmp_id": v["vmid"] & 0xFFFF} for v in vms_],
            "probes": probes, "setup": setup or {}}


def tenant_vm(site, tenant):
    return next(v for v in site.vms if v["name"].startswith(tenant + "-"))


def attachment_api(lab, tenant):
    """(base URL, Authorization header, SSL context) of the tenant's own token, from its attachment file."""
    with open("%s/attachments/%s.yml" % (lab, tenant), encoding="utf-8") as f:
        a = yaml.safe_load(f)["tenant_attachment"]["pve"]
    ctx = ssl.create_default_context(cafile=a.get("ca_path"))
    auth = "PVEAPIToken=%s!%s=%s" % (a["api_user"], a["api_token_id"], a["api_token_secret"])
    return "https://%s:%d/api2/json" % (a["api_host"], a["api_port"]), auth, ctx


def move(lab, site, tenant):
    """PUT net0 of the tenant's first VM onto the site bridge with the tenant's own token: the HTTP status."""
    vm = tenant_vm(site, tenant)
    base, auth, ctx = attachment_api(lab, tenant)
    body = urllib.parse.urlencode({"net0": "virtio=%s,bridge=%s" % (vm["mac"], site.site["bridge"])}).encode()
    req = urllib.request.Request("%s/nodes/%s/qemu/%d/config" % (base, vm["node"], vm["vmid"]), data=body, method="PUT",
                                 headers={"Authorization": auth, "Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(req, context=ctx) as r:
            return r.status, "accepted", vm
    except urllib.error.HTTPError as e:
        return e.code, e.reason, vm


def movesweep(site, tenant):
    """From the tenant's first VM, with an on-link route to the management segment (root in its VM):
    ICMP and TCP 22 to every address on it."""
    vm = tenant_vm(site, tenant)
    mgmt = ipaddress.ip_network(site.site["management"])
    probes = []
    for d in site.dests:
        if ipaddress.ip_address(d["addr"]) in mgmt:
            for proto, port in (("icmp", 0), ("tcp", 22)):
                probes.append({"src": vm["name"], "dst": d["addr"], "what": d["what"], "proto": proto, "port": port,
                               "rule": "forbidden", "receiver": d["receivers"]})
    setup = {vm["name"]: [{"do": ["ip", "route", "replace", str(mgmt), "dev", "eth0"], "undo": ["ip", "route", "del", str(mgmt), "dev", "eth0"]}]}
    return plan(site, [vm], probes, setup)


def restore(lab, tenant, vnet):
    """net0 of the tenant's first VM back on vnet with the substrate's token (after a move the guard
    did not refuse, so that the checks after this one find the lab as converged)."""
    vm = next(v for v in vms(lab) if v["name"].startswith(tenant + "-"))
    Pvesim(lab).put("/nodes/%s/qemu/%d/config" % (vm["node"], vm["vmid"]), {"net0": "virtio=%s,bridge=%s" % (vm["mac"], vnet)})


def main():
    cmd, lab = sys.argv[1], sys.argv[2]
    if cmd == "restore":
        restore(lab, sys.argv[3], sys.argv[4])
        return
    site = Site(Lab(lab), inventory(sys.argv[3], lab))
    if cmd == "sweep":
        json.dump(plan(site, site.vms, [p for vm in site.vms for p in probes_of(site, vm)]), sys.stdout)
    elif cmd == "move":
        status, reason, vm = move(lab, site, sys.argv[4])
        print(status, vm["name"], vm["node"], vm["vmid"], vm["bridge"], reason)
    elif cmd == "movesweep":
        json.dump(movesweep(site, sys.argv[4]), sys.stdout)


if __name__ == "__main__":
    main()
