"""Tests of make test's runner, scripts/run-targets.sh: the time table, the second attempt of a
target in RETRY_TARGETS, and the lines that say why a target failed, printed after the table (a CI
page shows a log's last lines only). The runner is run as make test runs it, on a makefile of
targets that pass, fail, or fail once."""

from __future__ import annotations

import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
RUNNER = os.path.join(ROOT, 'scripts', 'run-targets.sh')

MAKEFILE = """\
ok:
\t@echo fine
flaky:
\t@if [ -f {flag} ]; then echo second run; else touch {flag}; echo 'fatal: [localhost]: FAILED! => {{"msg": "first"}}'; exit 2; fi
bad:
\t@printf '\\033[31mfatal: [localhost]: FAILED! => {{"msg": "boom"}}\\033[0m\\n'
\t@echo 'lab: state p02: bgp 10.20.255.3 Active'
\t@echo 'noise that says nothing'
\t@exit 2
wrapped:
\t@echo '  │ fatal: [localhost]: FAILED! => {{"changed": true,'
\t@echo '  │   "msg": "the cause"}}'
\t@echo '  │ PLAY RECAP'
\t@exit 2
niceness:
\t@echo "niceness $$(nice)"
guestniceness:
\t@echo "guest niceness $$(nice)"
nested:
\t@TEST_LANES=2 GUEST_TARGETS=guestniceness bash {runner} "make -f {mk}" niceness guestniceness
"""


def run(tmp_path, *targets, retry='', keep_going='1', lanes='1', guests=''):
    mk = tmp_path / 'fake.mk'
    mk.write_text(MAKEFILE.format(flag=tmp_path / 'flag', runner=RUNNER, mk=mk))
    # (make test's own variables cleared: this test runs inside make test's lanes)
    env = dict(os.environ, KEEP_GOING=keep_going, RETRY_TARGETS=retry, TEST_LANES=lanes,
               GUEST_TARGETS=guests, LANE_GUEST_PREP='0', LANE_PREP='')
    p = subprocess.run(['bash', RUNNER, 'make -f %s' % mk, *targets], env=env, capture_output=True,
                       text=True, timeout=60, check=False)
    return p.returncode, p.stdout


def after_table(out):
    return out[out.index('== make test: time per target'):]


def test_all_pass(tmp_path):
    rc, out = run(tmp_path, 'ok')
    assert rc == 0
    assert '== why' not in out
    assert [l.split()[-1] for l in after_table(out).splitlines() if l.startswith('ok ')] == ['ok']


def test_failure_explained_after_the_table_without_colours(tmp_path):
    rc, out = run(tmp_path, 'ok', 'bad')
    assert rc == 1
    tail = after_table(out)
    assert 'FAILED (rc 2)' in tail
    why = tail[tail.index('== why make bad failed'):]
    assert 'fatal: [localhost]: FAILED! => {"msg": "boom"}' in why
    assert '\x1b[' not in why
    assert 'lab: state p02: bgp 10.20.255.3 Active' in why
    assert 'noise' not in why


def test_flaky_target_retried_and_reported(tmp_path):
    rc, out = run(tmp_path, 'flaky', retry='flaky')
    assert rc == 0
    assert '== make flaky: second attempt' in out
    tail = after_table(out)
    assert 'ok on its second attempt' in tail
    assert '{"msg": "first"}' in tail[tail.index('== why the first attempt of make flaky failed'):]


def test_not_retried_unless_listed(tmp_path):
    rc, out = run(tmp_path, 'flaky')
    assert rc == 1
    assert 'second attempt' not in out


def test_stops_at_first_failure_without_keep_going(tmp_path):
    rc, out = run(tmp_path, 'bad', 'ok', keep_going='0')
    assert rc == 1
    assert '== make ok' not in out


def test_molecule_wrapped_fatal_line_joined(tmp_path):
    rc, out = run(tmp_path, 'wrapped')
    assert rc == 1
    why = after_table(out)
    why = why[why.index('== why make wrapped failed'):]
    assert 'fatal: [localhost]: FAILED! => {"changed": true, "msg": "the cause"}' in why
    assert 'PLAY RECAP' not in why


def test_two_lanes_leave_the_cpu_to_the_guest_lane(tmp_path):
    """With TEST_LANES=2 the lane beside the labs runs niced, the labs' lane does not: the labs'
    timings are what load breaks."""
    rc, out = run(tmp_path, 'niceness', 'guestniceness', lanes='2', guests='guestniceness')
    assert rc == 0
    base = os.nice(0)  # make test's niced lane runs this test at 10 already; nice stops at 19
    assert 'niceness %d' % min(base + 10, 19) in out.splitlines()
    assert 'guest niceness %d' % base in out.splitlines()
    table = after_table(out)
    assert any(l.split()[:2] == ['guestniceness', '2'] for l in table.splitlines())


def test_the_niced_lane_does_not_reach_runs_it_makes(tmp_path):
    """A run of the runner made from the niced lane (as make test runs this file) nices its own
    lane 1 and leaves its guest lane as it found it: the niceness is not passed on in the
    environment (it was: CI's run of this file saw its guest lane at 19)."""
    rc, out = run(tmp_path, 'nested', 'ok', lanes='2', guests='ok')
    assert rc == 0
    base = os.nice(0)
    lines = out.splitlines()
    assert 'niceness %d' % min(base + 20, 19) in lines
    assert 'guest niceness %d' % min(base + 10, 19) in lines
