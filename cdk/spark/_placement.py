"""The Spark placement: each connector generation runs as one Spark job, a Spark task per task.

:class:`SparkPlacement` implements :class:`~cdk.runtime.distributed._placement.TaskPlacement` for
the distributed herder. :meth:`~SparkPlacement.launch` submits the generation's job from a thread of
its own, in a job group of its own (``cdk-<connector>-<generation>-<n>``, interruptible): a
``mapPartitions`` over the task numbers, one partition each, running
:func:`cdk.spark._executor.run_partition` on the executors. The job ends when all its tasks return,
which they do once Kafka tells them the generation ended (see
:mod:`cdk.runtime.distributed._placement`); :meth:`~SparkPlacement.await_end` cancels the job group
of what overruns its timeout. Spark retries a lost task (``spark.task.maxFailures``); when the
retries are exhausted the job fails and the herder hears which tasks could not be kept running, with
Spark's reason, through
:meth:`~cdk.runtime.distributed._placement.PlacementListener.generation_ended`.
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cdk.errors import ConnectException
from cdk.runtime.distributed._placement import PlacementListener, TaskGeneration
from cdk.runtime.isolation._plugins import Plugins
from cdk.spark._session import build_session, total_cores
from cdk.spark._spec import (
    STATUS_TOPIC_CONFIG,
    TaskSpec,
    extra_plugin_paths,
    required_topic,
    worker_props_without_spark,
)

__all__ = ["SparkPlacement"]

log = logging.getLogger("cdk.spark.placement")

#: How long a cancelled job may take to end (Spark kills its Python workers).
CANCEL_WAIT_S = 30.0
#: How long after launch tasks still waiting for a slot are reported (then every minute).
SLOT_REPORT_AFTER_S = 10.0
_FAILED_TASK = re.compile(r"Task (\d+) in stage \S+ failed (\d+) times?")


@dataclass
class _Run:
    """One launched generation."""

    generation: TaskGeneration
    group: str
    numbers: list[int]
    done: Any = None  # the accumulator of task numbers that returned
    thread: threading.Thread | None = None
    cancelled: str | None = None
    ended: threading.Event = field(default_factory=threading.Event)


class SparkPlacement:
    """Runs connector generations as Spark jobs on the session of the worker's ``spark.*`` keys.

    Args:
        worker_props: the distributed worker's properties (Kafka's plus ``spark.*``), or its
            parsed configuration (a :class:`~cdk.runtime.WorkerConfig`: its originals are used).
        plugins: the driver's plugins (classes registered beyond the installed ones are
            shipped to the executors by import path).
        session: an existing SparkSession to use (it is then not stopped by :meth:`close`).

    Raises:
        ConfigException: a ``*.storage.topic`` property is missing.
    """

    def __init__(
        self,
        worker_props: Mapping[str, Any] | Any,
        *,
        plugins: Plugins | None = None,
        session: Any = None,
    ) -> None:
        if not isinstance(worker_props, Mapping):
            worker_props = worker_props.originals()
        self._props = dict(worker_props)
        self._executor_props = worker_props_without_spark(self._props)
        for key in ("config.storage.topic", "offset.storage.topic", STATUS_TOPIC_CONFIG):
            required_topic(self._executor_props, key)
        self._extra_plugins = extra_plugin_paths(plugins.extra if plugins is not None else ())
        self._session = session
        self._own_session = session is None
        self._listener: PlacementListener | None = None
        self._lock = threading.Lock()
        self._runs: dict[str, list[_Run]] = {}
        self._ids = itertools.count()
        self._closed = threading.Event()
        self._status_consumer: Any = None
        self._graceful_ms = _int(worker_props.get("task.shutdown.graceful.timeout.ms"), 5000)

    # -- TaskPlacement ---------------------------------------------------------------------------
    def start(self, listener: PlacementListener) -> None:
        """Start the SparkSession (or take the one given) and remember the listener.

        Raises:
            ConnectException: PySpark is missing or Spark cannot start.
        """
        self._listener = listener
        if self._session is None:
            self._session = build_session(self._props)
        sc = self._session.sparkContext
        log.info(
            "Spark placement on %s (application %s, %s task slots)",
            sc.master,
            sc.applicationId,
            self.slots(),
        )

    @property
    def session(self) -> Any:
        """The SparkSession (``None`` before :meth:`start`)."""
        return self._session

    def launch(self, generation: TaskGeneration) -> None:
        """Submit the generation's Spark job and return at once."""
        if self._session is None or self._listener is None:
            raise ConnectException("The Spark placement is not started")
        numbers = [t.task for t in generation.task_ids()]
        if not numbers:
            log.info(
                "Connector %s generation %d has no tasks",
                generation.connector,
                generation.generation,
            )
            return
        spec = TaskSpec(
            connector=generation.connector,
            generation=generation.generation,
            connector_config=dict(generation.connector_config),
            task_configs={n: dict(generation.task_configs[n]) for n in numbers},
            target_state=generation.target_state.value,
            worker_props=self._executor_props,
            extra_plugins=self._extra_plugins,
            status_offsets=self._status_end_offsets(),
            graceful_timeout_ms=self._graceful_ms,
        )
        group = f"cdk-{generation.connector}-{generation.generation}-{next(self._ids)}"
        run = _Run(generation, group, numbers)
        run.done = self._session.sparkContext.accumulator(frozenset(), _SetParam())
        with self._lock:
            self._runs.setdefault(generation.connector, []).append(run)
        run.thread = threading.Thread(
            target=self._run_job, args=(run, spec), name=f"cdk-spark-{group}", daemon=True
        )
        run.thread.start()
        log.info(
            "Launched connector %s generation %d: tasks %s as Spark job group %s",
            generation.connector,
            generation.generation,
            numbers,
            group,
        )

    def await_end(self, connector: str, timeout_s: float) -> bool:
        """Wait for the connector's jobs; cancel the job groups still running at the timeout."""
        with self._lock:
            runs = list(self._runs.get(connector, ()))
        return self._await(runs, timeout_s)

    def slots(self) -> int | None:
        """The executors' cores (how many tasks can run at once), ``None`` when unknown."""
        if self._session is None:
            return None
        return total_cores(self._session.sparkContext)

    def close(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for every job, cancel the rest, stop the session we started."""
        self._closed.set()
        with self._lock:
            runs = [r for rs in self._runs.values() for r in rs]
        self._await(runs, timeout_s)
        if self._status_consumer is not None:
            self._status_consumer.close()
            self._status_consumer = None
        if self._session is not None and self._own_session:
            self._session.stop()
        self._session = None

    # -- internals -------------------------------------------------------------------------------
    def _await(self, runs: list[_Run], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        for run in runs:
            run.ended.wait(max(deadline - time.monotonic(), 0.0))
        late = [r for r in runs if not r.ended.is_set()]
        if not late:
            return True
        sc = self._session.sparkContext if self._session is not None else None
        for run in late:
            run.cancelled = (
                f"cancelled: the task did not stop within {timeout_s * 1000:.0f} ms "
                f"(task.shutdown.graceful.timeout.ms); Spark job group {run.group} was cancelled"
            )
            log.error(
                "Connector %s generation %d: tasks did not stop within %.0f ms; cancelling "
                "Spark job group %s",
                run.generation.connector,
                run.generation.generation,
                timeout_s * 1000,
                run.group,
            )
            if sc is not None:
                sc.cancelJobGroup(run.group)
        for run in late:
            if not run.ended.wait(CANCEL_WAIT_S):
                log.error("Spark job group %s did not end after its cancellation", run.group)
        return False

    def _run_job(self, run: _Run, spec: TaskSpec) -> None:
        assert self._session is not None
        sc = self._session.sparkContext
        failures: dict[int, str] = {}
        gen = run.generation
        try:
            sc.setJobGroup(
                run.group,
                f"connector {gen.connector} generation {gen.generation} tasks {run.numbers}",
                interruptOnCancel=True,
            )
            job = functools.partial(_run_and_count, spec, run.done)
            outcomes = sc.parallelize(run.numbers, len(run.numbers)).mapPartitions(job).collect()
            log.info(
                "Connector %s generation %d ended: %s",
                gen.connector,
                gen.generation,
                ", ".join(f"task {n} {outcome}" for n, outcome, _ in outcomes),
            )
        except Exception as exc:  # noqa: BLE001 - the job failed or was cancelled
            failures = self._failures(run, exc)
            log.error(
                "Connector %s generation %d: Spark job failed for tasks %s: %s",
                gen.connector,
                gen.generation,
                sorted(failures),
                _first_line(exc),
            )
        finally:
            with self._lock:
                runs = self._runs.get(gen.connector, [])
                if run in runs:
                    runs.remove(run)
                if not runs:
                    self._runs.pop(gen.connector, None)
            run.ended.set()
        if self._listener is not None:
            try:
                self._listener.generation_ended(gen.connector, gen.generation, failures)
            except Exception:
                log.exception("The placement listener failed on generation_ended")

    def _failures(self, run: _Run, exc: BaseException) -> dict[int, str]:
        """The traces of the tasks that did not return from a failed or cancelled job."""
        done = set(run.done.value) if run.done is not None else set()
        text = str(exc)
        match = _FAILED_TASK.search(text)
        failed_number = run.numbers[int(match.group(1))] if match else None
        failures: dict[int, str] = {}
        for number in run.numbers:
            if number in done:
                continue
            if run.cancelled is not None:
                failures[number] = run.cancelled
            elif number == failed_number:
                failures[number] = (
                    f"The Spark task failed {match.group(2) if match else '?'} times "
                    f"(spark.task.maxFailures): {_job_error(text)}"
                )
            else:
                failures[number] = (
                    f"The Spark job of generation {run.generation.generation} was aborted"
                    + (f" because task {failed_number} failed" if failed_number is not None else "")
                    + f": {_job_error(text)}"
                )
        return failures

    def _status_end_offsets(self) -> dict[int, int]:
        """The status topic's end offsets now, by partition (empty when it does not exist)."""
        from confluent_kafka import TopicPartition

        from cdk.kafka import new_consumer

        topic = required_topic(self._executor_props, STATUS_TOPIC_CONFIG)
        if self._status_consumer is None:
            bootstrap = self._executor_props.get("bootstrap.servers", "localhost:9092")
            admin = {
                k[len("admin.") :]: v
                for k, v in self._executor_props.items()
                if str(k).startswith("admin.")
            }
            self._status_consumer = new_consumer(
                {"bootstrap.servers": bootstrap, **admin, "group.id": "cdk-spark-placement"}
            )
        consumer = self._status_consumer
        metadata = consumer.list_topics(topic, timeout=30)
        partitions = metadata.topics.get(topic)
        if partitions is None or partitions.error is not None:
            return {}
        offsets: dict[int, int] = {}
        for partition in sorted(partitions.partitions):
            _low, high = consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=30
            )
            offsets[partition] = max(high, 0)
        return offsets


def _run_and_count(spec: TaskSpec, done: Any, numbers: Any) -> Any:
    """Run the partition's tasks and add their numbers to ``done`` (on the executor)."""
    from cdk.spark._executor import run_partition

    outcomes = list(run_partition(spec, numbers))
    done.add(frozenset(n for n, _outcome, _detail in outcomes))
    return outcomes


class _SetParam:
    """An accumulator of frozensets (union)."""

    def zero(self, value: frozenset[int]) -> frozenset[int]:
        return frozenset()

    def addInPlace(self, a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
        return a | b


def _int(value: Any, default: int) -> int:
    try:
        return default if value is None else int(str(value))
    except ValueError:
        return default


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _job_error(text: str) -> str:
    """Spark's reason for a failed job without the JVM stack (its first lines)."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[:12])
