"""Connector tasks run inside Spark tasks: bounded reads, replays of a micro-batch, sink writes."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from cdk.api import (
    OffsetAndMetadata,
    OffsetStorageReader,
    SinkTask,
    SourceRecord,
    SourceTask,
    TopicPartition,
)
from cdk.errors import ConnectException, RetriableException
from cdk.runtime._contexts import WorkerSinkTaskContext, WorkerSourceTaskContext
from cdk.runtime._gc import pace_gc_for_records
from cdk.spark._datasource_options import Options, canonical, plugins
from cdk.spark._sink_cache import SINK_TASKS

__all__ = [
    "SourceTaskRun",
    "read_bounded",
    "replay",
    "write_arrow_partition",
    "write_partition",
]

log = logging.getLogger(__name__)

#: The sink offsets of one write: ``write_id << OFFSET_SHIFT | row number`` in a Spark partition.
OFFSET_SHIFT = 32


class _MapOffsetReader(OffsetStorageReader):
    """Offsets from a ``{canonical partition: canonical offset}`` map."""

    def __init__(self, offsets: Mapping[str, str]) -> None:
        self._offsets = dict(offsets)

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        raw = self._offsets.get(canonical(dict(partition)))
        return None if raw is None else dict(json.loads(raw))

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.offset(p)) for p in partitions]


def _task_class(options: Options) -> type[Any]:
    task_class: type[Any] = plugins().connector_class(options.connector_class)().task_class()
    return task_class


class SourceTaskRun:
    """One source task started from given offsets; :meth:`poll` retries retriable errors."""

    def __init__(self, options: Options, config: Mapping[str, str], offsets: Mapping[str, str]):
        pace_gc_for_records()  # as a worker's task thread does
        self._options = options
        task = _task_class(options)()
        if not isinstance(task, SourceTask):
            raise ConnectException(f"{type(task).__name__} is not a SourceTask")
        self.task = task
        task.initialize(WorkerSourceTaskContext(dict(config), _MapOffsetReader(offsets)))
        task.start(dict(config))
        self._stopped = False

    def poll(self) -> list[SourceRecord]:
        """The next records (possibly none)."""
        deadline = time.monotonic() + self._options.retry_timeout_ms / 1000
        while True:
            try:
                return list(self.task.poll() or [])
            except RetriableException as exc:
                if time.monotonic() >= deadline:
                    raise ConnectException(
                        f"Source task of {self._options.name} kept failing with retriable "
                        f"errors for {self._options.retry_timeout_ms} ms: {exc}"
                    ) from exc
                log.warning("Retrying the poll of %s after: %s", self._options.name, exc)
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop the task (once)."""
        if not self._stopped:
            self._stopped = True
            self.task.stop()


def read_bounded(
    options: Options, config: Mapping[str, str], offsets: Mapping[str, str]
) -> Iterator[SourceRecord]:
    """The task's records until ``cdk.idle.polls`` polls in a row bring nothing new."""
    run = SourceTaskRun(options, config, offsets)
    try:
        idle = 0
        while idle < options.idle_polls:
            records = run.poll()
            idle = 0 if records else idle + 1
            yield from records
    finally:
        run.stop()


def replay(
    options: Options,
    config: Mapping[str, str],
    start: Mapping[str, str],
    end: Mapping[str, str],
) -> Iterator[SourceRecord]:
    """The records of one micro-batch: the task restarted at ``start``, polled up to ``end``.

    Records of a source partition after its end offset (or of a partition with nothing new in
    this batch) belong to later batches and are dropped.

    Raises:
        ConnectException: exactly-once and the task did not reach the end offsets within
            ``cdk.replay.timeout.ms``: its offsets cannot be replayed.
    """
    pending = {p: o for p, o in end.items() if start.get(p) != o}
    if not pending:
        return
    run = SourceTaskRun(options, config, start)
    try:
        deadline = time.monotonic() + options.replay_timeout_ms / 1000
        idle = 0
        while pending:
            records = run.poll()
            idle = 0 if records else idle + 1
            for record in records:
                partition = canonical(record.source_partition)
                goal = pending.get(partition)
                if goal is None:
                    continue
                yield record
                if canonical(record.source_offset) == goal:
                    del pending[partition]
            if not pending:
                break
            if not options.exactly_once and idle >= options.idle_polls:
                log.warning(
                    "At-least-once: the replay of %s ended before reaching offsets %s",
                    options.name,
                    pending,
                )
                break
            if time.monotonic() >= deadline:
                raise ConnectException(
                    f"Connector {options.name} cannot replay a micro-batch: restarted from the "
                    f"batch's start offsets, its task did not reach the end offsets {pending} "
                    f"within cdk.replay.timeout.ms={options.replay_timeout_ms}. Its source "
                    "offsets are not replayable, so the stream is at most at-least-once: set "
                    "cdk.delivery=at-least-once to accept that"
                )
    finally:
        run.stop()


