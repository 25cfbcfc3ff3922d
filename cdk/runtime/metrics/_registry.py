"""The metrics registry of one worker, read at scrape time, and the values it gives.

:class:`ConnectMetrics` is the registry of one worker; each task runner holds a
:class:`~cdk.runtime.metrics._task_metrics.TaskMetrics` from it; the worker adds the worker and
connector values when the registry is read (:meth:`ConnectMetrics.snapshot`), which gives a
:class:`MetricsSnapshot` of :class:`Metric` values.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cdk.runtime._status import ConnectorTaskId, State
from cdk.runtime.errors._metrics import ErrorHandlingMetrics
from cdk.runtime.metrics._descriptions import (
    CONNECTOR_GROUP,
    WORKER_GROUP,
)
from cdk.runtime.metrics._stats import DEFAULT_NUM_SAMPLES, DEFAULT_WINDOW_MS, SampledStat, ratio
from cdk.runtime.metrics._task_metrics import TaskKind, TaskMetrics
from cdk.runtime.metrics._values import Metric, MetricsSnapshot, Value

if TYPE_CHECKING:
    from cdk.runtime._status import StatusStore

__all__ = ["ConnectMetrics", "ConnectorMetricsInfo"]


# -- the registry ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConnectorMetricsInfo:
    """What ``connector-metrics`` reports of a connector held by the worker.

    Attributes:
        name: the connector's name.
        kind: ``source`` or ``sink`` (None when it could not be instantiated).
        class_name: the connector's class (its full Python path).
        version: what its ``version()`` returned (None before it was asked, or when it raised).
    """

    name: str
    kind: str | None
    class_name: str
    version: str | None


class _Startups:
    """Startup attempts of connectors or tasks: totals and the windowed success fraction."""

    def __init__(self, window_s: float, num_samples: int) -> None:
        self.success = 0
        self.failure = 0
        self.results = SampledStat(window_s, num_samples)

    def record(self, success: bool, now: float) -> None:
        if success:
            self.success += 1
        else:
            self.failure += 1
        self.results.record(1.0 if success else 0.0, now)

    def values(self, what: str, now: float) -> list[tuple[str, Value]]:
        success, failure = ratio(self.results, now)
        return [
            (f"{what}-startup-attempts-total", float(self.success + self.failure)),
            (f"{what}-startup-success-total", float(self.success)),
            (f"{what}-startup-success-percentage", success),
            (f"{what}-startup-failure-total", float(self.failure)),
            (f"{what}-startup-failure-percentage", failure),
        ]


#: connector-<state>-task-count for each task state, as Kafka's worker reports them
_TASK_COUNT_STATES = (
    ("running", State.RUNNING),
    ("paused", State.PAUSED),
    ("failed", State.FAILED),
    ("unassigned", State.UNASSIGNED),
    ("destroyed", State.DESTROYED),
    ("restarting", State.RESTARTING),
)


class ConnectMetrics:
    """The metrics registry of one worker.

    The worker makes one and gives each task runner the :class:`TaskMetrics` from
    :meth:`task_metrics`; :meth:`snapshot` reads every value (the ``/metrics`` endpoint and
    :meth:`~cdk.runtime.EmbeddedWorker.metrics` call it).

    Args:
        window_ms: ``metrics.sample.window.ms``.
        num_samples: ``metrics.num.samples``.
        clock: monotonic time in seconds.
    """

    def __init__(
        self,
        window_ms: int = DEFAULT_WINDOW_MS,
        num_samples: int = DEFAULT_NUM_SAMPLES,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window_s = max(window_ms, 1) / 1000.0
        self.num_samples = max(num_samples, 1)
        self.clock = clock
        self._lock = threading.Lock()
        self._tasks: dict[ConnectorTaskId, TaskMetrics] = {}
        self._connector_startups = _Startups(self.window_s, self.num_samples)
        self._task_startups = _Startups(self.window_s, self.num_samples)
        self._connectors: Callable[[], Sequence[ConnectorMetricsInfo]] = tuple
        self._status: StatusStore | None = None

    def bind_worker(
        self, connectors: Callable[[], Sequence[ConnectorMetricsInfo]], status: StatusStore
    ) -> None:
        """Where the worker-level values come from at read time: its connectors and statuses."""
        self._connectors = connectors
        self._status = status

    def task_metrics(
        self, task_id: ConnectorTaskId, kind: TaskKind, errors: ErrorHandlingMetrics | None = None
    ) -> TaskMetrics:
        """New metrics for a task, replacing any earlier ones of the same id (a restart)."""
        metrics = TaskMetrics(
            task_id,
            kind,
            errors,
            window_s=self.window_s,
            num_samples=self.num_samples,
            clock=self.clock,
        )
        with self._lock:
            self._tasks[task_id] = metrics
        return metrics

    def remove_task(self, task_id: ConnectorTaskId, metrics: TaskMetrics | None = None) -> None:
        """Forget a task's metrics (only ``metrics`` when given: not a newer generation's)."""
        with self._lock:
            if metrics is None or self._tasks.get(task_id) is metrics:
                self._tasks.pop(task_id, None)

    def record_connector_startup(self, success: bool) -> None:
        """A connector start was attempted on the worker; whether it succeeded."""
        self._connector_startups.record(success, self.clock())

    def record_task_startup(self, success: bool) -> None:
        """A task start was attempted on the worker; whether it succeeded."""
        self._task_startups.record(success, self.clock())

    def snapshot(self) -> MetricsSnapshot:
        """Every metric's current value: worker, connectors, then tasks by id."""
        now = self.clock()
        connectors = sorted(self._connectors(), key=lambda c: c.name)
        with self._lock:
            tasks = sorted(self._tasks.items())
        out = [
            Metric(WORKER_GROUP, "connector-count", (), float(len(connectors))),
            Metric(WORKER_GROUP, "task-count", (), float(len(tasks))),
        ]
        out += [
            Metric(WORKER_GROUP, n, (), v)
            for n, v in self._connector_startups.values("connector", now)
            + self._task_startups.values("task", now)
        ]
        for info in connectors:
            out += self._connector_metrics(info)
        for _, task in tasks:
            out += task.metrics(now)
        return MetricsSnapshot(out)

    def _connector_metrics(self, info: ConnectorMetricsInfo) -> list[Metric]:
        tags = (("connector", info.name),)
        status = self._status
        states: Mapping[int, object] = status.tasks(info.name) if status is not None else {}
        counts = {state: 0 for _, state in _TASK_COUNT_STATES}
        for task_status in states.values():
            state = getattr(task_status, "state", None)
            if isinstance(state, State) and state in counts:
                counts[state] += 1
        out = [Metric(WORKER_GROUP, "connector-total-task-count", tags, float(len(states)))]
        out += [
            Metric(WORKER_GROUP, f"connector-{label}-task-count", tags, float(counts[state]))
            for label, state in _TASK_COUNT_STATES
        ]
        connector_status = status.connector(info.name) if status is not None else None
        state_text = (
            connector_status.state.value.lower() if connector_status is not None else "unassigned"
        )
        out += [
            Metric(CONNECTOR_GROUP, "status", tags, state_text),
            Metric(CONNECTOR_GROUP, "connector-type", tags, info.kind or "unknown"),
            Metric(CONNECTOR_GROUP, "connector-class", tags, info.class_name),
            Metric(CONNECTOR_GROUP, "connector-version", tags, info.version or "unknown"),
        ]
        return out

    def __repr__(self) -> str:
        return f"ConnectMetrics(window={self.window_s}s x {self.num_samples})"
