"""Assertions on the artifacts of tests/ee/run.sh's ansible-runner jobs (make test-ee).

For each job (converge, verify, converge-again) in PDD/artifacts/<ident>: the status and rc files
AWX reads, the job events (start, stats, the collection's modules at work, nothing failed or
unreachable), what each job must have done (converge changes, verify's checks pass, the second
converge changes nothing), and that no secret of the lab is in any artifact file.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys

import yaml

JOBS = ('converge', 'verify', 'converge-again')


def events(pdd, ident):
    files = glob.glob(os.path.join(pdd, 'artifacts', ident, 'job_events', '*.json'))
    evs = [json.load(open(f)) for f in files]
    return sorted(evs, key=lambda e: e.get('counter', 0))


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def secrets(lab):
    """The lab's real secret values: the substrate's, and tdemo's from its attachment file."""
    sub = yaml.safe_load(open(os.path.join(lab, 'substrate.yml')))
    att = yaml.safe_load(open(os.path.join(lab, 'attachments', 'tdemo.yml')))['tenant_attachment']
    found = {
        'substrate PVE token secret': sub['substrate_pve']['api_token_secret'],
        'PowerDNS API key': sub['substrate_pdns']['api_key'],
        'tdemo PVE token secret': att['pve']['api_token_secret'],
        'tdemo TSIG key': att['dns']['key_secret'],
    }
    for name, value in found.items():
        if not value or len(str(value)) < 12:
            raise SystemExit('FAIL  %s is empty or too short to search for: the lab changed' % name)
    return found


def check_job(pdd, ident, results):
    def check(name, ok, detail=''):
        results.append(ok)
        print('%s  %s: %s%s' % ('PASS' if ok else 'FAIL', ident, name, (' (%s)' % detail) if detail and not ok else ''))

    status = read(os.path.join(pdd, 'artifacts', ident, 'status'))
    rc = read(os.path.join(pdd, 'artifacts', ident, 'rc'))
    check('status successful, rc 0', status == 'successful' and rc == '0', 'status %s, rc %s' % (status, rc))
    evs = events(pdd, ident)
    kinds = [e.get('event') for e in evs]
    check('job events from playbook_on_start to playbook_on_stats (%d events)' % len(evs),
          bool(evs) and kinds[0] == 'playbook_on_start' and kinds[-1] == 'playbook_on_stats', kinds[:1] + kinds[-1:])
    failed = [e for e in evs if e.get('event') in ('runner_on_failed', 'runner_item_on_failed')
              and not e.get('event_data', {}).get('ignore_errors')]
    unreachable = [e for e in evs if e.get('event') == 'runner_on_unreachable']
    check('no failed or unreachable task', not failed and not unreachable,
          '; '.join(e['event_data'].get('task', '?') for e in failed + unreachable))
    stats = evs[-1].get('event_data', {}) if evs else {}
    check('stats: no failures, nothing unreachable', not stats.get('failures') and not stats.get('dark'),
          'failures %s, dark %s' % (stats.get('failures'), stats.get('dark')))
    ok_actions = {}
    for e in evs:
        if e.get('event') == 'runner_on_ok':
            action = e['event_data'].get('resolved_action') or e['event_data'].get('task_action') or ''
            ok_actions[action] = ok_actions.get(action, 0) + 1
    changed = sum((stats.get('changed') or {}).values())
    return evs, ok_actions, changed, check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pdd', required=True)
    ap.add_argument('--lab', required=True)
    args = ap.parse_args()
    results = []
    figures = []
    for ident in JOBS:
        evs, ok_actions, changed, check = check_job(args.pdd, ident, results)
        ours = {a: n for a, n in ok_actions.items() if a.startswith('deevnet.tenant.')}
        figures.append('%s: %d events, %d changed, modules %s' % (
            ident, len(evs), changed, ', '.join('%s x%d' % (a.split('.')[-1], n) for a, n in sorted(ours.items()))))
        if ident == 'converge':
            check('changed something (tdemo onboarded and converged)', changed > 0, 'changed %d' % changed)
            for mod in ('tenant_plan', 'pve_tenant_access', 'tenant_vrf', 'pve_sdn_apply', 'tenant_vm', 'nsupdate_tsig'):
                check('ran deevnet.tenant.%s' % mod, ('deevnet.tenant.' + mod) in ours, sorted(ours))
        elif ident == 'verify':
            names = {e['event_data'].get('task') for e in evs if e.get('event') == 'runner_on_ok'}
            for task in ('Check the names through the resolver and the VMs in PVE', 'Check that every check passed (after the report is written)'):
                check('task ok: %s' % task, task in names)
        else:
            check('idempotent: the second converge changed nothing', changed == 0, 'changed %d' % changed)
    # No secret anywhere in what the jobs left behind (AWX stores and shows these).
    found = secrets(args.lab)
    files = [f for f in glob.glob(os.path.join(args.pdd, 'artifacts', '**'), recursive=True) if os.path.isfile(f)]
    leaks = []
    for f in files:
        data = open(f, 'rb').read()
        leaks += ['%s in %s' % (name, os.path.relpath(f, args.pdd)) for name, v in found.items() if str(v).encode() in data]
    results.append(not leaks and bool(files))
    if leaks:
        print('FAIL  secrets in artifacts: ' + '; '.join(leaks[:20]))
    else:
        print('PASS  none of %s in the %d artifact files' % (', '.join(found), len(files)))
    for line in figures:
        print('      ' + line)
    sys.exit(0 if all(results) else 1)


if __name__ == '__main__':
    main()