# -- sinks -----------------------------------------------------------------------------------------
class _Owner:
    """The sink task's assignment as Spark gives it: the partitions seen so far."""

    def __init__(self) -> None:
        self.assigned: set[TopicPartition] = set()

    def assigned_partitions(self) -> set[TopicPartition]:
        return set(self.assigned)

    def consumer_paused_by_worker(self) -> bool:
        return False

    def pause_consumer(self, partitions: set[TopicPartition]) -> None:
        """Nothing to pause: Spark hands the rows over."""

    def resume_consumer(self, partitions: set[TopicPartition]) -> None:
        """Nothing to resume."""


class _SinkRun:
    def __init__(self, options: Options, config: Mapping[str, str]) -> None:
        pace_gc_for_records()  # as a worker's task thread does
        self.options = options
        task = _task_class(options)()
        if not isinstance(task, SinkTask):
            raise ConnectException(f"{type(task).__name__} is not a SinkTask")
        self.task = task
        self.owner = _Owner()
        self.context = WorkerSinkTaskContext(dict(config), self.owner)
        task.initialize(self.context)
        task.start(dict(config))
        self.seek: dict[TopicPartition, int] = {}
        self.last: dict[TopicPartition, int] = {}

    def open(self, tp: TopicPartition) -> None:
        self.owner.assigned.add(tp)
        self.task.open([tp])
        self.seek.update(self.context.take_offsets())

    def put(self, batch: list[Any]) -> None:
        deadline = time.monotonic() + self.options.retry_timeout_ms / 1000
        while True:
            try:
                self.task.put(batch)
                return
            except RetriableException as exc:
                if time.monotonic() >= deadline:
                    raise ConnectException(
                        f"Sink task of {self.options.name} kept failing with retriable errors "
                        f"for {self.options.retry_timeout_ms} ms: {exc}"
                    ) from exc
                wait_ms = self.context.take_timeout_ms()
                threading.Event().wait(max(wait_ms, 100) / 1000)
            finally:
                self.seek.update(self.context.take_offsets())

    def finish(self) -> None:
        offsets = {tp: OffsetAndMetadata(o + 1) for tp, o in self.last.items()}
        self.task.pre_commit(offsets)  # the default flushes
        self.task.close(list(self.owner.assigned))

    def reset(self) -> None:
        """After :meth:`finish`: no partition assigned, as a task just started."""
        self.owner.assigned.clear()
        self.seek.clear()
        self.last.clear()


def write_partition(
    rows: Iterator[Any],
    options: Options,
    config: Mapping[str, str],
    maker: Any,
    write_id: int,
    partition: int,
) -> tuple[int, int]:
    """Put a Spark partition's rows through a sink task: open, put in batches, flush, close.

    Row ``n`` of the partition has the Kafka offset ``write_id << 32 | n`` in topic partition
    ``(topic, Spark partition)``; rows below the offset the task asks for in ``open()``
    (``context.offset``, as sinks storing their offsets do) were written before and are skipped.

    Returns:
        The rows written and the rows skipped.
    """
    writer = _PartitionWriter(options, config, partition)
    base = write_id << OFFSET_SHIFT
    try:
        for n, row in enumerate(rows):
            writer.add_row(row, maker, base | n)
        writer.finish()
    finally:
        writer.stop()
    return writer.written, writer.skipped


