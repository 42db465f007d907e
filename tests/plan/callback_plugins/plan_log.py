# -*- coding: utf-8 -*-
# tests/plan's callback (ships in tests only): for each task of a run, what it reported (changed,
# skipped, its diff, its message) and what the world saw change while it ran: the writes pvesim
# accepted (GET /_sim/writes), the DNS objects PowerDNS holds (zones, their records and metadata,
# TSIG keys), the files of the lab's directory (the nodes' disks, the controller's attachment and
# registry files). The world is read at every task's start and at the end, so each change belongs to
# the task that ran since the last look (the linear strategy: a task has ended on every host before
# the next starts). tests/plan/compare.py compares a check run's log with the real run's.
# Values that may be secrets (file contents, TSIG secrets, API parameters) are kept as hashes or names.
from __future__ import annotations

DOCUMENTATION = r'''
name: plan_log
type: aggregate
short_description: records each task's result and the writes made while it ran (tests/plan)
description: [tests/plan/run.sh's recorder; configured by the PLAN_* environment variables.]
'''

import hashlib
import json
import os
import ssl
import urllib.request

from ansible.plugins.callback import CallbackBase


def _get(url, headers=None, ctx=None):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
        return json.load(r)


def _h(b):
    return hashlib.sha256(b).hexdigest()[:16]


class World:
    """What the lab holds, read from its servers and its directory (PLAN_* variables)."""

    def __init__(self):
        e = os.environ
        self.sim = e.get('PLAN_SIM_URL', '')
        self.ctx = ssl.create_default_context(cafile=e['PLAN_SIM_CA']) if self.sim else None
        self.pdns = e.get('PLAN_PDNS_URL', '')
        self.pdns_h = {'X-API-Key': e.get('PLAN_PDNS_KEY', '')}
        self.root = e.get('PLAN_FILES_ROOT', '')
        self.skip = [p for p in e.get('PLAN_FILES_SKIP', '').split(':') if p]
        self.seq = _get(self.sim + '/_sim/writes', ctx=self.ctx)['data']['seq'] if self.sim else 0

    def writes(self):
        if not self.sim:
            return []
        d = _get('%s/_sim/writes?since=%d' % (self.sim, self.seq), ctx=self.ctx)['data']
        self.seq = d['seq']
        return [{k: w[k] for k in ('method', 'route', 'path', 'vars', 'params', 'ids')} for w in d['writes']]

    def dns(self):
        out = {}
        if not self.pdns:
            return out
        base = self.pdns  # DNS_LAB_API_URL: .../api/v1/servers/localhost
        for z in _get(base + '/zones', self.pdns_h):
            zone = _get('%s/zones/%s' % (base, z['id']), self.pdns_h)
            for rr in zone.get('rrsets', []):
                recs = sorted(r['content'] for r in rr.get('records', []) if not r.get('disabled'))
                if rr['type'] == 'SOA':
                    out['zone %s serial' % z['name']] = str(zone.get('serial'))
                    continue
                out['rrset %s %s' % (rr['name'], rr['type'])] = '%s %s' % (rr.get('ttl'), ' | '.join(recs))
            for m in _get('%s/zones/%s/metadata' % (base, z['id']), self.pdns_h):
                out['metadata %s %s' % (z['name'], m['kind'])] = ' '.join(sorted(m.get('metadata', [])))
            out['zone %s' % z['name']] = z.get('kind', '')
        for k in _get(base + '/tsigkeys', self.pdns_h):
            key = _get('%s/tsigkeys/%s' % (base, k['id']), self.pdns_h)
            out['tsigkey %s' % k['name']] = '%s %s' % (key.get('algorithm'), _h(key.get('key', '').encode()))
        return out

    def files(self):
        out = {}
        if not self.root:
            return out
        for d, dirs, names in os.walk(self.root):
            rel = os.path.relpath(d, self.root)
            dirs[:] = sorted(x for x in dirs if os.path.normpath(os.path.join(rel, x)) not in self.skip)
            if rel != '.':
                try:
                    out[rel + '/'] = 'dir %o' % (os.stat(d).st_mode & 0o7777)
                except OSError:
                    pass
            for n in names:
                p = os.path.join(d, n)
                r = os.path.normpath(os.path.join(rel, n))
                if r in self.skip:
                    continue
                try:
                    st = os.lstat(p)
                    if os.path.islink(p):
                        out[r] = 'link ' + os.readlink(p)
                    elif os.path.isfile(p):
                        with open(p, 'rb') as f:
                            out[r] = '%o %s' % (st.st_mode & 0o7777, _h(f.read()))
                except OSError:
                    continue
        return out


