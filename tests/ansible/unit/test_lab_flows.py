"""Unit tests of test/lab/flows.py, the verdict of the traffic drill (issue 25) and of phase 2's
fabric change: which event a lost packet belongs to, the longest gap, and that only a tenant event
or a fabric no-op fails on a loss. The ping logs are written as `ping -D -O -i 0.05` writes them."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
FLOWS = os.path.join(ROOT, 'test', 'lab', 'flows.py')

_spec = importlib.util.spec_from_file_location('flows', FLOWS)
flows = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(flows)

T0 = 1796225000.0
STEP = 0.05


def ping_log(count, lost=(), noanswer=True, replied_up_to=None, dst='198.51.100.1'):
    """A `ping -D -O` log of COUNT packets, one every 50 ms from T0, stopped by SIGINT: seqs in LOST
    unanswered ("no answer yet" at the next send when NOANSWER), none answered after
    REPLIED_UP_TO (a flow gone silent), then ping's summary."""
    lines = ['PING %s (%s) 56(84) bytes of data.' % (dst, dst)]
    got = 0
    for seq in range(1, count + 1):
        t = T0 + (seq - 1) * STEP
        if seq - 1 in lost and noanswer:
            lines.append('[%.6f] no answer yet for icmp_seq=%d' % (t, (seq - 1) % 65536))
        if seq in lost or (replied_up_to is not None and seq > replied_up_to):
            continue
        got += 1
        lines.append('[%.6f] 64 bytes from %s: icmp_seq=%d ttl=63 time=0.4 ms' % (t + 0.0004, dst, seq % 65536))
    lines += ['', '--- %s ping statistics ---' % dst,
              '%d packets transmitted, %d received, %d%% packet loss, time 5000ms' % (count, got, 100 * (count - got) // count)]
    return '\n'.join(lines) + '\n'


def run(tmp_path, events, logs):
    """flows.py EVENTS FLOWDIR as drills.sh and phase2.sh run it: (exit code, stdout + stderr)."""
    ev = tmp_path / 'events'
    ev.write_text(''.join('%s %.3f %.3f\n' % (name.replace(' ', '_'), T0 + a, T0 + b) for name, a, b in events))
    d = tmp_path / 'flows.d'
    d.mkdir()
    for name, text in logs.items():
        (d / (name + '.log')).write_text(text)
    p = subprocess.run([sys.executable, FLOWS, str(ev), str(d)], capture_output=True, text=True, check=False)
    return p.returncode, p.stdout + p.stderr


def row(out, event):
    """The table's cells for EVENT: name, start, end, lost, longest gap, per flow."""
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip('|').split('|')]
        if cells and cells[0] == event:
            return cells
    raise AssertionError('no row for %r in:\n%s' % (event, out))


# 100 packets at 50 ms: seq n is sent at T0 + (n-1) * 0.05; seqs 41-45 at T0 + 2.00 .. 2.20
LOSS = set(range(41, 46))
EVENTS = [('calm (no event)', 0.0, 1.5), ('converge tother (first run)', 1.5, 3.0), ('destroy tother', 3.0, 5.0)]


def test_no_loss_passes(tmp_path):
    rc, out = run(tmp_path, EVENTS, {'l2vni': ping_log(100)})
    assert rc == 0, out
    assert row(out, 'converge tother (first run)')[3] == '0'
    assert 'ok   no packet lost during a tenant event or a fabric no-op' in out


def test_a_loss_in_a_tenant_event_fails_and_is_placed_in_its_window(tmp_path):
    rc, out = run(tmp_path, EVENTS, {'l2vni': ping_log(100, lost=LOSS), 'egress': ping_log(100)})
    assert rc == 1, out
    assert row(out, 'converge tother (first run)')[3] == '5'
    assert row(out, 'calm (no event)')[3] == '0'
    assert row(out, 'destroy tother')[3] == '0'
    # the gap: the replies to seq 40 and 46 are 0.30 s apart
    assert row(out, 'converge tother (first run)')[4] == '0.30 s'
    assert 'l2vni 5 / 0.30 s' in row(out, 'converge tother (first run)')[5]
    assert 'egress 0 / 0.05 s' in row(out, 'converge tother (first run)')[5]
    assert 'FAIL packets lost during converge tother (first run): 5 lost' in out


def test_a_loss_without_no_answer_lines_is_placed_between_the_replies_around_it(tmp_path):
    # ping prints "no answer yet" only at its next send: a flow stopped right after would have none
    rc, out = run(tmp_path, EVENTS, {'l3vni': ping_log(100, lost=LOSS, noanswer=False)})
    assert rc == 1, out
    assert row(out, 'converge tother (first run)')[3] == '5'


def test_a_fabric_change_is_reported_not_judged(tmp_path):
    events = [('calm (no event)', 0.0, 1.5), ('fabric change (dv02hyp002p03 joins)', 1.5, 3.0)]
    rc, out = run(tmp_path, events, {'egress-dv02hyp002p02': ping_log(100, lost=LOSS)})
    assert rc == 0, out
    assert row(out, 'fabric change (dv02hyp002p03 joins)')[3] == '5'


def test_a_fabric_no_op_is_judged(tmp_path):
    events = [('fabric playbook (no-op)', 1.5, 3.0)]
    rc, out = run(tmp_path, events, {'l2vni': ping_log(100, lost=LOSS)})
    assert rc == 1, out
    assert 'FAIL packets lost during fabric playbook (no-op): 5 lost' in out


def test_a_flow_gone_silent_to_the_end_counts_every_packet_and_the_gap_to_the_stop(tmp_path):
    # replies up to seq 60 (sent at T0 + 2.95), 100 sent: the last one may still be on its way
    rc, out = run(tmp_path, [('destroy tother', 2.0, 5.0)], {'l2vni': ping_log(100, replied_up_to=60, noanswer=False)})
    assert rc == 1, out
    assert row(out, 'destroy tother')[3] == '39'
    assert float(row(out, 'destroy tother')[4].split()[0]) > 2.0


def test_a_flow_without_any_reply_fails(tmp_path):
    rc, out = run(tmp_path, EVENTS, {'l2vni': ping_log(20, replied_up_to=0)})
    assert rc == 1
    assert 'FAIL flow l2vni: no reply at all' in out


def test_icmp_seq_wraps_after_65535():
    assert flows.unwrap(3, 65534) == 65539
    assert flows.unwrap(65535, 65534) == 65535
    assert flows.unwrap(7, None) == 7
