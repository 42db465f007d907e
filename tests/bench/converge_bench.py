# pylint: disable=subprocess-run-check  # test tooling: exit codes read by hand
"""make bench-converge: the shipped playbooks' own cost, per playbook, on each ansible-core.

For each --core NAME=VENV: a fresh lifecycle lab (extensions/molecule/shared/lab.sh: pvesim, PowerDNS,
Unbound on 127.0.0.1), then deevnet.tenant.onboard (tdemo), deevnet.tenant.fabric and deevnet.tenant.tenant
(extensions/molecule/shared/tdemo.yml) with the shared inventory (examples/substrate plus the lab's
connection overrides), each its own ansible-playbook run: first run, then the same three again (no-op).
Each run: wall time, tasks started (every task banner, includes and skipped ones too), host results
(ok/changed/skipped), pvesim's requests and writes (/_sim/stats), and the per-task profile (callback
dvt_timer). Prints a Markdown table and the slowest tasks; writes results.json to --out.
pvesim answers without added latency here (the lab's default): what is measured is Ansible's side.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SHARED = ROOT / 'extensions' / 'molecule' / 'shared'
PLAYBOOKS = [
    ('onboard', ['-e', 'tenant_name=tdemo']),
    ('fabric', []),
    ('tenant', ['-e', 'tenant_file=%s' % (SHARED / 'tdemo.yml')]),
]


class Lab:
    """The lifecycle lab, started and stopped by lab.sh (which stops only what it started, by PID)."""

    def __init__(self, lab_dir, pvesim):
        self.dir = lab_dir
        self.env = dict(os.environ, PVESIM=pvesim)
        subprocess.run([str(SHARED / 'lab.sh'), 'up', str(lab_dir)], env=self.env, check=True,
                       stdout=subprocess.DEVNULL)
        text = (lab_dir / 'substrate.yml').read_text()
        self.url = re.search(r'^pvesim_url: (\S+)', text, re.M).group(1)
        secret = re.search(r'api_token_secret: "([^"]+)"', text).group(1)
        self.auth = 'PVEAPIToken=root@pam!sim=%s' % secret
        self.ctx = ssl.create_default_context(cafile=str(lab_dir / 'pvesim-ca.pem'))

    def call(self, method, path):
        req = urllib.request.Request(self.url + path, method=method, headers={'Authorization': self.auth})
        with urllib.request.urlopen(req, context=self.ctx, timeout=30) as r:
            raw = r.read()
        return json.loads(raw).get('data') if raw else None

    def down(self):
        subprocess.run([str(SHARED / 'lab.sh'), 'down', str(self.dir)], env=self.env, stdout=subprocess.DEVNULL)


def run_playbook(venv, collections, lab, work, name, extra, playbook=None):
    """ansible-playbook deevnet.tenant.<name> (or the file playbook) with the lab's inventory, measured."""
    prof = work / 'profile.json'
    prof.unlink(missing_ok=True)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_COLLECTIONS_SCAN_SYS_PATH='false',
               ANSIBLE_CONFIG=str(work / 'ansible.cfg'), ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0',
               ANSIBLE_HOME=str(work / 'ansible-home'), ANSIBLE_CALLBACK_PLUGINS=str(HERE.parent / 'ansible' / 'bench' / 'callback_plugins'),
               ANSIBLE_CALLBACKS_ENABLED='dvt_timer', DVT_PROFILE_OUT=str(prof), MOLECULE_SCENARIO_NAME='bench')
    lab.call('POST', '/_sim/stats/reset')
    log = work / ('%s.log' % name)
    t0 = time.perf_counter()
    with open(log, 'w') as out:
        rc = subprocess.run([str(pathlib.Path(venv) / 'bin' / 'ansible-playbook'), '-i', str(SHARED / 'inventory'),
                             '-e', 'lab_dir=%s' % lab.dir, str(playbook or 'deevnet.tenant.%s' % name)] + extra,
                            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=work).returncode
    wall = time.perf_counter() - t0
    st = lab.call('GET', '/_sim/stats')
    tasks = json.loads(prof.read_text()) if prof.exists() else []
    text = log.read_text()
    recap = re.findall(r'^localhost\s+:\s+ok=(\d+)\s+changed=(\d+)', text, re.M)
    return {'playbook': name, 'rc': rc, 'wall': round(wall, 2), 'tasks': len(tasks),
            'results': sum(t['ok'] + t['changed'] + t['skipped'] + t['failed'] for t in tasks),
            'skipped': sum(t['skipped'] for t in tasks), 'task_seconds': round(sum(t['seconds'] for t in tasks), 2),
            'changed': int(recap[-1][1]) if recap else None, 'requests': sum(st['requests'].values()),
            'writes': st['writes'], 'profile': tasks, 'log': text if rc else ''}


