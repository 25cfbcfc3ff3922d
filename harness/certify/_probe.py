"""Running a source connector's tasks directly in this process, without a worker or Kafka.

Some checks need what Kafka does not keep: the exact :class:`~cdk.SourceRecord` objects (their
schemas, source partitions and offsets), the time ``stop()`` takes, or the threads a task
leaves behind. :class:`SourceProbe` starts the connector and its tasks as a worker would (same
call order, an offset reader over a dict) and polls them on the calling thread.

A probe is the connector under test reading its source for a check: it never runs beside a
worker on the same source data (an acknowledging source would take messages from it). Each
record it polls is committed with ``commit_record`` and metadata as Kafka would give it (the
record's topic, a partition, and increasing offsets per topic), as if Kafka had acknowledged it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cdk.api import (
    OffsetStorageReader,
    RecordMetadata,
    SourceConnector,
    SourceConnectorContext,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
)

__all__ = ["SourceProbe", "acknowledges", "offset_key"]


def acknowledges(task_class: type) -> bool:
    """Whether a source task acknowledges upstream: it overrides commit_record or commit.

    The runtime calls such a task's ``stop()`` on the task's own thread after the final flush
    and commit (Kafka 3.9's order), any other task's at once from another thread; a probe does
    the same.
    """
    return (
        getattr(task_class, "commit_record", None) is not SourceTask.commit_record
        or getattr(task_class, "commit", None) is not SourceTask.commit
    )


def offset_key(partition: Mapping[str, Any]) -> str:
    """A stable key for a source partition (its JSON with sorted keys)."""
    return json.dumps(partition, sort_keys=True, default=str)


class _Offsets(OffsetStorageReader):
    def __init__(self, offsets: Mapping[str, Mapping[str, Any]]) -> None:
        self._offsets = {k: dict(v) for k, v in offsets.items()}

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self._offsets.get(offset_key(partition))
        return dict(found) if found is not None else None

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.offset(p)) for p in partitions]


class _ConnectorContext(SourceConnectorContext):
    def __init__(self, reader: OffsetStorageReader) -> None:
        self._reader = reader
        self.reconfigurations = 0
        self.errors: list[BaseException] = []

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader


class _TaskContext(SourceTaskContext):
    def __init__(self, configs: dict[str, str], reader: OffsetStorageReader) -> None:
        self._configs = configs
        self._reader = reader

    def configs(self) -> dict[str, str]:
        return self._configs

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader


class SourceProbe:
    """A source connector and its tasks, driven on the calling thread.

    Args:
        connector_class: the connector.
        config: the connector config (as the worker would pass it).
        offsets: committed offsets by :func:`offset_key` of the source partition.
        max_tasks: the ``max_tasks`` given to ``task_configs``.
        report: where the probe records what it saw (a check's
            :meth:`~harness.certify.CheckContext.evidence`): the number of tasks, the records
            polled so far and how long each ``stop()`` took. :meth:`CheckContext.probe
            <harness.certify.CheckContext.probe>` makes a probe that reports.

    Use as a context manager; :meth:`stop` stops the tasks, then the connector, and records how
    long each ``stop()`` took in :attr:`stop_durations`.
    """

    def __init__(
        self,
        connector_class: type[SourceConnector],
        config: Mapping[str, str],
        *,
        offsets: Mapping[str, Mapping[str, Any]] | None = None,
        max_tasks: int = 1,
        report: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.connector_class = connector_class
        self.config = dict(config)
        self.reader = _Offsets(offsets or {})
        self.max_tasks = max_tasks
        self.connector: SourceConnector | None = None
        self.context = _ConnectorContext(self.reader)
        self.tasks: list[SourceTask] = []
        self.task_configs: list[dict[str, str]] = []
        self.stop_durations: dict[str, float] = {}
        self.polled = 0
        self._report = report
        self._next_offset: dict[tuple[str, int], int] = {}

    def start(self) -> SourceProbe:
        """Start the connector and its tasks (exceptions from the connector propagate)."""
        connector = self.connector_class()
        connector.initialize(self.context)
        connector.start(dict(self.config))
        self.connector = connector
        self.task_configs = [dict(c) for c in connector.task_configs(self.max_tasks)]
        task_class = connector.task_class()
        for task_config in self.task_configs:
            task = task_class()
            assert isinstance(task, SourceTask)
            task.initialize(_TaskContext(task_config, self.reader))
            task.start(dict(task_config))
            self.tasks.append(task)
        if self._report is not None:
            self._report("tasks started", len(self.tasks))
        return self

    def poll(
        self, *, count: int | None = None, idle: float = 1.5, timeout: float = 30.0
    ) -> list[SourceRecord]:
        """Poll every task round-robin and return the records in the order polled.

        Stops at ``count`` records, after ``idle`` seconds without any, or at ``timeout``.
        Each record is committed (``commit_record``) as a worker would after the ack.
        """
        records: list[SourceRecord] = []
        deadline = time.monotonic() + timeout
        last_new = time.monotonic()
        while time.monotonic() < deadline:
            got_any = False
            for task in self.tasks:
                batch = task.poll() or []
                for record in batch:
                    task.commit_record(record, self._metadata(record))
                records.extend(batch)
                got_any = got_any or bool(batch)
            now = time.monotonic()
            if got_any:
                last_new = now
            if count is not None and len(records) >= count:
                break
            if now - last_new >= idle:
                break
        self.polled += len(records)
        if self._report is not None:
            self._report("polled", self.polled)
        return records

    def _metadata(self, record: SourceRecord) -> RecordMetadata:
        """What Kafka would report for ``record``: its topic and partition, the next offset."""
        partition = record.kafka_partition if record.kafka_partition is not None else 0
        key = (record.topic, partition)
        offset = self._next_offset.get(key, 0)
        self._next_offset[key] = offset + 1
        timestamp = record.timestamp if record.timestamp is not None else int(time.time() * 1000)
        return RecordMetadata(record.topic, partition, offset, timestamp)

    def stop(self) -> None:
        """Stop every task, then the connector, and time each call.

        A task's ``stop()`` is called as the worker calls it: from another thread, or on this
        thread (the one that polled) for a task that :func:`acknowledges`.
        """
        for index, task in enumerate(self.tasks):
            if acknowledges(type(task)):  # on the thread that polled it, as the worker does
                start = time.monotonic()
                task.stop()
                self.stop_durations[f"task {index}"] = time.monotonic() - start
            else:
                self.stop_durations[f"task {index}"] = _timed_in_thread(task.stop)
        self.tasks = []
        if self.connector is not None:
            connector, self.connector = self.connector, None
            start = time.monotonic()
            connector.stop()
            self.stop_durations["connector"] = time.monotonic() - start
        if self._report is not None and self.stop_durations:
            self._report(
                "stop() took (s)", {k: round(v, 3) for k, v in self.stop_durations.items()}
            )

    def __enter__(self) -> SourceProbe:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _timed_in_thread(fn: Any, timeout: float = 60.0) -> float:
    errors: list[BaseException] = []

    def call() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            errors.append(exc)

    start = time.monotonic()
    thread = threading.Thread(target=call, name="certify-stop", daemon=True)
    thread.start()
    thread.join(timeout)
    elapsed = time.monotonic() - start
    if errors:
        raise errors[0]
    return elapsed
