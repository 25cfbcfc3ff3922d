"""Streaming reads and writes of the ``cdk`` format.

Reads: the query's offsets are the connector's source offsets, per task
(``{"tasks": [{partition: offset}, ...]}``, partitions and offsets as canonical JSON), kept in
Spark's checkpoint. On the driver, live tasks poll ahead to find each micro-batch's end offsets;
the records they polled go to the executors with the micro-batch's partitions (as Arrow), so a
batch's records are polled once. A micro-batch planned again from the checkpoint (the query
restarted) has no such records: on the executors each task is restarted from the batch's start
offsets and polled up to its end offsets (:func:`~cdk.spark._datasource_tasks.replay`), so a
replayed batch yields the same records. Writes: each micro-batch's partitions go through sink
tasks whose record offsets derive from the batch id, so a sink that stores offsets writes a
replayed batch once. A sink task stays started in the executor's Python worker for the query's
next micro-batch of its partition (:mod:`cdk.spark._sink_cache`); each micro-batch still opens
its partitions, puts, pre-commits and closes them, as a task started for it would.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from cdk.api import Connector, SourceRecord
from cdk.errors import ConnectException
from cdk.spark._datasource_arrow import arrow_batches
from cdk.spark._datasource_arrow_write import ArrowSinkRecordMaker
from cdk.spark._datasource_options import Options, canonical, start_connector
from cdk.spark._datasource_rows import SinkRecordMaker
from cdk.spark._datasource_tasks import SourceTaskRun, replay, write_arrow_partition
from cdk.spark._lazy import require

require("pyspark.sql.datasource")
from pyspark import TaskContext  # noqa: E402
from pyspark.sql.datasource import (  # noqa: E402
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (  # noqa: E402
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

__all__ = ["ConnectorStreamReader", "ConnectorStreamWriter"]

log = logging.getLogger(__name__)

#: The local property Spark's micro-batch execution sets to the batch id.
BATCH_ID_PROPERTY = "streaming.sql.batchId"
#: The local property Spark's stream execution sets to the query's id (kept across restarts
#: from its checkpoint; a new checkpoint, a new id).
QUERY_ID_PROPERTY = "sql.streaming.queryId"

Offsets = list[dict[str, str]]


def _tasks(offset: dict[str, Any] | None, count: int) -> Offsets:
    tasks = [dict(t) for t in (offset or {}).get("tasks", [])]
    return tasks + [{} for _ in range(count - len(tasks))]


def _advance(offsets: dict[str, str], records: Sequence[SourceRecord]) -> None:
    """Set each source partition's offset to that of its last record in ``records``.

    Only the last offset of each run of records of one partition is canonicalised (the records
    of a poll mostly share their partition); a partition is compared by its canonical text
    unless it is the very object of the record before.
    """
    key: str | None = None
    partition: Any = _NONE
    offset: Any = None
    for record in records:
        current = record.source_partition
        if current is not partition:
            current_key = canonical(current)
            if current_key != key:
                if key is not None:
                    offsets[key] = canonical(offset)
                key = current_key
            partition = current
        offset = record.source_offset
    if key is not None:
        offsets[key] = canonical(offset)


_NONE: Any = object()


class _Round:
    """The polls of one micro-batch, in the calling thread or in the background.

    The live tasks are polled round robin until ``budget`` records came, or until each task
    came back empty.

    Args:
        live: the driver's tasks.
        begin: their offsets before the round.
        budget: at most this many records (None: no limit), give or take the last poll.
        available_now: Trigger.AvailableNow: a task that came back empty is drained.
        drained: the tasks drained before the round (not polled).
    """

    def __init__(
        self,
        live: Sequence[SourceTaskRun],
        begin: Offsets,
        budget: int | None,
        available_now: bool,
        drained: set[int],
    ) -> None:
        self.live = list(live)
        self.begin = [dict(t) for t in begin]
        self.budget = budget
        self._available_now = available_now
        self._drained = set(drained)
        self._end = [dict(t) for t in begin]
        self._polled: dict[int, list[SourceRecord]] = {}
        self._newly_drained: set[int] = set()
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Run the round in the background."""
        self._thread = threading.Thread(target=self._run_caught, name="cdk-stream-poll-ahead")
        self._thread.daemon = True
        self._thread.start()

    def _run_caught(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # noqa: BLE001 - raised by result(), in the caller
            self._error = exc

    def run(self) -> None:
        """Poll the tasks (in the calling thread)."""
        active = [i for i in range(len(self.live)) if i not in self._drained]
        found = 0
        budget = self.budget
        while active and (budget is None or found < budget) and not self._stop.is_set():
            for index in list(active):
                if self._stop.is_set():
                    return
                records = self.live[index].poll()
                if not records:
                    active.remove(index)
                    if self._available_now:
                        self._newly_drained.add(index)
                    continue
                found += len(records)
                _advance(self._end[index], records)
                self._polled.setdefault(index, []).extend(records)

    def result(self) -> tuple[Offsets, dict[int, list[SourceRecord]], set[int]]:
        """(end offsets, the records by task, the tasks drained); waits for the background.

        Raises:
            BaseException: what a poll raised.
        """
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._end, self._polled, self._newly_drained

    def cancel(self) -> Offsets:
        """Stop after the poll in progress; the offsets the tasks are at."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self._end


def _union(tasks: Offsets) -> dict[str, str]:
    merged: dict[str, str] = {}
    for task in tasks:
        merged.update(task)
    return merged


class _BatchPartition(InputPartition):
    """One task's share of a micro-batch.

    ``data`` holds the batch's rows as an Arrow IPC stream when the driver's task polled them
    for this very batch (then the executor reads them instead of replaying the task), else
    None.
    """

    def __init__(
        self,
        index: int,
        config: dict[str, str],
        start: dict[str, str],
        end: dict[str, str],
        data: bytes | None = None,
    ) -> None:
        super().__init__(index)
        self.index = index
        self.config = config
        self.start = start
        self.end = end
        self.data = data


#: At most this many records of a task are handed from the driver to the executor with the
#: micro-batch (more are replayed on the executor, as after a restart).
HANDED_RECORDS = 100_000


def _ipc(batches: Iterator[Any]) -> bytes | None:
    """Arrow record batches as one IPC stream (None when there are none)."""
    pa = require("pyarrow")
    sink = pa.BufferOutputStream()
    writer = None
    for batch in batches:
        if writer is None:
            writer = pa.ipc.new_stream(sink, batch.schema)
        writer.write_batch(batch)
    if writer is None:
        return None
    writer.close()
    data: bytes = sink.getvalue().to_pybytes()
    return data


class ConnectorStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("cdk")``: micro-batches of the connector's records."""

    def __init__(self, options: Options, schema: Any) -> None:
        self.options = options
        self.schema = schema
        self._connector: Connector | None = None
        self._configs: list[dict[str, str]] = []
        self._live: list[SourceTaskRun] = []
        self._position: Offsets | None = None
        self._available_now = False
        self._drained: set[int] = set()
        # the rows the driver's tasks polled in the last latestOffset(), by task: (the task's
        # offsets before, after, the rows as an Arrow IPC stream)
        self._polled: dict[int, tuple[dict[str, str], dict[str, str], bytes | None]] = {}
        # the polls of the next micro-batch, running in the background
        self._ahead: _Round | None = None

    def __getstate__(self) -> dict[str, Any]:
        # Executors get the options and schema; the live connector stays on the driver.
        return {"options": self.options, "schema": self.schema}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["options"], state["schema"])  # type: ignore[misc]

    def _start_connector(self) -> None:
        if self._connector is None:
            self._connector, self._configs = start_connector(self.options, "source")
            log.info("%s: %d task(s) read by the stream", self.options.name, len(self._configs))

    def _ensure_live(self, start: Offsets) -> None:
        if self._live and self._position == start:
            return
        self._stop_tasks()
        self._start_connector()
        union = _union(start)
        self._live = [SourceTaskRun(self.options, c, union) for c in self._configs]
        self._position = [dict(t) for t in start]

    def _stop_tasks(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.cancel()
        live, self._live = self._live, []
        for run in live:
            try:
                run.stop()
            except Exception:
                log.exception("Stopping a source task of %s failed", self.options.name)

    def initialOffset(self) -> dict[str, Any]:
        """No offsets yet: every task starts where the connector starts without offsets."""
        return {"tasks": []}

    def getDefaultReadLimit(self) -> Any:
        """At most ``cdk.max.records.per.batch`` records per micro-batch."""
        return ReadMaxRows(self.options.max_records)

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow: a task whose poll comes back empty is not polled again."""
        self._available_now = True

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: Any = None
    ) -> dict[str, Any]:
        """Poll the driver's tasks ahead (round robin, within ``limit``); their end offsets.

        The polls of the next micro-batch start in the background as soon as this one's end
        is known (:class:`_Round`), so that they run while Spark executes this one; the next
        call takes their result when it starts where they did, and otherwise drops it (the
        tasks then restart from the given start).

        (PySpark before 4.2 passes neither ``start`` nor ``limit``: the tasks go on from
        where they are.)
        """
        self._start_connector()
        if start is None:
            start = {"tasks": self._position or []}
            limit = ReadMaxRows(self.options.max_records)
        begin = _tasks(start, len(self._configs))
        budget = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        ahead, self._ahead = self._ahead, None
        result = None
        if ahead is not None:
            if ahead.begin == begin and ahead.budget == budget:
                result = ahead.result()  # raises what a poll raised
            else:
                self._position = ahead.cancel()  # where the tasks are now
        if result is None:
            self._ensure_live(begin)
            assert self._position is not None
            round_ = _Round(self._live, self._position, budget, self._available_now, self._drained)
            round_.run()
            result = round_.result()
        end, polled, drained = result
        self._drained |= drained
        self._position = end
        # the rows of each task for the executors, made now: partitions() then has nothing to
        # do while the polls ahead hold the interpreter
        self._polled = {
            i: (begin[i], end[i], _ipc(arrow_batches(records, self.schema)))
            for i, records in polled.items()
            if len(records) <= HANDED_RECORDS
        }
        self._ahead = _Round(self._live, end, budget, self._available_now, self._drained)
        self._ahead.start()
        return {"tasks": end}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[Any]:
        """One partition per task with something new between ``start`` and ``end``."""
        self._start_connector()
        ends = _tasks(end, len(self._configs))
        if len(ends) > len(self._configs):
            raise ConnectException(
                f"Connector {self.options.name} now has {len(self._configs)} task(s) but the "
                f"checkpoint holds offsets of {len(ends)}: start the query with a new checkpoint"
            )
        starts = _tasks(start, len(ends))
        union = _union(starts)
        polled, self._polled = self._polled, {}
        partitions = []
        for i in range(len(ends)):
            if not any(starts[i].get(p) != o for p, o in ends[i].items()):
                continue
            data = None
            cached = polled.get(i)
            if cached is not None and cached[0] == starts[i] and cached[1] == ends[i]:
                data = cached[2]
            partitions.append(_BatchPartition(i, self._configs[i], union, ends[i], data))
        return partitions

    def read(self, partition: Any) -> Iterator[Any]:
        """The batch's records of one task as Arrow record batches (on an executor).

        The records the driver's task polled for this batch, handed over with the partition;
        otherwise (a query restarted from its checkpoint) the task replayed from the batch's
        start offsets.
        """
        data = getattr(partition, "data", None)
        if data is not None:
            return iter(require("pyarrow").ipc.open_stream(data))
        records = replay(self.options, partition.config, partition.start, partition.end)
        return arrow_batches(records, self.schema)

    def commit(self, end: dict[str, Any]) -> None:
        """Spark processed everything up to ``end``."""
        log.debug("%s: committed %s", self.options.name, end)

    def stop(self) -> None:
        """Stop the driver's tasks and the connector."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.cancel()
        self._stop_tasks()
        connector, self._connector = self._connector, None
        if connector is not None:
            connector.stop()


class ConnectorStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("cdk")``: each micro-batch's partitions through sink tasks."""

    def __init__(self, options: Options, schema: Any) -> None:
        from cdk.spark._datasource import topic_option

        self.options = options
        self.schema = schema
        self.topic = topic_option(options)
        SinkRecordMaker(schema, self.topic)  # bad schemas fail on the driver
        connector, self.configs = start_connector(options, "sink")
        connector.stop()

    def write(self, iterator: Iterator[Any]) -> Any:
        """Write one partition of a micro-batch, as Arrow record batches (on an executor)."""
        from cdk.spark._datasource import SinkCommitMessage

        context = TaskContext.get()
        partition = int(context.partitionId()) if context is not None else 0
        raw = context.getLocalProperty(BATCH_ID_PROPERTY) if context is not None else None
        if raw is None:
            raise ConnectException(
                f"Spark did not give the micro-batch id ({BATCH_ID_PROPERTY}) to the writer"
            )
        maker = ArrowSinkRecordMaker(self.schema, self.topic)
        config = self.configs[partition % len(self.configs)]
        query = context.getLocalProperty(QUERY_ID_PROPERTY) if context is not None else None
        keep = None
        if query and self.options.sink_idle_ms > 0:
            # the same query and partition with the same configs: the task of the batch before
            keep = (query, partition, canonical(self.options.config), canonical(config))
        written, skipped = write_arrow_partition(
            iterator, self.options, config, maker, int(raw), partition, keep
        )
        return SinkCommitMessage(partition, written, skipped)

    def commit(self, messages: list[Any], batchId: int) -> None:
        """Log what the micro-batch wrote."""
        from cdk.spark._datasource import log_commit

        log_commit(self.options, messages, batchId)

    def abort(self, messages: list[Any], batchId: int) -> None:
        """A failed micro-batch: what was written stays; the replay skips it (stored offsets)."""
        log.warning("%s: micro-batch %d aborted", self.options.name, batchId)
