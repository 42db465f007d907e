"""Compares a check run's plan with the real run's writes (tests/plan/run.sh).

    python3 compare.py NAME CHECK_LOG APPLY_LOG

Both logs are tests/plan/callback_plugins/plan_log.py's: one JSON line per task, with what the
task reported and the writes the lab saw while it ran (pvesim's accepted API writes, DNS objects
created, changed or removed, files of the lab's directory). A task is keyed by its file:line and
name; a task run more than once (an include in a loop, several hosts) is one key.

It fails, printing both sides, when
  - the check run wrote anything (check mode must not write);
  - a task wrote in the real run but was not `changed` in the check run (unpredicted);
  - a task was `changed` in the check run but its plan does not name the object it then wrote
    (a vmid, a pool, a zone, a key, a record, a file: the plan must say what it changes); the
    plan is the task's diff, its message, and what --check --diff -v shows of it besides (a file
    task's dest or path; a command's output, which the guard's tasks print after it);
  - a task was `changed` in the check run and wrote nothing in the real run (phantom).
Exit 0 and one summary line when the plan and the run agree.
"""
import json
import os
import re
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


SDN_APPLY = ('/cluster/sdn', '/cluster/sdn/lock')
WIRE_TABLE = re.compile(r'^nodes/([^/]+)/.*/wire\.nft$')
SDN_RENDERED = re.compile(r'^nodes/[^/]+/etc/(frr|network)(/|$)')


def describe(w):
    """One write in a line, and the names a plan must show for it."""
    kind = w['kind']
    obj = w.get('object', '')
    if (kind == 'pve' and w['route'] in SDN_APPLY) or (kind == 'file' and SDN_RENDERED.match(obj)):
        # the SDN apply (the lock, PUT /cluster/sdn) and what PVE writes on each node at it (pvesim
        # renders it): one cluster-wide write, which the plan names as the apply
        line = ('PVE %s %s' % (w['method'], w['path'])) if kind == 'pve' else 'file %s %s' % (w['change'], obj)
        return line + ' (the SDN apply)', ['apply']
    if kind == 'pve':
        ids = ' '.join('%s=%s' % kv for kv in sorted(w['ids'].items()))
        line = 'PVE %s %s (%s)%s' % (w['method'], w['path'], ','.join(w['params']) or 'no parameters', ' ' + ids if ids else '')
        vs = [v for k, v in w['vars'].items() if k != 'node']
        tokens = vs[-1:] if vs else []
        tokens += [v for k, v in w['ids'].items() if k not in ('type', 'node', 'path') and v]
        if w['ids'].get('path'):
            tokens.append(w['ids']['path'])
        return line, tokens or list(w['vars'].values())
    line = '%s %s %s' % ('DNS' if kind == 'dns' else 'file', w['change'], obj)
    if kind == 'dns':
        name = obj.split()[1]
        return line, [name, name.rstrip('.')]
    m = WIRE_TABLE.match(obj)
    if m:
        # the node's wire table: the guard's wire names it by its node, one line per port it changes
        return line, [os.path.basename(obj), 'wire on %s' % m.group(1)]
    return line, [os.path.basename(obj.rstrip('/'))]


def task_key(r):
    """A task's file and name, not its line: a write ansible.builtin.uri makes (it does not run in check
    mode) has a check-mode twin of the same name beside it (roles/tenant_dns_zone), which is its plan."""
    path, _sep, name = r['key'].partition('|')
    return re.sub(r':[0-9]+$', '', path) + '|' + name


def by_key(recs):
    out = {}
    for r in recs:
        t = out.setdefault(task_key(r), {'name': r['name'], 'play': r['play'], 'results': [], 'writes': []})
        t['results'].extend(r['results'])
        t['writes'] += [dict(w, kind='pve') for w in r['writes']]
        t['writes'] += [dict(d, kind='dns') for d in r['dns']]
        t['writes'] += [dict(d, kind='file') for d in r['files']]
    return out


def show_results(results, indent='      '):
    if not results:
        return [indent + '(the task did not run)']
    out = []
    for r in results:
        s = '%s%s: %s%s' % (indent, r['host'], r['status'], ', changed' if r['changed'] else '')
        if r['msg']:
            s += ': ' + r['msg'].replace('\n', ' ')[:300]
        out.append(s)
        if r['diff']:
            out.append(indent + '  diff: ' + r['diff'][:600])
    return out


def main(name, check_path, apply_path):
    check, apply_ = by_key(load(check_path)), by_key(load(apply_path))
    problems = []
    for key, t in check.items():
        if t['writes']:
            problems.append(['CHECK MODE WROTE  %s [%s]' % (t['name'], key)] + ['      ' + describe(w)[0] for w in t['writes']])
    n_writes = n_tasks = 0
    for key, t in apply_.items():
        c = check.get(key, {'results': []})
        predicted = [r for r in c['results'] if r['changed']]
        plan = ' '.join(r['diff'] + ' ' + r.get('shows', '') + ' ' + r['msg'] for r in predicted)
        if t['writes']:
            n_tasks += 1
            n_writes += len(t['writes'])
        if t['writes'] and not predicted:
            problems.append(['UNPREDICTED  %s [%s]' % (t['name'], key), '    the run wrote:']
                            + ['      ' + describe(w)[0] for w in t['writes']]
                            + ['    check mode said:'] + show_results(c['results']))
            continue
        unnamed = [w for w in t['writes'] if not any(tok and tok in plan for tok in describe(w)[1])]
        if unnamed:
            problems.append(['NOT NAMED IN THE PLAN  %s [%s]' % (t['name'], key), '    the run wrote:']
                            + ['      %s (looked for %s)' % (describe(w)[0], ' or '.join(describe(w)[1])) for w in unnamed]
                            + ['    check mode said:'] + show_results(c['results']))
    for key, c in check.items():
        predicted = [r for r in c['results'] if r['changed']]
        t = apply_.get(key)
        if predicted and not (t and t['writes']):
            problems.append(['PHANTOM (predicted, not made)  %s [%s]' % (c['name'], key), '    check mode said:']
                            + show_results(predicted) + ['    the run:'] + show_results(t['results'] if t else []))
    for p in problems:
        print('\n'.join(p))
    print('plan %s: %s: %d writes by %d tasks in the run, %d problems' % (
        name, 'agrees' if not problems else 'DISAGREES', n_writes, n_tasks, len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