def table(rows):
    lines = ['| roles | ansible-core | run | playbook | tasks | host results (skipped) | wall s | in tasks s | changed | pvesim requests (writes) |',
             '|---|---|---|---|---|---|---|---|---|---|']
    for r in sorted(rows, key=lambda r: (r['core'], r['run'], r['playbook'], r['collection'])):
        lines.append('| %s | %s | %s | %s | %d | %d (%d) | %.2f | %.2f | %s | %d (%d) |' % (
            r['collection'], r['core'], r['run'], r['playbook'], r['tasks'], r['results'], r['skipped'], r['wall'], r['task_seconds'],
            r['changed'], r['requests'], r['writes']))
    groups = [(core, run, coll) for core in dict.fromkeys(r['core'] for r in rows) for run in ('first', 'no-op')
              for coll in dict.fromkeys(r['collection'] for r in rows)]
    for core, run, coll in groups:
        sel = [r for r in rows if r['core'] == core and r['run'] == run and r['collection'] == coll]
        lines.append('| %s | %s | %s | **all three** | %d | %d (%d) | %.2f | %.2f | %d | %d (%d) |' % (
            coll, core, run, sum(r['tasks'] for r in sel), sum(r['results'] for r in sel), sum(r['skipped'] for r in sel),
            sum(r['wall'] for r in sel), sum(r['task_seconds'] for r in sel), sum(r['changed'] or 0 for r in sel),
            sum(r['requests'] for r in sel), sum(r['writes'] for r in sel)))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pvesim', required=True)
    ap.add_argument('--collections', action='append', required=True,
                    help='[NAME=]DIR where deevnet.tenant is installed; several (e.g. before=DIR after=DIR) run interleaved')
    ap.add_argument('--core', action='append', required=True, help='NAME=VENV with ansible-core')
    ap.add_argument('--repeat', type=int, default=1, help='runs of each case; the fastest wall time is kept')
    ap.add_argument('--top', type=int, default=12, help='slowest tasks listed per core and run')
    ap.add_argument('--out', default='bench-out')
    args = ap.parse_args()
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    colls = [(c.split('=', 1) if '=' in c else ('', c)) for c in args.collections]
    colls = [(n, str(pathlib.Path(d).resolve())) for n, d in colls]
    work = pathlib.Path(tempfile.mkdtemp(prefix='dvt-bench-converge.'))
    (work / 'ansible.cfg').write_text('[defaults]\ninterpreter_python = auto_silent\n')
    failed = False
    load = os.getloadavg()
    try:
        best = {}
        for _repeat in range(args.repeat):
            for cname, venv in (c.split('=', 1) for c in args.core):
                venv = str(pathlib.Path(venv).absolute())
                version = subprocess.run([venv + '/bin/ansible', '--version'], capture_output=True, text=True).stdout.splitlines()[0]
                for coll, collections in colls:
                    lab = Lab(work / ('lab-' + cname), str(pathlib.Path(args.pvesim).resolve()))
                    try:
                        for run in ('first', 'no-op'):
                            for name, extra in PLAYBOOKS:
                                r = run_playbook(venv, collections, lab, work, name, extra)
                                r.update(core='%s (%s)' % (cname, version.split('[core ')[-1].rstrip(']')), run=run, collection=coll)
                                if r['rc']:
                                    failed = True
                                    (out / ('%s-%s-%s-%s.log' % (coll, cname, run, name))).write_text(r['log'])
                                    print('FAILED %s %s %s %s: log in %s' % (coll, cname, run, name, out), flush=True)
                                key = (coll, cname, run, name)
                                if key not in best or r['wall'] < best[key]['wall']:
                                    best[key] = r
                    finally:
                        lab.down()
        rows = list(best.values())
        print('\n'.join(table(rows)))
        for core, run, coll in {(r['core'], r['run'], r['collection']): 0 for r in rows}:
            tasks = [dict(t, playbook=r['playbook']) for r in rows
                     if r['core'] == core and r['run'] == run and r['collection'] == coll for t in r['profile']]
            tasks.sort(key=lambda t: -t['seconds'])
            print('\nslowest tasks, %s %s, %s:' % (coll, core, run))
            for t in tasks[:args.top]:
                print('  %6.3f s  %-8s %s [%s] ok=%d changed=%d skipped=%d' % (
                    t['seconds'], t['playbook'], t['task'], t['action'], t['ok'], t['changed'], t['skipped']))
        print('\nload average at start: %.2f %.2f %.2f, at end: %.2f %.2f %.2f' % (load + os.getloadavg()))
        (out / 'converge.json').write_text(json.dumps({'load_start': load, 'load_end': os.getloadavg(), 'rows': rows}, indent=1))
        print('results: %s' % (out / 'converge.json'))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        raise SystemExit(1)


if __name__ == '__main__':
    main()