def write_arrow_partition(
    batches: Iterator[Any],
    options: Options,
    config: Mapping[str, str],
    maker: Any,
    write_id: int,
    partition: int,
    keep: tuple[Any, ...] | None = None,
) -> tuple[int, int]:
    """:func:`write_partition` for Arrow record batches (an ``ArrowSinkRecordMaker``).

    The records of a batch are built column by column; a batch that cannot be built so goes
    row by row through the row path (``maker.rows``), exactly as :func:`write_partition` would.

    ``keep`` is the key of a sink task kept in this process across writes
    (:data:`~cdk.spark._sink_cache.SINK_TASKS`): the write takes the task left there (else
    starts one) and leaves it there when it ended well (flushed and closed, as before a stop);
    a write that failed stops it. None: a task of its own, stopped at the end.
    """
    writer = _PartitionWriter(options, config, partition, keep)
    base = write_id << OFFSET_SHIFT
    n = 0
    ended = False
    try:
        for batch in batches:
            records = maker.records(batch, partition, base | n)
            if records is not None:
                for record in records:
                    writer.add(record)
            else:
                for i, row in enumerate(maker.rows(batch)):
                    writer.add_row(row, maker.row_maker, base | (n + i))
            n += batch.num_rows
        writer.finish()
        ended = True
    finally:
        writer.stop(ended)
    return writer.written, writer.skipped


class _PartitionWriter:
    """A sink task writing one Spark partition.

    Records go to ``put()`` in batches; those the task's stored offsets say were written before
    are skipped.
    """

    def __init__(
        self,
        options: Options,
        config: Mapping[str, str],
        partition: int,
        keep: tuple[Any, ...] | None = None,
    ) -> None:
        run = SINK_TASKS.take(keep) if keep is not None else None
        if run is None:
            run = _SinkRun(options, config)
        else:
            run.options = options
        self.run = run
        self._keep = keep
        self._idle_ms = options.sink_idle_ms
        self.partition = partition
        self.batch_size = options.batch_size
        self.written = 0
        self.skipped = 0
        self._batch: list[Any] = []
        self._tps: dict[str, TopicPartition] = {}  # the partition's topic partitions, by topic
        self._seek: dict[str, int] = {}  # the offset each topic's task asked for (by topic)

    def _open(self, topic: str) -> TopicPartition:
        tp = self._tps.get(topic)
        if tp is None:
            tp = TopicPartition(topic, self.partition)
            if tp not in self.run.owner.assigned:
                self._flush()
                self.run.open(tp)
                self._seeks()
            self._tps[topic] = tp
        return tp

    def _seeks(self) -> None:
        partition = self.partition
        self._seek = {tp.topic: o for tp, o in self.run.seek.items() if tp.partition == partition}

    def _flush(self) -> None:
        if self._batch:
            self.run.put(self._batch)
            self._batch = []
            self._seeks()  # put() may ask for offsets (context.offset)

    def add(self, record: Any) -> None:
        """Write ``record`` (its Kafka offset set) unless the task holds it already."""
        topic = record.topic
        tp = self._open(topic)
        offset = record.kafka_offset
        if offset < self._seek.get(topic, -1):
            self.skipped += 1
            return
        self._batch.append(record)
        self.run.last[tp] = offset
        self.written += 1
        if len(self._batch) >= self.batch_size:
            self._flush()

    def add_row(self, row: Any, maker: Any, offset: int) -> None:
        """Write a row (the row path: its record is made only when it is not skipped)."""
        topic = maker.topic(row)
        tp = self._open(topic)
        if offset < self._seek.get(topic, -1):
            self.skipped += 1
            return
        self._batch.append(maker.record(row, self.partition, offset))
        self.run.last[tp] = offset
        self.written += 1
        if len(self._batch) >= self.batch_size:
            self._flush()

    def finish(self) -> None:
        """Put the last batch, then flush and close the task's partitions."""
        self._flush()
        self.run.finish()

    def stop(self, ended: bool = False) -> None:
        """Stop the task, or leave it for the next write of its key when it ``ended`` well."""
        if ended and self._keep is not None and self._idle_ms > 0:
            self.run.reset()
            SINK_TASKS.give(self._keep, self.run, self._idle_ms)
        else:
            self.run.task.stop()
