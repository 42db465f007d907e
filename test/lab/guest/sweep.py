"""sweep.py (inside the lab guest, as root): the packet sweep of test/lab/probe.sh (issue 24).

  sweep.py run PLAN.json    counters on, every VM's probes side by side, counters read, a table
  sweep.py send SPEC.json   (inside one VM's namespace) the probes of one VM, all at once; JSON out

PLAN.json is written by test/lab/probe.py on the controller from what ships (the inventory, pvesim,
the nodes' rendered files): the VMs, the receivers (namespaces) and one probe per source VM,
destination, protocol and port, each with its rule:
  forbidden  no answer and no packet counted at the receiver
  allowed    an answer and packets counted at the receiver (a dead probe cannot pass)
  gateway    the VM's own anycast gateway on its node, TCP/UDP: the packets do reach the node's
             stack (the gateway is on the path), so what must stay 0 is what a service sent back
             (counted leaving the node: a TCP SYN-ACK or a UDP datagram to the VM; a RST or an ICMP
             port unreachable is the kernel saying nothing listens)
The counters are an nftables table (inet dvtprobe) in each receiver's namespace, hook input at
priority 100, i.e. after the receiver's own filter (the perimeter's input policy): what it counts
was delivered to the receiver; hook output for the services' answers. Sets with a counter per element, keyed by source, destination and
port (ICMP: the echo id, which masquerade keeps, so the outside host tells the VMs apart).
"""
import concurrent.futures
import errno
import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time

ME = os.path.abspath(__file__)


def nft_table(sources):
    """The receiver's counter table, replacing an earlier one (fresh counters)."""
    src = ", ".join(sources)
    return """table inet dvtprobe {}
delete table inet dvtprobe
table inet dvtprobe {
  set picmp { typeof ip saddr . ip daddr . icmp id; flags dynamic; size 65535; counter; }
  set pl4 { typeof ip saddr . ip daddr . meta l4proto . th dport; flags dynamic; size 65535; counter; }
  set pans { typeof ip daddr . ip saddr . meta l4proto . th sport; flags dynamic; size 65535; counter; }
  chain input {
    type filter hook input priority 100; policy accept;
    ip saddr != { %s } return
    icmp type echo-request add @picmp { ip saddr . ip daddr . icmp id }
    meta l4proto { tcp, udp } add @pl4 { ip saddr . ip daddr . meta l4proto . th dport }
  }
  chain output {
    type filter hook output priority 100; policy accept;
    ip daddr != { %s } return
    tcp flags & (syn | ack) == syn | ack add @pans { ip daddr . ip saddr . meta l4proto . th sport }
    meta l4proto udp add @pans { ip daddr . ip saddr . meta l4proto . th sport }
  }
}
""" % (src, src)


def netns(ns, argv, **kw):
    """argv inside namespace ns ("" is the guest's own)."""
    return subprocess.run((["ip", "netns", "exec", ns] if ns else []) + argv, check=False, capture_output=True, text=True, **kw)


def counters(ns):
    """{(set, key tuple): packets} of the receiver ns's table, which is then deleted (one nft run:
    a process costs seconds in the TCG guest under load)."""
    r = netns(ns, ["sh", "-c", "nft -j list table inet dvtprobe && nft delete table inet dvtprobe"])
    if r.returncode != 0:
        raise RuntimeError("%s: nft list table: %s" % (ns or "guest", r.stderr.strip()))
    return parse_counters(r.stdout)


def side_by_side(fn, items):
    """{item: fn(item)} for every item at once: each is an nft process, seconds each in the TCG guest
    under load, and a dozen receivers one after another cost more than the probes themselves."""
    if not items:
        return {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(items)) as pool:
        return dict(zip(items, pool.map(fn, items)))


def parse_counters(text):
    """{(set, key tuple): packets} of `nft -j list table` output: each set element's counter."""
    out = {}
    for item in json.loads(text)["nftables"]:
        name = item.get("set", {}).get("name")
        for e in item.get("set", {}).get("elem", []):
            e = e.get("elem", e)
            key = tuple(str(v) for v in e["val"]["concat"])
            out[(name, key)] = out.get((name, key), 0) + e.get("counter", {}).get("packets", 0)
    return out


def log(t0, what):
    print("sweep: %s at %.1f s" % (what, time.monotonic() - t0), file=sys.stderr, flush=True)


# --- the probes of one VM (send) ---

