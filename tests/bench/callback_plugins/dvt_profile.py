# Benchmark-only callback: wall time of every task (summed over its loop items and hosts), in the
# order the tasks ran, with how many host results it gave (ok, changed, skipped, failed; a loop
# gives one per host, not per item), written as JSON to $DVT_PROFILE_OUT when the playbook ends.
from __future__ import annotations

DOCUMENTATION = """
    name: dvt_profile
    type: aggregate
    short_description: per-task wall time, for deevnet.tenant's make bench
    description:
        - Writes a JSON list of task names, seconds, result counts and the task's action to the file named by DVT_PROFILE_OUT.
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
    CALLBACK_NAME = 'dvt_profile'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._tasks = []
        self._current = None

    def _close(self):
        if self._current is not None:
            entry, start = self._current
            entry['seconds'] = round(time.perf_counter() - start, 3)
            self._tasks.append(entry)
            self._current = None

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close()
        entry = {'task': task.get_name(), 'action': task.action, 'ok': 0, 'changed': 0, 'skipped': 0, 'failed': 0}
        self._current = (entry, time.perf_counter())

    v2_playbook_on_handler_task_start = v2_playbook_on_task_start

    def _count(self, key):
        if self._current is not None:
            self._current[0][key] += 1

    def v2_runner_on_ok(self, result):
        self._count('changed' if result._result.get('changed') else 'ok')

    def v2_runner_on_skipped(self, result):
        self._count('skipped')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count('failed')

    def v2_playbook_on_stats(self, stats):
        self._close()
        out = os.environ.get('DVT_PROFILE_OUT')
        if out:
            with open(out, 'w') as f:
                json.dump(self._tasks, f)
