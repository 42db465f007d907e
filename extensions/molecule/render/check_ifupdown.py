"""Syntax check for ifupdown2 stanzas without ifquery: every non-comment line is `auto IF`,
`iface IF inet METHOD`, or an indented `keyword value` below an iface; every auto has an iface."""
import re
import sys

KEYWORDS = {"address", "gateway", "mtu", "bridge-ports", "bridge-stp", "bridge-fd",
            "bridge-vlan-aware", "bridge-vids", "vlan-raw-device", "vlan-id", "post-up", "pre-down"}
IFNAME = r"[A-Za-z][A-Za-z0-9_.-]{0,14}"


def main(path):
    errors, autos, ifaces, current = [], set(), set(), None
    for n, line in enumerate(open(path), 1):
        text = line.rstrip("\n")
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        if m := re.fullmatch(rf"auto ({IFNAME})", text):
            autos.add(m[1])
            current = None
        elif m := re.fullmatch(rf"iface ({IFNAME}) inet (static|manual|dhcp)", text):
            if m[1] in ifaces:
                errors.append(f"{n}: {m[1]} defined twice")
            ifaces.add(m[1])
            current = m[1]
        elif m := re.fullmatch(r"    ([a-z0-9-]+) (\S.*)", text):
            if current is None:
                errors.append(f"{n}: option outside an iface stanza")
            elif m[1] not in KEYWORDS:
                errors.append(f"{n}: unknown keyword {m[1]}")
        else:
            errors.append(f"{n}: cannot parse {text!r}")
    errors += [f"auto {i} has no iface stanza" for i in sorted(autos - ifaces)]
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
