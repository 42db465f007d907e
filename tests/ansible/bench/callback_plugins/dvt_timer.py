# Benchmark-only callback: wall time of every play and of every task, written as JSON to
# $DVT_TIMER_OUT when the playbook ends (tests/ansible/bench.sh reads it).
from __future__ import annotations

DOCUMENTATION = """
    name: dvt_timer
    type: aggregate
    short_description: per-play and per-task wall time, for deevnet.tenant's benchmark
    description:
        - Writes the wall time of each play and each task as JSON to the file named by DVT_TIMER_OUT.
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

    def _close_play(self, now):
        if self._play is not None:
            self._play['seconds'] = now - self._play.pop('_start')
            self._plays.append(self._play)
            self._play = None

    def v2_playbook_on_play_start(self, play):
        now = time.perf_counter()
        self._close_play(now)
        self._play = {'name': play.get_name(), '_start': now, 'tasks': []}

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task_start = time.perf_counter()

    def _task_done(self, result):
        if self._play is not None and self._task_start is not None:
            self._play['tasks'].append(time.perf_counter() - self._task_start)

    v2_runner_on_ok = _task_done
    v2_runner_on_failed = _task_done
    v2_runner_on_skipped = _task_done

    def v2_playbook_on_stats(self, stats):
        self._close_play(time.perf_counter())
        out = os.environ.get('DVT_TIMER_OUT')
        if out:
            with open(out, 'w') as f:
                json.dump(self._plays, f)
