"""test/lab/flows.py EVENTS FLOWDIR: lost packets and the longest gap of each flow during each event.

EVENTS: one event a line, "NAME START END" (the guest's clock, seconds since the epoch, as the
flows' own timestamps). FLOWDIR: one `ping -D -O -i INTERVAL` log per flow, FLOW.log, each ending
with ping's summary (stopped with SIGINT), so a flow that went silent until the end counts too.

A packet is lost when no reply with its icmp_seq ever came. It belongs to the event whose window
holds the time it was sent: `ping -O` prints "no answer yet for icmp_seq=N" at the next send, else
it is placed between the replies around it. A gap is the time between two consecutive replies; it
belongs to every event whose window it overlaps. Prints the table (Markdown) and exits 1 when a
tenant event or a fabric no-op (every event whose name does not start with "fabric change") lost a
packet: the goal of issue 25.
"""
import re
import time
import sys
from pathlib import Path

REPLY = re.compile(r"^\[(\d+\.\d+)\] \d+ bytes from .*icmp_seq=(\d+)")
NOANSWER = re.compile(r"^\[(\d+\.\d+)\] no answer yet for icmp_seq=(\d+)")
SUMMARY = re.compile(r"^(\d+) packets transmitted")


def unwrap(seq, last):
    """icmp_seq is 16 bits: a flow at 20/s wraps after 55 min."""
    if last is None:
        return seq
    base = last - (last % 65536)
    cand = base + seq
    if cand < last - 32768:
        cand += 65536
    return cand


def parse(path):
    """replies {seq: time}, unanswered {seq: time}, transmitted (None when no summary)."""
    replies, unanswered, sent, last = {}, {}, None, None
    for line in Path(path).read_text(errors="replace").splitlines():
        m = REPLY.match(line) or NOANSWER.match(line)
        if m:
            seq = unwrap(int(m.group(2)), last)
            last = seq if last is None else max(last, seq)
            (replies if m.re is REPLY else unanswered).setdefault(seq, float(m.group(1)))
            continue
        m = SUMMARY.match(line)
        if m:
            sent = int(m.group(1))
    return replies, unanswered, sent


def losses(replies, unanswered, sent, stop):
    """(seq, time sent) of every packet without a reply; ping counts icmp_seq from 1."""
    if not replies:
        return []
    seqs = sorted(replies)
    # the packet sent last may still be on its way when ping is stopped: not counted
    last = max(seqs[-1], (sent or 0) - 1)
    out = []
    prev = None
    for seq in range(1, last + 1):
        if seq in replies:
            prev = seq
            continue
        if seq in unanswered:
            out.append((seq, unanswered[seq]))
            continue
        nxt = next((s for s in seqs if s > seq), None)
        t0 = replies[prev] if prev else replies[seqs[0]]
        t1 = replies[nxt] if nxt else stop
        lo, hi = (prev or seq - 1), (nxt or last + 1)
        out.append((seq, t0 + (t1 - t0) * (seq - lo) / max(hi - lo, 1)))
    return out


def gaps(replies, sent, stop):
    """(start, end) between consecutive replies; a flow that went silent: its last reply to the stop."""
    seqs = sorted(replies)
    times = [replies[s] for s in seqs]
    silent = sent is not None and sent - 1 > seqs[-1]
    return list(zip(times, times[1:])) + ([(times[-1], stop)] if silent else [])


def fmt(t):
    """HH:MM:SS.s (UTC)"""
    return time.strftime("%H:%M:%S", time.gmtime(t)) + ".%01d" % int((t % 1) * 10)


def main():
    events = [line.split() for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()]
    events = [(" ".join(e[:-2]).replace("_", " "), float(e[-2]), float(e[-1])) for e in events]
    stop = max(e[2] for e in events)
    flows = {}
    for log in sorted(Path(sys.argv[2]).glob("*.log")):
        r, u, s = parse(log)
        if not r:
            print(f"FAIL flow {log.stem}: no reply at all", file=sys.stderr)
            return 1
        flows[log.stem] = (losses(r, u, s, stop), gaps(r, s, stop), len(r), s)
    print("| event | start | end | lost | longest gap | per flow (lost / longest gap) |")
    print("|---|---|---|---|---|---|")
    bad = []
    for name, start, end in events:
        total, longest, parts = 0, 0.0, []
        for flow, (lost, gp, got, sent) in flows.items():
            n = sum(1 for seq_t in lost if start <= seq_t[1] <= end)
            g = max((b - a for a, b in gp if b >= start and a <= end), default=0.0)
            total += n
            longest = max(longest, g)
            parts.append(f"{flow} {n} / {g:.2f} s")
        print(f"| {name} | {fmt(start)} | {fmt(end)} | {total} | {longest:.2f} s | {'; '.join(parts)} |")
        if total and not name.startswith("fabric change"):
            bad.append(f"{name}: {total} lost")
    for flow, (lost, gp, got, sent) in flows.items():
        print(f"flow {flow}: {got} replies, {sent} sent, {len(lost)} lost over the whole run")
    if bad:
        print("FAIL packets lost during " + ", ".join(bad))
        return 1
    print("ok   no packet lost during a tenant event or a fabric no-op")
    return 0


if __name__ == "__main__":
    sys.exit(main())
