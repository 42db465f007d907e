# pylint: disable=disallowed-name,subprocess-run-check  # test tooling: "_" discards, exit codes read by hand
"""realcheck.py NODE_DIR -- check one node's rendered SDN files with the real tools (run inside the
Debian tree, scripts/debian-tree.sh): ifupdown2 3.0.0 and FRR 10.3 (Debian 13).

NODE_DIR holds etc/network/interfaces (the node's main file, sourcing interfaces.d/*),
etc/network/interfaces.d/* (the node-network role's file and the rendered sdn) and etc/frr/frr.conf,
bound at /etc/network and /tmp/node by check.sh.

ifupdown2 exits 1 on any warning (PVE's own files always give one), and with Debian's
addon_syntax_check=0 its syntax check does not even reject unknown keywords; check.sh sets
addon_syntax_check=1 in the node's ifupdown2.conf. The verdict is ours, from ifupdown2's own output:
  - `ifup -a --syntax-check`: every `error:` line fails (unknown keywords, parse errors); every
    `warning:` fails (bad values) except the ones PVE's own files always produce (ALLOWED);
  - every attribute of every stanza must be one ifupdown2 documents (`ifquery --syntax-help`),
    a second net under the first;
FRR: `vtysh --dryrun -f frr.conf` must exit 0, and `frr-reload.py --test --input <empty>` must accept it.
Exit status 0 = pass, 1 = fail (with the reasons on stdout).
"""
import glob
import re
import subprocess
import sys

# Warnings PVE-rendered files always give on a real node (the vnet/vrfbr bridges carry `mtu`).
ALLOWED = [re.compile(r"^warning: \S+: bridge inherits mtu from its ports\. There is no need to assign mtu on a bridge$")]
# Keywords ifupdown itself handles (not an addon's attribute).
CORE = {"address", "netmask", "gateway", "broadcast", "pre-up", "up", "post-up", "down", "pre-down", "post-down",
        "source", "source-directory", "mtu", "hwaddress", "alias"}


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def known_attributes():
    _, out = run(["ifquery", "--syntax-help"])
    names = set(CORE)
    for line in out.splitlines():
        m = re.match(r"^  ([a-z0-9_-]+)$", line)
        if m:
            names.add(m.group(1))
    if len(names) < 50:
        raise SystemExit("realcheck: ifquery --syntax-help listed too few attributes:\n" + out)
    return names


def stanza_attributes(path):
    """(line number, interface, attribute) of every attribute line of an interfaces file."""
    out, iface = [], None
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            word = line.split()[0]
            if word in ("auto", "allow-hotplug", "source", "source-directory"):
                iface = None if word != "auto" else iface
                continue
            if word == "iface":
                iface = line.split()[1]
                continue
            if iface is None:
                out.append((n, "-", word))
                continue
            out.append((n, iface, word))
    return out


def check_ifupdown2():
    bad = []
    rc, out = run(["ifup", "-a", "--syntax-check"])
    for line in out.splitlines():
        if line.startswith("error:") or (line.startswith("warning:") and not any(a.match(line) for a in ALLOWED)):
            bad.append("ifup --syntax-check: " + line)
    if rc != 0 and not bad and not any(a.match(l) for l in out.splitlines() for a in ALLOWED):
        bad.append("ifup --syntax-check exited %d without a message:\n%s" % (rc, out))
    names = known_attributes()
    files = ["/etc/network/interfaces"] + sorted(glob.glob("/etc/network/interfaces.d/*"))
    for path in files:
        for n, iface, attr in stanza_attributes(path):
            if attr.replace("_", "-") not in names and attr not in names:
                bad.append("%s:%d: %s: attribute %r is unknown to ifupdown2" % (path, n, iface, attr))
    return bad


def check_frr(conf):
    bad = []
    rc, out = run(["vtysh", "--dryrun", "-f", conf])
    if rc != 0:
        bad.append("vtysh --dryrun exited %d:\n%s" % (rc, out.strip()))
    open("/tmp/empty-running.conf", "w").close()
    rc, out = run(["/usr/lib/frr/frr-reload.py", "--test", "--stdout", "--input", "/tmp/empty-running.conf", conf])
    if rc != 0:
        bad.append("frr-reload.py --test exited %d:\n%s" % (rc, "\n".join(out.strip().splitlines()[-5:])))
    return bad


def main():
    bad = check_ifupdown2() + check_frr("/tmp/node/etc/frr/frr.conf")
    for b in bad:
        print("FAIL " + b)
    if not bad:
        print("PASS ifupdown2 (ifup --syntax-check, attribute names) and FRR (vtysh --dryrun, frr-reload.py --test)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