def icmp_checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def probe_icmp(dst, ident, seq, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    try:
        body = b"dvtprobe" + struct.pack("!H", seq)
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        pkt = struct.pack("!BBHHH", 8, 0, icmp_checksum(hdr + body), ident, seq) + body
        s.sendto(pkt, (dst, 0))
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([s], [], [], left)[0]:
                return "no"
            data, peer = s.recvfrom(2048)
            src = peer[0]
            ihl = (data[0] & 0x0F) * 4
            typ = data[ihl]
            if typ == 0 and src == dst and struct.unpack("!HH", data[ihl + 4:ihl + 8]) == (ident, seq):
                return "yes"
            if typ == 3:  # unreachable: the original datagram follows
                inner = data[ihl + 8:]
                iihl = (inner[0] & 0x0F) * 4
                if socket.inet_ntoa(inner[16:20]) == dst and struct.unpack("!HH", inner[iihl + 4:iihl + 8]) == (ident, seq):
                    return "unreachable"
    finally:
        s.close()


def refusal(e):
    if isinstance(e, socket.timeout):
        return "no"
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    if getattr(e, "errno", None) in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return "unreachable"
    return "error %s" % e


def probe_tcp(dst, port, timeout):
    try:
        socket.create_connection((dst, port), timeout=timeout).close()
        return "yes"
    except OSError as e:
        return refusal(e)


def dns_query(name):
    q = struct.pack("!HHHHHH", 0x2424, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", 1, 1)


def probe_udp(dst, port, payload, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.connect((dst, port))
        s.send(payload)
        s.recv(4096)
        return "yes"
    except OSError as e:
        return refusal(e)
    finally:
        s.close()


def payload(p):
    if p["port"] == 53:
        return dns_query(p.get("qname", "."))
    if p["port"] == 4789:
        # a VXLAN header for the VNI in the plan (another tenant's VNet) and a broadcast ARP frame
        frame = b"\xff" * 6 + bytes.fromhex("020000000001") + b"\x08\x06" + b"\0" * 28
        return struct.pack("!II", 0x08000000, p.get("vni", 0) << 8) + frame
    return b"dvtprobe"


def send(spec):
    """Every probe of one VM at once (each waits for nothing but its own answer)."""
    results, threads = {}, []
    for i, p in enumerate(spec["probes"]):
        def one(i=i, p=p):
            # an allowed flow gets longer (the resolver may ask PowerDNS first): the sweep lasts as
            # long as its slowest probe, a forbidden one waits its timeout for nothing
            t = spec["timeout"] * (2.5 if p["rule"] == "allowed" else 1)
            if p["proto"] == "icmp":
                results[i] = probe_icmp(p["dst"], spec["icmp_id"], i + 1, t)
            elif p["proto"] == "tcp":
                results[i] = probe_tcp(p["dst"], p["port"], t)
            else:
                results[i] = probe_udp(p["dst"], p["port"], payload(p), t)
        t = threading.Thread(target=one)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    json.dump([results.get(i, "did not run") for i in range(len(spec["probes"]))], sys.stdout)


# --- the sweep (run) ---

def seen(cnt, p, vm):
    """Packets of probe p counted at its receiver (ICMP: echo requests; else the set of its rule)."""
    src = p.get("seen_src", vm["addr"])
    if p["proto"] == "icmp":
        return cnt.get(("picmp", (src, p["dst"], str(vm["icmp_id"]))), 0)
    key = (src, p["dst"], p["proto"], str(p["port"]))
    return cnt.get(("pans" if p["rule"] == "gateway" else "pl4", key), 0)


def verdict(rule, answered, n):
    if rule == "allowed":
        return "ok" if answered == "yes" and n > 0 else "FAIL"
    # forbidden, gateway: never a service's answer; nothing at the receiver (gateway: sent back by a service)
    return "ok" if answered != "yes" and n == 0 else "FAIL"


def run(plan, workdir):
    t0 = time.monotonic()
    table = nft_table(plan["sources"])

    def install(ns):
        r = netns(ns, ["nft", "-f", "-"], input=table)
        if r.returncode != 0:
            raise RuntimeError("%s: installing the counters: %s" % (ns or "guest", r.stderr.strip()))
    side_by_side(install, plan["receivers"])
    log(t0, "counters on")
    # what root inside a VM does first (the vmbr0 move: an on-link route to the management segment)
    ns_of = {vm["name"]: vm["ns"] for vm in plan["vms"]}
    for name, steps in plan.get("setup", {}).items():
        for step in steps:
            r = netns(ns_of[name], step["do"])
            if r.returncode != 0:
                raise RuntimeError("%s: %s: %s" % (name, " ".join(step["do"]), r.stderr.strip()))
    procs = {}
    for vm in plan["vms"]:
        spec = {"icmp_id": vm["icmp_id"], "timeout": plan["timeout"], "probes": [p for p in plan["probes"] if p["src"] == vm["name"]]}
        path = os.path.join(workdir, "sweep-%s.json" % vm["name"])
        with open(path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        procs[vm["name"]] = (spec, subprocess.Popen(["ip", "netns", "exec", vm["ns"], "python3", ME, "send", path],
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for name, (spec, proc) in procs.items():
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError("%s: the probes did not run: %s" % (name, err.strip()))
        for p, a in zip(spec["probes"], json.loads(out)):
            p["answered"] = a
    for name, steps in plan.get("setup", {}).items():
        for step in steps:
            netns(ns_of[name], step["undo"])
    t1 = time.monotonic()
    time.sleep(0.5)  # a late packet still counts
    log(t0, "probes done")
    cnt = side_by_side(counters, plan["receivers"])
    log(t0, "counters read")
    vms = {vm["name"]: vm for vm in plan["vms"]}
    fail = 0
    w = max(len(p["what"]) for p in plan["probes"])
    print("%-10s %-*s %-9s %-11s %4s  %s" % ("source", w, "destination", "proto", "answered", "seen", "verdict"))
    for p in plan["probes"]:
        vm = vms[p["src"]]
        n = sum(seen(cnt[ns], p, vm) for ns in p["receiver"])
        v = verdict(p["rule"], p["answered"], n)
        fail += v == "FAIL"
        proto = p["proto"] if p["proto"] == "icmp" else "%s/%d" % (p["proto"], p["port"])
        print("%-10s %-*s %-9s %-11s %4d  %s %s" % (p["src"], w, p["what"], proto, p["answered"], n, v, p["rule"]))
    print("%d probes from %d VMs in %.1f s (counters read %.1f s later), %d failed"
          % (len(plan["probes"]), len(plan["vms"]), t1 - t0, time.monotonic() - t1, fail))
    return 1 if fail else 0


if __name__ == "__main__":
    with open(sys.argv[2], encoding="utf-8") as fh:
        doc = json.load(fh)
    if sys.argv[1] == "send":
        send(doc)
    else:
        sys.exit(run(doc, os.path.dirname(os.path.abspath(sys.argv[2]))))
