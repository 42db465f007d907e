# Benchmark-only callback, for both benchmarks:
#  - $DVT_TIMER_OUT: wall time of every play and of every task result (tests/ansible/bench.sh);
#  - $DVT_PROFILE_OUT: wall time of every task, summed over its loop items and hosts, in the order
#    the tasks ran, with its action and how many host results it gave (ok, changed, skipped, failed;
#    a loop gives one per host, not per item) (tests/bench/tenant_bench.py, converge_bench.py).
# Each file is written when the playbook ends, when its variable is set.
from __future__ import annotations

DOCUMENTATION = """
    name: dvt_timer
    type: aggregate
    short_description: per-play and per-task wall time, for deevnet.tenant's benchmarks
    description:
        - Writes the wall time of each play and each task result as JSON to the file named by DVT_TIMER_OUT.
        - Writes a JSON list of task names, seconds, result counts and actions to the file named by DVT_PROFILE_OUT.
    author: deevnet.tenant developers
    requirements:
        - enabled with callbacks_enabled
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'dvt_timer'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._plays = []
        self._play = None
        self._task_start = None
        self._tasks = []
        self._current = None

    def _close_play(self, now):
        if self._play is not None:
            self._play['seconds'] = now - self._play.pop('_start')
            self._plays.append(self._play)
            self._play = None

    def _close_task(self):
        if self._current is not None:
            entry, start = self._current
            entry['seconds'] = round(time.perf_counter() - start, 3)
            self._tasks.append(entry)
            self._current = None

    @staticmethod
    def _entry(task):
        return {'task': task.get_name(), 'action': task.action, 'ok': 0, 'changed': 0, 'skipped': 0, 'failed': 0}

    def v2_playbook_on_play_start(self, play):
        now = time.perf_counter()
        self._close_play(now)
        self._play = {'name': play.get_name(), '_start': now, 'tasks': []}

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close_task()
        self._task_start = time.perf_counter()
        self._current = (self._entry(task), self._task_start)

    def v2_playbook_on_handler_task_start(self, task):
        self._close_task()
        self._current = (self._entry(task), time.perf_counter())

    def _task_done(self, result, outcome):
        if self._play is not None and self._task_start is not None:
            self._play['tasks'].append(time.perf_counter() - self._task_start)
        if self._current is not None:
            self._current[0][outcome] += 1

    def v2_runner_on_ok(self, result):
        self._task_done(result, 'changed' if result._result.get('changed') else 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._task_done(result, 'failed')

    def v2_runner_on_skipped(self, result):
        self._task_done(result, 'skipped')

    def v2_playbook_on_stats(self, stats):
        self._close_play(time.perf_counter())
        self._close_task()
        for var, data in (('DVT_TIMER_OUT', self._plays), ('DVT_PROFILE_OUT', self._tasks)):
            out = os.environ.get(var)
            if out:
                with open(out, 'w') as f:
                    json.dump(data, f)
