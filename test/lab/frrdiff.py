"""frrdiff.py RENDERED RUNNING [KERNEL_VRFS]: is FRR running the rendered frr.conf? (lab.sh check_frrconf)

RENDERED is the frr.conf pvesim rendered, as read from the node's /etc/frr/frr.conf; RUNNING is the
node's `vtysh -c 'show running-config'` after the reload; KERNEL_VRFS, a file naming the node's VRF
devices one a line (`ip -br link show type vrf`), lets an emptied VRF pass (rule "emptied vrf"). Both are split into sections (a line at
column 0 with the indented lines under it, up to its `exit`/`exit-vrf`) and compared as sections;
what FRR changes on the way is normalized by the rules below, each counted, and anything else is a
difference. Exit 0 = the same apart from the rules (their counts on stdout), 1 = differences.

The rules are FRR's normalizations, listed with their explanation in test/lab/README.md
("FRR 10 and the rendered frr.conf"); a rule that matches nothing costs nothing.
"""
import collections
import re
import sys

# FRR's output framing: not configuration
FRAMING = {"Building configuration...", "Current configuration:", "end", "!", ""}
RULES = collections.OrderedDict([
    ("framing", "`show running-config` frames its output (Building configuration..., Current "
                "configuration:, `!` between sections, `end`); the rendered file separates with `!`"),
    ("order", "FRR prints sections daemon by daemon (route-maps, vrfs, interfaces, bgp, access-lists, "
              "then fabricd), not in the rendered order"),
    ("version", "`frr version` is the running FRR's own (Debian 13: 10.3), the rendered file says PVE's 10.4.1"),
    ("access-list seq", "FRR numbers access-list entries (`seq 5`, `seq 10`, ...) that the rendered file leaves unnumbered"),
    ("empty line vty", "an empty `line vty` section is not printed"),
    ("forwarding", "zebra prints the kernel's global forwarding switches (`no ip forwarding`, `no ipv6 "
                   "forwarding` when net.ipv4.ip_forward / net.ipv6.conf.all.forwarding are 0); the rendered "
                   "file sets none (only in the running config)"),
    ("emptied vrf", "frr-reload.py never deletes a `vrf X` context, it only empties it: after a zone is removed "
                    "the running config keeps `vrf X` with nothing in it (only in the running config, only "
                    "when the rendered file has no `vrf X` and the node has no VRF device X)"),
])
EMPTIED_VRF = re.compile(r"^vrf (\S+)$")
FORWARDING = re.compile(r"^(no )?(ip|ipv6) forwarding$")


def sections(text, count):
    """[(header, (body lines...))] of a config; framing lines dropped and counted."""
    out, cur = [], None
    for raw in text.splitlines():
        line = raw.rstrip()
        if line in FRAMING:
            count["framing"] += line not in ("!", "")
            continue
        if line in ("exit", "exit-vrf"):
            if cur is not None:
                out.append((cur[0], tuple(cur[1])))
                cur = None
            continue
        if line.startswith(" "):
            if cur is None:
                raise ValueError("indented line outside a section: %r" % line)
            if line.strip() != "!":
                cur[1].append(line)
            continue
        if cur is not None:
            out.append((cur[0], tuple(cur[1])))
        cur = (line, [])
    if cur is not None:
        out.append((cur[0], tuple(cur[1])))
    return out


def normalize(secs, count, running):
    out = []
    for head, body in secs:
        if running and not body and FORWARDING.match(head):
            count["forwarding"] += 1
            continue
        if head.startswith("frr version "):
            count["version"] += 1
            head = "frr version"
        m = re.match(r"^(access-list \S+) seq \d+ (.*)$", head)
        if m:
            count["access-list seq"] += 1
            head = "%s %s" % m.groups()
        if head == "line vty" and not body:
            count["empty line vty"] += 1
            continue
        out.append((head, body))
    return out


def show(sec):
    return "\n".join((sec[0],) + sec[1])


def emptied_vrf(sec, rendered, kernel_vrfs):
    """Is sec (only in the running config) a `vrf X` that frr-reload.py emptied: no line in it, no
    `vrf X` in the rendered file, no VRF device X on the node? Never without the node's list."""
    m = EMPTIED_VRF.match(sec[0])
    return (m is not None and not sec[1] and kernel_vrfs is not None and m.group(1) not in kernel_vrfs
            and all(other[0] != sec[0] for other in rendered))


def main(rendered_path, running_path, kernel_vrfs_path=None):
    count = collections.Counter()
    kernel_vrfs = None
    if kernel_vrfs_path is not None:
        with open(kernel_vrfs_path) as f:
            kernel_vrfs = set(f.read().split())
    with open(rendered_path) as f:
        rendered = normalize(sections(f.read(), count), count, False)
    with open(running_path) as f:
        running = normalize(sections(f.read(), count), count, True)
    kept = [sec for sec in running if not emptied_vrf(sec, rendered, kernel_vrfs)]
    count["emptied vrf"] += len(running) - len(kept)
    running = kept
    if [sec[0] for sec in rendered] != [sec[0] for sec in running] and sorted(rendered) == sorted(running):
        count["order"] += 1
    want, have = collections.Counter(rendered), collections.Counter(running)
    missing, extra = want - have, have - want
    for sec in sorted(missing.elements()):
        print("only in the rendered file:\n  " + show(sec).replace("\n", "\n  "))
    for sec in sorted(extra.elements()):
        print("only in the running config:\n  " + show(sec).replace("\n", "\n  "))
    used = ", ".join("%s (%d)" % (r, count[r]) for r in RULES if count[r])
    if missing or extra:
        print("frrdiff: %d section(s) differ beyond FRR's normalizations (applied: %s)" % (len(missing) + len(extra), used))
        return 1
    print("frrdiff: %d sections equal apart from FRR's normalizations: %s" % (len(rendered), used))
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
