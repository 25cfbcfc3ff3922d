"""Kafka Connect's worker, connector and task metrics, kept in process and read at scrape time.

The names, groups and tags are Kafka Connect's (``ConnectMetricsRegistry``): a metric is a
``(group, name, tags)`` triple such as ``("sink-task-metrics", "sink-record-read-rate",
{"connector": "c", "task": "0"})``. :class:`ConnectMetrics` is the registry of one worker; each
task runner holds a :class:`TaskMetrics` (its ``connector-task-metrics``, its
``source-task-metrics`` or ``sink-task-metrics``, and its ``task-error-metrics``); the worker adds
the worker and connector values when the registry is read (:meth:`ConnectMetrics.snapshot`).

Cost on the record path: the runners count records in plain integers and hand them to the
sensors here once per batch (``poll()`` batch, ``put`` batch, producer poll), with the batch's
timing; nothing here runs per record.

Windows: rates, averages and maxima follow Kafka's sampled statistics with the worker's
``metrics.sample.window.ms`` (30 s) and ``metrics.num.samples`` (2). Values go into the current
sample until it is one window old, then a new sample starts (the oldest is dropped beyond
``metrics.num.samples``); a read ignores samples that started more than ``num.samples`` windows
ago. A rate divides the sum of the live samples by the time since the oldest live sample
started, counted as at least ``num.samples - 1`` whole windows (so a task that ran 5 s reports
its count over ~35 s, as Kafka does). An average or maximum with nothing recorded in the live
samples is NaN, a rate 0. ``*-total`` values are cumulative since the task (or worker) started.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from cdk.runtime._status import ConnectorTaskId, State
from cdk.runtime.errors._metrics import ErrorHandlingMetrics

if TYPE_CHECKING:
    from cdk.runtime._status import StatusStore

__all__ = [
    "CONNECTOR_GROUP",
    "ERROR_GROUP",
    "SINK_TASK_GROUP",
    "SOURCE_TASK_GROUP",
    "TASK_GROUP",
    "WORKER_GROUP",
    "ConnectMetrics",
    "ConnectorMetricsInfo",
    "Metric",
    "MetricsSnapshot",
    "SampledStat",
    "SinkTaskMetricsGroup",
    "SourceTaskMetricsGroup",
    "TaskMetrics",
    "TaskMetricsGroup",
    "description",
]

WORKER_GROUP = "connect-worker-metrics"
CONNECTOR_GROUP = "connector-metrics"
TASK_GROUP = "connector-task-metrics"
SOURCE_TASK_GROUP = "source-task-metrics"
SINK_TASK_GROUP = "sink-task-metrics"
ERROR_GROUP = "task-error-metrics"

#: Kafka's defaults of ``metrics.sample.window.ms`` and ``metrics.num.samples``.
DEFAULT_WINDOW_MS = 30_000
DEFAULT_NUM_SAMPLES = 2

_NAN = float("nan")
Value = float | str
TaskKind = Literal["source", "sink"]

# (group, name) -> what the metric means (the HELP text of the Prometheus endpoint)
_DESCRIPTIONS: dict[tuple[str, str], str] = {
    (WORKER_GROUP, "connector-count"): "Connectors held by this worker.",
    (WORKER_GROUP, "task-count"): "Tasks run by this worker.",
    (WORKER_GROUP, "connector-startup-attempts-total"): "Connector starts this worker attempted.",
    (WORKER_GROUP, "connector-startup-success-total"): "Connector starts that succeeded.",
    (WORKER_GROUP, "connector-startup-failure-total"): "Connector starts that failed.",
    (WORKER_GROUP, "connector-startup-success-percentage"): (
        "Fraction (0 to 1) of the connector starts in the window that succeeded."
    ),
    (WORKER_GROUP, "connector-startup-failure-percentage"): (
        "Fraction (0 to 1) of the connector starts in the window that failed."
    ),
    (WORKER_GROUP, "task-startup-attempts-total"): "Task starts this worker attempted.",
    (WORKER_GROUP, "task-startup-success-total"): "Task starts that succeeded.",
    (WORKER_GROUP, "task-startup-failure-total"): "Task starts that failed.",
    (WORKER_GROUP, "task-startup-success-percentage"): (
        "Fraction (0 to 1) of the task starts in the window that succeeded."
    ),
    (WORKER_GROUP, "task-startup-failure-percentage"): (
        "Fraction (0 to 1) of the task starts in the window that failed."
    ),
    (WORKER_GROUP, "connector-total-task-count"): "Tasks of the connector on this worker.",
    (WORKER_GROUP, "connector-running-task-count"): "RUNNING tasks of the connector.",
    (WORKER_GROUP, "connector-paused-task-count"): "PAUSED tasks of the connector.",
    (WORKER_GROUP, "connector-failed-task-count"): "FAILED tasks of the connector.",
    (WORKER_GROUP, "connector-unassigned-task-count"): "UNASSIGNED tasks of the connector.",
    (WORKER_GROUP, "connector-destroyed-task-count"): "DESTROYED tasks of the connector.",
    (WORKER_GROUP, "connector-restarting-task-count"): "RESTARTING tasks of the connector.",
    (CONNECTOR_GROUP, "status"): "The connector's state (lower case).",
    (CONNECTOR_GROUP, "connector-type"): "source or sink.",
    (CONNECTOR_GROUP, "connector-class"): "The connector's class.",
    (CONNECTOR_GROUP, "connector-version"): "The version the connector reports.",
    (TASK_GROUP, "status"): "The task's state (lower case).",
    (TASK_GROUP, "running-ratio"): "Fraction of its time the task spent RUNNING.",
    (TASK_GROUP, "pause-ratio"): "Fraction of its time the task spent PAUSED.",
    (TASK_GROUP, "offset-commit-max-time-ms"): "Longest successful offset commit (ms).",
    (TASK_GROUP, "offset-commit-avg-time-ms"): "Average successful offset commit (ms).",
    (TASK_GROUP, "offset-commit-success-percentage"): (
        "Fraction (0 to 1) of the offset commits in the window that succeeded."
    ),
    (TASK_GROUP, "offset-commit-failure-percentage"): (
        "Fraction (0 to 1) of the offset commits in the window that failed."
    ),
    (TASK_GROUP, "batch-size-max"): "Largest batch the task processed.",
    (TASK_GROUP, "batch-size-avg"): "Average batch the task processed.",
    (SOURCE_TASK_GROUP, "source-record-poll-rate"): (
        "Records returned by poll() per second (before the transformations)."
    ),
    (SOURCE_TASK_GROUP, "source-record-poll-total"): (
        "Records returned by poll() since the task started (before the transformations)."
    ),
    (SOURCE_TASK_GROUP, "source-record-write-rate"): (
        "Records written to Kafka per second (after the transformations; filtered records left "
        "out)."
    ),
    (SOURCE_TASK_GROUP, "source-record-write-total"): (
        "Records written to Kafka since the task started (after the transformations)."
    ),
    (
        SOURCE_TASK_GROUP,
        "poll-batch-max-time-ms",
    ): "Longest poll() returning records (ms).",
    (
        SOURCE_TASK_GROUP,
        "poll-batch-avg-time-ms",
    ): "Average poll() returning records (ms).",
    (SOURCE_TASK_GROUP, "source-record-active-count"): (
        "Records polled but not yet written to Kafka (nor dropped)."
    ),
    (SOURCE_TASK_GROUP, "source-record-active-count-max"): "Maximum of source-record-active-count.",
    (SOURCE_TASK_GROUP, "source-record-active-count-avg"): "Average of source-record-active-count.",
    (SINK_TASK_GROUP, "sink-record-read-rate"): (
        "Records read from Kafka per second (before the transformations)."
    ),
    (SINK_TASK_GROUP, "sink-record-read-total"): "Records read from Kafka since the task started.",
    (SINK_TASK_GROUP, "sink-record-send-rate"): (
        "Records put to the task per second (after the transformations; filtered records left out)."
    ),
    (SINK_TASK_GROUP, "sink-record-send-total"): "Records put to the task since it started.",
    (SINK_TASK_GROUP, "put-batch-max-time-ms"): "Longest put() call (ms).",
    (SINK_TASK_GROUP, "put-batch-avg-time-ms"): "Average put() call (ms).",
    (SINK_TASK_GROUP, "partition-count"): "Topic partitions assigned to the task.",
    (SINK_TASK_GROUP, "offset-commit-seq-no"): "Sequence number of the latest offset commit.",
    (SINK_TASK_GROUP, "offset-commit-completion-rate"): (
        "Offset commits completed successfully per second."
    ),
    (SINK_TASK_GROUP, "offset-commit-completion-total"): (
        "Offset commits completed successfully since the task started."
    ),
    (SINK_TASK_GROUP, "offset-commit-skip-rate"): (
        "Offset commit completions per second that arrived after a newer commit started (ignored)."
    ),
    (SINK_TASK_GROUP, "offset-commit-skip-total"): (
        "Offset commit completions that arrived after a newer commit started (ignored)."
    ),
    (SINK_TASK_GROUP, "sink-record-active-count"): (
        "Records read from Kafka whose offsets are not committed yet."
    ),
    (SINK_TASK_GROUP, "sink-record-active-count-max"): "Maximum of sink-record-active-count.",
    (SINK_TASK_GROUP, "sink-record-active-count-avg"): "Average of sink-record-active-count.",
    (ERROR_GROUP, "total-record-failures"): "Record processing failures (each failed attempt).",
    (ERROR_GROUP, "total-record-errors"): "Records whose processing failed (after retries).",
    (ERROR_GROUP, "total-records-skipped"): "Records skipped because of errors.",
    (ERROR_GROUP, "total-retries"): "Operations retried.",
    (ERROR_GROUP, "total-errors-logged"): "Errors logged (errors.log.enable).",
    (ERROR_GROUP, "deadletterqueue-produce-requests"): "Writes attempted to the dead letter queue.",
    (
        ERROR_GROUP,
        "deadletterqueue-produce-failures",
    ): "Failed writes to the dead letter queue.",
    (ERROR_GROUP, "last-error-timestamp"): "When the task last met an error (epoch ms, 0: never).",
}


def description(group: str, name: str) -> str:
    """What metric ``name`` of ``group`` means (empty for an unknown metric)."""
    return _DESCRIPTIONS.get((group, name), "")


# -- values ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Metric:
    """One metric value as Kafka Connect names it.

    Attributes:
        group: Kafka's group (``sink-task-metrics``, ...), the JMX ``type``.
        name: Kafka's metric name (``sink-record-read-rate``, ...).
        tags: Kafka's tags as ``(key, value)`` pairs (``connector``, ``task``), in that order.
        value: a number, or a text for ``status``, ``connector-class``, ``connector-type`` and
            ``connector-version``.
    """

    group: str
    name: str
    tags: tuple[tuple[str, str], ...]
    value: Value

    @property
    def description(self) -> str:
        """What the metric means."""
        return description(self.group, self.name)


class MetricsSnapshot(Sequence[Metric]):
    """The metric values of a worker at one moment (see :meth:`ConnectMetrics.snapshot`).

    Example::

        snapshot = worker.metrics()
        snapshot.value("sink-task-metrics", "sink-record-read-total", connector="s", task=0)
    """

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self._metrics = list(metrics)

    def __len__(self) -> int:
        return len(self._metrics)

    def __getitem__(self, index: int) -> Metric:  # type: ignore[override]
        return self._metrics[index]

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._metrics)

    def find(
        self, group: str | None = None, name: str | None = None, **tags: object
    ) -> list[Metric]:
        """The metrics of ``group`` named ``name`` (None: any) whose tags include ``tags``."""
        wanted = {k: str(v) for k, v in tags.items()}
        return [
            m
            for m in self._metrics
            if (group is None or m.group == group)
            and (name is None or m.name == name)
            and all(dict(m.tags).get(k) == v for k, v in wanted.items())
        ]

    def value(self, group: str, name: str, **tags: object) -> Value:
        """The value of one metric.

        Raises:
            KeyError: no metric, or more than one, matches (the message says which).
        """
        found = self.find(group, name, **tags)
        if len(found) != 1:
            shown = ", ".join(f"{k}={v}" for k, v in tags.items())
            what = "No metric" if not found else f"{len(found)} metrics"
            raise KeyError(f"{what} {group}/{name} with tags {{{shown}}}")
        return found[0].value

    def as_dict(self) -> dict[str, Value]:
        """Every value keyed ``group:name{tag=value,...}`` (handy in assertions and logs)."""
        out: dict[str, Value] = {}
        for m in self._metrics:
            tags = ",".join(f"{k}={v}" for k, v in m.tags)
            out[f"{m.group}:{m.name}{{{tags}}}"] = m.value
        return out

    def __repr__(self) -> str:
        return f"MetricsSnapshot({len(self._metrics)} metrics)"


# -- sampled statistics ------------------------------------------------------------------------
class _Sample:
    __slots__ = ("count", "max", "start", "sum")

    def __init__(self, start: float) -> None:
        self.start = start
        self.count = 0
        self.sum = 0.0
        self.max = -math.inf


class SampledStat:
    """Values recorded over Kafka's sample windows: rate, average, maximum and total.

    One writer at a time is expected (the task's thread); reads (scrapes) may come from any
    thread. See the module docstring for the window semantics.

    Args:
        window_s: ``metrics.sample.window.ms`` in seconds.
        num_samples: ``metrics.num.samples``.
    """

    __slots__ = ("_lock", "_samples", "_window", "count", "num_samples", "total")

    def __init__(
        self, window_s: float = DEFAULT_WINDOW_MS / 1000, num_samples: int = DEFAULT_NUM_SAMPLES
    ) -> None:
        self._window = window_s
        self.num_samples = max(num_samples, 1)
        self._samples: deque[_Sample] = deque()
        self._lock = threading.Lock()
        #: cumulative sum and count of every recorded value
        self.total = 0.0
        self.count = 0

    def record(self, value: float, now: float) -> None:
        """Add ``value`` at monotonic time ``now``."""
        with self._lock:
            samples = self._samples
            current = samples[-1] if samples else None
            if current is None or now - current.start >= self._window:
                current = _Sample(now)
                samples.append(current)
                if len(samples) > self.num_samples:
                    samples.popleft()
            current.count += 1
            current.sum += value
            if value > current.max:
                current.max = value
            self.total += value
            self.count += 1

    def _live(self, now: float) -> list[_Sample]:
        horizon = self._window * self.num_samples
        with self._lock:
            return [s for s in self._samples if now - s.start < horizon]

    def rate(self, now: float) -> float:
        """Sum of the live samples per second (Kafka's ``Rate``)."""
        live = self._live(now)
        if not live:
            return 0.0
        elapsed = now - live[0].start
        full_windows = int(elapsed // self._window)
        least = self.num_samples - 1
        if full_windows < least:
            elapsed += (least - full_windows) * self._window
        if elapsed <= 0:
            return 0.0
        return sum(s.sum for s in live) / elapsed

    def avg(self, now: float) -> float:
        """Average of the values in the live samples (NaN when none)."""
        live = self._live(now)
        count = sum(s.count for s in live)
        return sum(s.sum for s in live) / count if count else _NAN

    def max(self, now: float) -> float:
        """Maximum of the values in the live samples (NaN when none)."""
        live = [s for s in self._live(now) if s.count]
        return max(s.max for s in live) if live else _NAN


def _ratio(stat: SampledStat, now: float) -> tuple[float, float]:
    """(successes, failures) as fractions of the live 1.0/0.0 records (0, 0 when none)."""
    share = stat.avg(now)
    if math.isnan(share):
        return 0.0, 0.0
    return share, 1.0 - share


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

    def state_ratio(self, state: State, now: float) -> float:
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
        success, failure = _ratio(self.commit_attempts, now)
        return [
            ("status", self.state.value.lower()),
            ("running-ratio", self.state_ratio(State.RUNNING, now)),
            ("pause-ratio", self.state_ratio(State.PAUSED, now)),
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
        ]


class SinkTaskMetricsGroup:
    """A sink task's ``sink-task-metrics``."""

    def __init__(self, window_s: float, num_samples: int) -> None:
        self.read = SampledStat(window_s, num_samples)
        self.send = SampledStat(window_s, num_samples)
        self.put_time = SampledStat(window_s, num_samples)
        self.commit_completion = SampledStat(window_s, num_samples)
        self.commit_skip = SampledStat(window_s, num_samples)
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
        success, failure = _ratio(self.results, now)
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