def _delta(before, after):
    out = []
    for k in sorted(set(before) | set(after)):
        if k not in before:
            out.append({'object': k, 'change': 'created'})
        elif k not in after:
            out.append({'object': k, 'change': 'removed'})
        elif before[k] != after[k]:
            out.append({'object': k, 'change': 'changed'})
    return out


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'plan_log'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.out = os.environ.get('PLAN_LOG')
        self.world = World() if self.out else None
        self.dns = self.world.dns() if self.world else {}
        self.files = self.world.files() if self.world else {}
        self.task = None
        self.play = ''

    def _flush(self):
        if not self.world:
            return
        w = self.world.writes()
        dns, files = self.world.dns(), self.world.files()
        rec = self.task or {'name': '(before the first task)', 'key': '', 'play': self.play, 'results': []}
        rec.update(writes=w, dns=_delta(self.dns, dns), files=_delta(self.files, files))
        self.dns, self.files = dns, files
        if self.task or w or rec['dns'] or rec['files']:
            with open(self.out, 'a') as f:
                f.write(json.dumps(rec, sort_keys=True) + '\n')
        self.task = None

    def v2_playbook_on_play_start(self, play):
        self._flush()
        self.play = play.get_name()

    def _start(self, task):
        self._flush()
        self.task = {'name': task.get_name(), 'key': '%s|%s' % (task.get_path() or '', task.get_name()),
                     'action': task.action, 'play': self.play, 'results': []}

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start(task)

    def v2_playbook_on_handler_task_start(self, task):
        self._start(task)

    def _result(self, result, status):
        if self.task is None:
            return
        r = result._result
        diffs = []
        for x in [r] + [i for i in r.get('results', []) if isinstance(i, dict)]:
            d = x.get('diff')
            if d:
                diffs.extend(d if isinstance(d, list) else [d])
        self.task['results'].append({
            'host': result._host.get_name(), 'status': status, 'changed': bool(r.get('changed')),
            'diff': json.dumps(diffs, sort_keys=True, default=str) if diffs else '',
            'msg': str(r.get('msg', '') or r.get('skip_reason', ''))[:500],
            # what else the run shows of a changed task (-v, or the debug task after a command):
            # a file task's dest or path, a command's output
            'shows': json.dumps([v.get(k) for x in [r] + [i for i in r.get('results', []) if isinstance(i, dict)]
                                 for v in (x, (x.get('invocation') or {}).get('module_args') or {}) if isinstance(v, dict)
                                 for k in ('dest', 'path', 'stdout', 'msg') if v.get(k)]
                                + [v for k, v in (result._task.args or {}).items()
                                   if k in ('dest', 'path') and isinstance(v, str) and '{{' not in v], default=str),
            'items_changed': sum(1 for i in r.get('results', []) if isinstance(i, dict) and i.get('changed')),
        })

    def v2_runner_on_ok(self, result):
        self._result(result, 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result(result, 'ignored' if ignore_errors else 'failed')

    def v2_runner_on_skipped(self, result):
        self._result(result, 'skipped')

    def v2_runner_on_unreachable(self, result):
        self._result(result, 'unreachable')

    def v2_playbook_on_stats(self, stats):
        self._flush()
