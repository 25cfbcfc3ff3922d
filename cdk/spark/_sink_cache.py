"""Sink tasks kept started in an executor's Python worker across a query's micro-batches.

Spark runs each micro-batch's partitions as new Spark tasks, but in the same Python workers
(``spark.python.worker.reuse``, the default). Starting the sink task (and its client: an
engine, a connection, an offsets table) for every micro-batch and partition cost most of a
micro-batch's write; a streaming write instead takes the task its query's partition left here
at the end of the micro-batch before (:meth:`SinkTaskCache.take`) and leaves it again at the end
(:meth:`SinkTaskCache.give`).

Only a task whose micro-batch ended well is left: it flushed (``pre_commit``) and closed its
partitions as a task stopped at that point would have, so it holds nothing of the batch; the
next micro-batch opens its partitions again, and ``open()`` gives the offsets the sink stored,
as it does for a task just started (a replayed micro-batch is skipped exactly as before). A task
whose micro-batch failed is stopped, never left.

A task nobody took for ``cdk.sink.idle.ms`` is stopped (on a thread of the cache: the query
stopped, or its next micro-batch went to another Python worker); so are the others of its query
and partition when the task config changes, the least recently used beyond
:data:`MAX_IDLE_TASKS`, and every task left when the worker process exits (``atexit``, or the
``SIGHUP``/``SIGTERM`` PySpark's daemon stops its workers with).
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass
from types import FrameType
from typing import Any

__all__ = ["MAX_IDLE_TASKS", "SINK_TASKS", "SinkTaskCache"]

log = logging.getLogger(__name__)

#: At most this many idle tasks per Python worker (the least recently used is stopped first).
MAX_IDLE_TASKS = 32


@dataclass
class _Idle:
    run: Any  # a _SinkRun: stop() with .task.stop()
    since: float
    idle_s: float


class SinkTaskCache:
    """Idle sink task runs by key: ``(query id, partition, config)``.

    A key's ``group`` (its first two items) identifies the query's partition: a task of the
    same group with another config is stopped when the new one is taken or left.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[Hashable, _Idle] = {}
        self._wake = threading.Condition(self._lock)
        self._reaper: threading.Thread | None = None
        self._hooked = False

    def take(self, key: tuple[Any, ...]) -> Any | None:
        """The idle run of ``key`` (now the caller's), or None; stops those of a stale config."""
        with self._lock:
            entry = self._idle.pop(key, None)
            stale = self._pop_group(key)
        self._stop_all(stale, "its task config changed")
        return None if entry is None else entry.run

    def give(self, key: tuple[Any, ...], run: Any, idle_ms: int) -> None:
        """Leave ``run`` (its micro-batch ended well) for the next micro-batch of ``key``."""
        self._hook_exit()
        with self._lock:
            stale = self._pop_group(key)
            previous = self._idle.pop(key, None)
            if previous is not None:
                stale.append(previous.run)
            self._idle[key] = _Idle(run, time.monotonic(), idle_ms / 1000)
            while len(self._idle) > MAX_IDLE_TASKS:
                oldest = min(self._idle, key=lambda k: self._idle[k].since)
                stale.append(self._idle.pop(oldest).run)
            if self._reaper is None or not self._reaper.is_alive():
                self._reaper = threading.Thread(
                    target=self._reap, name="cdk-sink-task-reaper", daemon=True
                )
                self._reaper.start()
            self._wake.notify_all()
        self._stop_all(stale, "another task replaced it")

    def close_all(self, wait_s: float = -1) -> None:
        """Stop every idle task (the worker process goes away).

        Args:
            wait_s: at most this long for the cache's lock (a signal handler must not wait on
                the code it interrupted); negative: as long as it takes.
        """
        if not self._lock.acquire(timeout=wait_s):
            return
        try:
            runs = [e.run for e in self._idle.values()]
            self._idle.clear()
            self._wake.notify_all()
        finally:
            self._lock.release()
        self._stop_all(runs, "the Python worker exits")

    def __len__(self) -> int:
        with self._lock:
            return len(self._idle)

    def _pop_group(self, key: tuple[Any, ...]) -> list[Any]:
        group = key[:2]
        stale = [k for k in self._idle if k[:2] == group and k != key]  # type: ignore[index]
        return [self._idle.pop(k).run for k in stale]

    def _reap(self) -> None:
        while True:
            with self._lock:
                if not self._idle:
                    self._reaper = None
                    return
                now = time.monotonic()
                expired = [k for k, e in self._idle.items() if now - e.since >= e.idle_s]
                runs = [self._idle.pop(k).run for k in expired]
                if not runs:
                    wait = min(e.since + e.idle_s for e in self._idle.values()) - now
                    self._wake.wait(max(wait, 0.01))
                    continue
            self._stop_all(runs, "no micro-batch came for cdk.sink.idle.ms")

    @staticmethod
    def _stop_all(runs: list[Any], why: str) -> None:
        for run in runs:
            log.info("Stopping a kept sink task of %s: %s", run.options.name, why)
            try:
                run.task.stop()
            except Exception:
                log.exception("Stopping a sink task of %s failed", run.options.name)

    def _hook_exit(self) -> None:
        if not self._hooked:
            self._hooked = True
            atexit.register(self.close_all)
        if threading.current_thread() is not threading.main_thread():
            return
        # again each time: PySpark's daemon resets both to the default before each Spark task
        for signum in (signal.SIGHUP, signal.SIGTERM):
            if signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        """Stop the idle tasks, then die of the signal as the default would."""
        try:
            self.close_all(wait_s=1.0)
        finally:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)


#: The Python worker's idle sink tasks.
SINK_TASKS = SinkTaskCache()
