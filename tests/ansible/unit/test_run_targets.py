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
waitsforb:
\t@touch {dir}/a.running; for i in $$(seq 100); do [ -f {dir}/b.running ] && break; sleep 0.1; done; \\
\t  [ -f {dir}/b.running ] && echo "a saw b running, job var $(V)"; rm -f {dir}/a.running; touch {dir}/a.done
waitsfora:
\t@touch {dir}/b.running; for i in $$(seq 100); do [ -f {dir}/a.running ] || [ -f {dir}/a.done ] && break; sleep 0.1; done; \\
\t  echo "b, job var $(V)"; sleep 0.3; rm -f {dir}/b.running; touch {dir}/b.done
guestalone:
\t@if [ -f {dir}/a.done ] && [ -f {dir}/b.done ] && ! ls {dir}/*.running >/dev/null 2>&1; then echo guest alone; else echo guest beside; exit 2; fi
prepme:
\t@echo made >> {dir}/prep.count
usesprep: prepme
\t@echo uses prep
usesprep2: prepme
\t@echo uses prep too
slowbad:
\t@sleep 0.5; echo 'fatal: [localhost]: FAILED! => {{"msg": "slow"}}'; exit 2
guestbeside:
\t@for i in $$(seq 100); do [ -f {dir}/j.running ] && break; sleep 0.1; done; \\
\t  [ -f {dir}/j.running ] && echo "guest beside a job, policy $$(chrt -p $$$$ | sed 's/.*: //')"; touch {dir}/g.seen
jobwaits:
\t@touch {dir}/j.running; for i in $$(seq 100); do [ -f {dir}/g.seen ] && break; sleep 0.1; done; \\
\t  echo "job policy $$(chrt -p $$$$ | sed 's/.*: //')"; rm -f {dir}/j.running
"""


def run(tmp_path, *targets, retry='', keep_going='1', lanes='1', guests='', jobs='1', job_vars='', beside='0', prep=''):
    mk = tmp_path / 'fake.mk'
    mk.write_text(MAKEFILE.format(flag=tmp_path / 'flag', runner=RUNNER, mk=mk, dir=tmp_path))
    # (make test's own variables cleared: this test runs inside make test's lanes)
    env = dict(os.environ, KEEP_GOING=keep_going, RETRY_TARGETS=retry, TEST_LANES=lanes,
               GUEST_TARGETS=guests, ALONE_TARGETS=guests, LANE_GUEST_PREP='0', LANE_PREP=prep, TEST_JOBS=jobs, JOB_VARS=job_vars,
               ALONE_BESIDE=beside)
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


def test_jobs_run_targets_side_by_side_each_with_its_vars(tmp_path):
    """TEST_JOBS=2: two targets run at once (each waits to see the other running), each make gets
    JOB_VARS with its job's number, and the table names the job."""
    rc, out = run(tmp_path, 'waitsforb', 'waitsfora', jobs='2', job_vars='V=v%N')
    assert rc == 0, out
    lines = out.splitlines()
    a = [l for l in lines if l.startswith('a saw b running, job var ')]
    b = [l for l in lines if l.startswith('b, job var ')]
    assert a and b, out
    assert {a[0].split()[-1], b[0].split()[-1]} == {'v1', 'v2'}
    rows = [l.split() for l in after_table(out).splitlines()[2:] if l.startswith('waits')]
    assert sorted(r[1] for r in rows) == ['j1', 'j2']


def test_jobs_in_turn_with_one_job(tmp_path):
    """TEST_JOBS=1 is the plain run: a target waiting for the other never sees it running."""
    rc, out = run(tmp_path, 'waitsforb', 'waitsfora', jobs='1')
    assert rc == 0
    assert 'a saw b running' not in out


def test_guest_targets_run_after_the_jobs_alone(tmp_path):
    rc, out = run(tmp_path, 'guestalone', 'waitsforb', 'waitsfora', jobs='2', guests='guestalone')
    assert rc == 0, out
    assert 'guest alone' in out.splitlines()
    table = after_table(out)
    assert any(l.split()[:2] == ['guestalone', '1'] for l in table.splitlines())


def test_a_job_failure_stops_the_run_and_the_guest_targets(tmp_path):
    """Without KEEP_GOING a failed target in one job lets the running ones end, starts no other and
    runs no guest target; why is printed after the table."""
    rc, out = run(tmp_path, 'bad', 'slowbad', 'ok', 'guestalone', jobs='2', guests='guestalone', keep_going='0')
    assert rc == 1
    assert '== make ok' not in out
    assert '== make guestalone' not in out
    tail = after_table(out)
    assert '== why make bad failed' in tail and '== why make slowbad failed' in tail


def test_alone_beside_runs_the_guest_lane_from_the_start_and_the_jobs_idle(tmp_path):
    """ALONE_BESIDE=1: the guest target runs while a job does, at the normal policy, and the job's
    make at SCHED_IDLE; the guest lane's log is printed and its row is in the table."""
    rc, out = run(tmp_path, 'guestbeside', 'jobwaits', 'ok', jobs='2', guests='guestbeside', beside='1')
    assert rc == 0, out
    lines = out.splitlines()
    assert 'guest beside a job, policy SCHED_OTHER' in lines, out
    assert 'job policy SCHED_IDLE' in lines, out
    rows = [l.split() for l in after_table(out).splitlines()[2:] if l and l.split()[0] in ('guestbeside', 'jobwaits')]
    assert sorted((r[0], r[1][0]) for r in rows) == [('guestbeside', '1'), ('jobwaits', 'j')], out


def test_without_alone_beside_the_guest_target_waits(tmp_path):
    """The control: without ALONE_BESIDE the guest target starts after the jobs, and sees none."""
    rc, out = run(tmp_path, 'guestbeside', 'jobwaits', jobs='2', guests='guestbeside')
    assert rc == 0, out
    assert not any(l.startswith('guest beside a job') for l in out.splitlines()), out


def test_lane_prep_is_made_once_not_again_by_each_target(tmp_path):
    """LANE_PREP is made once before the jobs; each target's make is told not to make it again."""
    rc, out = run(tmp_path, 'usesprep', 'usesprep2', jobs='2', prep='prepme')
    assert rc == 0, out
    assert 'uses prep' in out.splitlines() and 'uses prep too' in out.splitlines(), out
    assert (tmp_path / 'prep.count').read_text().splitlines() == ['made'], out


def test_without_lane_prep_each_target_makes_its_prerequisite(tmp_path):
    """The control: without LANE_PREP every target makes what it depends on."""
    rc, out = run(tmp_path, 'usesprep', 'usesprep2', jobs='2')
    assert rc == 0, out
    assert (tmp_path / 'prep.count').read_text().splitlines() == ['made', 'made'], out
