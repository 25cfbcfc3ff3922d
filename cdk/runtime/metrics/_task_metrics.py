"""The metrics of one task, in their Kafka groups.

A task reports ``connector-task-metrics``, ``source-task-metrics`` or ``sink-task-metrics``, and
``task-error-metrics``.

Cost on the record path: the runners count records in plain integers and hand them to the
sensors here once per batch (``poll()`` batch, ``put`` batch, producer poll), with the batch's
timing; nothing here runs per record.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal

from cdk.runtime._status import ConnectorTaskId, State
from cdk.runtime.errors._metrics import ErrorHandlingMetrics
from cdk.runtime.metrics._descriptions import (
    ERROR_GROUP,
    SINK_TASK_GROUP,
    SOURCE_TASK_GROUP,
    TASK_GROUP,
)
from cdk.runtime.metrics._stats import DEFAULT_NUM_SAMPLES, DEFAULT_WINDOW_MS, SampledStat, ratio
from cdk.runtime.metrics._values import Metric, Value

__all__ = [
    "SinkTaskMetricsGroup",
    "SourceTaskMetricsGroup",
    "TaskMetrics",
    "TaskMetricsGroup",
]

TaskKind = Literal["source", "sink"]
_NAN = float("nan")


# -- task groups -------------------------------------------------------------------------------
class TaskMetricsGroup:
    """A task's ``connector-task-metrics``: state ratios, offset commits and batch sizes."""

    def __init__(self, window_s: float, num_samples: int, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._state: State | None = None
        self._since = 0.0
        self._started: float | None = None
        self._durations: dict[State, float] = {}
        self._state_lock = threading.Lock()
        self.commit_time = SampledStat(window_s, num_samples)
        self.commit_attempts = SampledStat(window_s, num_samples)
        self.batch_size = SampledStat(window_s, num_samples)

    def record_state(self, state: State) -> None:
        """The task entered ``state`` (RUNNING, PAUSED, FAILED, UNASSIGNED, ...)."""
        now = self._clock()
        with self._state_lock:
            if self._state is not None:
                self._durations[self._state] = (
                    self._durations.get(self._state, 0.0) + now - self._since
                )
            elif self._started is None:
                self._started = now
            self._state = state
            self._since = now

    def record_commit(self, duration_s: float, success: bool) -> None:
        """An offset commit ended (its time counts only when it succeeded, as Kafka's)."""
        now = self._clock()
        if success:
            self.commit_time.record(duration_s * 1000.0, now)
        self.commit_attempts.record(1.0 if success else 0.0, now)

    def record_batch(self, size: int, now: float) -> None:
        """A batch of ``size`` records was processed (polled, or put)."""
        self.batch_size.record(size, now)

    def stateratio(self, state: State, now: float) -> float:
        """Fraction of the time since the first state change spent in ``state``."""
        with self._state_lock:
            if self._started is None:
                return 0.0
            total = now - self._started
            spent = self._durations.get(state, 0.0)
            if self._state is state:
                spent += now - self._since
        return spent / total if total > 0 else 0.0

    @property
    def state(self) -> State:
        """The latest state (UNASSIGNED before the first)."""
        return self._state or State.UNASSIGNED

    def values(self, now: float) -> list[tuple[str, Value]]:
        """This group's metrics, by name."""
        success, failure = ratio(self.commit_attempts, now)
        return [
            ("status", self.state.value.lower()),
            ("running-ratio", self.stateratio(State.RUNNING, now)),
            ("pause-ratio", self.stateratio(State.PAUSED, now)),
            ("offset-commit-max-time-ms", self.commit_time.max(now)),
            ("offset-commit-avg-time-ms", self.commit_time.avg(now)),
            ("offset-commit-success-percentage", success),
            ("offset-commit-failure-percentage", failure),
            ("batch-size-max", self.batch_size.max(now)),
            ("batch-size-avg", self.batch_size.avg(now)),
        ]


class _ActiveCount:
    """A gauge with Kafka's value/max/avg (``*-active-count``)."""

    __slots__ = ("stat", "value")

    def __init__(self, window_s: float, num_samples: int) -> None:
        self.value = 0
        self.stat = SampledStat(window_s, num_samples)

    def record(self, value: int, now: float) -> None:
        self.value = value
        self.stat.record(value, now)


class SourceTaskMetricsGroup:
    """A source task's ``source-task-metrics``."""

    def __init__(self, window_s: float, num_samples: int) -> None:
        self.poll = SampledStat(window_s, num_samples)
        self.write = SampledStat(window_s, num_samples)
        self.poll_time = SampledStat(window_s, num_samples)
        self.active = _ActiveCount(window_s, num_samples)
        self._polled = 0
        self._done = 0
        #: exactly-once tasks only (Kafka registers them for those): records per transaction
        self.transaction_size: SampledStat | None = None
        self._window = (window_s, num_samples)

    def enable_transactions(self) -> None:
        """The task runs exactly once: report ``transaction-size-min/max/avg``."""
        if self.transaction_size is None:
            self.transaction_size = SampledStat(*self._window)

    def record_transaction(self, size: int, now: float) -> None:
        """A transaction of ``size`` records (the records sent; none when aborted) committed."""
        if self.transaction_size is not None:
            self.transaction_size.record(size, now)

    def record_poll(self, size: int, duration_s: float, now: float) -> None:
        """``poll()`` returned ``size`` records after ``duration_s``."""
        self.poll.record(size, now)
        self.poll_time.record(duration_s * 1000.0, now)
        self._polled += size
        self.active.record(self._polled - self._done, now)

    def record_write(self, written: int, done: int, now: float) -> None:
        """``done`` polled records are finished, ``written`` of them acknowledged by Kafka."""
        self.write.record(written, now)
        self._done += done
        self.active.record(max(self._polled - self._done, 0), now)

    def values(self, now: float) -> list[tuple[str, Value]]:
        """This group's metrics, by name."""
        return [
            ("source-record-poll-rate", self.poll.rate(now)),
            ("source-record-poll-total", self.poll.total),
            ("source-record-write-rate", self.write.rate(now)),
            ("source-record-write-total", self.write.total),
            ("poll-batch-max-time-ms", self.poll_time.max(now)),
            ("poll-batch-avg-time-ms", self.poll_time.avg(now)),
            ("source-record-active-count", float(self.active.value)),
            ("source-record-active-count-max", self.active.stat.max(now)),
            ("source-record-active-count-avg", self.active.stat.avg(now)),
            *(
                []
                if self.transaction_size is None
                else [
                    ("transaction-size-min", self.transaction_size.min(now)),
                    ("transaction-size-max", self.transaction_size.max(now)),
                    ("transaction-size-avg", self.transaction_size.avg(now)),
                ]
            ),
        ]


class SinkTaskMetricsGroup:
    """A sink task's ``sink-task-metrics``."""

    def __init__(self, window_s: float, num_samples: int) -> None:
        self.read = SampledStat(window_s, num_samples)
        self.send = SampledStat(window_s, num_samples)
        self.put_time = SampledStat(window_s, num_samples)
        self.commit_completion = SampledStat(window_s, num_samples)
        self.commit_skip = SampledStat(window_s, num_samples)
        self.fetch_gap_heal = SampledStat(window_s, num_samples)
        self.active = _ActiveCount(window_s, num_samples)
        self.partition_count = 0
        self.commit_seq_no = 0

    def record_read(self, size: int, now: float) -> None:
        """The consumer returned ``size`` records."""
        self.read.record(size, now)

    def record_put(self, size: int, duration_s: float, now: float) -> None:
        """``put`` took ``size`` records and returned after ``duration_s``."""
        self.send.record(size, now)
        self.put_time.record(duration_s * 1000.0, now)

    def values(self, now: float) -> list[tuple[str, Value]]:
        """This group's metrics, by name."""
        return [
            ("sink-record-read-rate", self.read.rate(now)),
            ("sink-record-read-total", self.read.total),
            ("sink-record-send-rate", self.send.rate(now)),
            ("sink-record-send-total", self.send.total),
            ("put-batch-max-time-ms", self.put_time.max(now)),
            ("put-batch-avg-time-ms", self.put_time.avg(now)),
            ("partition-count", float(self.partition_count)),
            ("offset-commit-seq-no", float(self.commit_seq_no)),
            ("offset-commit-completion-rate", self.commit_completion.rate(now)),
            ("offset-commit-completion-total", self.commit_completion.total),
            ("offset-commit-skip-rate", self.commit_skip.rate(now)),
            ("offset-commit-skip-total", self.commit_skip.total),
            ("fetch-gap-heal-rate", self.fetch_gap_heal.rate(now)),
            ("fetch-gap-heal-total", self.fetch_gap_heal.total),
            ("sink-record-active-count", float(self.active.value)),
            ("sink-record-active-count-max", self.active.stat.max(now)),
            ("sink-record-active-count-avg", self.active.stat.avg(now)),
        ]


class TaskMetrics:
    """Every metric group of one task.

    A runner built without a registry (unit tests) makes its own, which nothing reads.

    Args:
        task_id: the task.
        kind: ``"source"`` or ``"sink"``.
        errors: the task's error handling counters (shared with its error operator and
            reporters), a new set when None.
        window_s: ``metrics.sample.window.ms`` in seconds.
        num_samples: ``metrics.num.samples``.
        clock: monotonic time in seconds.
    """

    def __init__(
        self,
        task_id: ConnectorTaskId,
        kind: TaskKind,
        errors: ErrorHandlingMetrics | None = None,
        *,
        window_s: float = DEFAULT_WINDOW_MS / 1000,
        num_samples: int = DEFAULT_NUM_SAMPLES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.id = task_id
        self.kind = kind
        self.clock = clock
        self.task = TaskMetricsGroup(window_s, num_samples, clock)
        self.source = SourceTaskMetricsGroup(window_s, num_samples) if kind == "source" else None
        self.sink = SinkTaskMetricsGroup(window_s, num_samples) if kind == "sink" else None
        self.errors = errors if errors is not None else ErrorHandlingMetrics()

    def metrics(self, now: float) -> list[Metric]:
        """Every metric of the task, tagged with its connector and number."""
        tags = (("connector", self.id.connector), ("task", str(self.id.task)))
        out = [Metric(TASK_GROUP, n, tags, v) for n, v in self.task.values(now)]
        if self.source is not None:
            out += [Metric(SOURCE_TASK_GROUP, n, tags, v) for n, v in self.source.values(now)]
        if self.sink is not None:
            out += [Metric(SINK_TASK_GROUP, n, tags, v) for n, v in self.sink.values(now)]
        counts = self.errors.snapshot()
        out += [Metric(ERROR_GROUP, n.replace("_", "-"), tags, float(v)) for n, v in counts.items()]
        last = self.errors.last_error_timestamp
        out.append(Metric(ERROR_GROUP, "last-error-timestamp", tags, float(last or 0)))
        return out

    def __repr__(self) -> str:
        return f"TaskMetrics({self.id}, {self.kind})"
