"""Connectors with offset defects, each failing an OFF check, and their drivers.

Each is a small subclass of a reference connector (SQLite or FileStream) that gets one thing about
offsets wrong; its driver is the reference driver pointed at it.

Sources:

- ``SqliteIgnoresOffsetsSourceConnector`` reads every table from the first row, whatever offset is
  stored (OFF-01, OFF-02, OFF-03).
- ``SqliteRepeatsRowSourceConnector`` resumes with the row it stored (``id >= last``): one
  duplicate per resume (OFF-01, OFF-03).
- ``SqliteSkipsRowSourceConnector`` resumes one row too far (``id > last + 1``) (OFF-03).
- ``ReadAheadFileStreamSourceConnector`` reads ten lines ahead and gives every record the
  position after the last line read, not after its own: an offset ahead of what it emitted
  (OFF-03).
- ``RestartingFileStreamSourceConnector`` starts the file over when the stored position is past
  its end; ``RejectingFileStreamSourceConnector`` fails then (OFF-04).
- ``CursorFileStreamSourceConnector`` is correct, but its offset is a text cursor (as Redis
  stream ids, timestamps as text, GTIDs): OFF-04 needs the driver's ``future_offset()``
  (``CursorDriver`` has none: not verified; ``CursorFutureDriver`` gives one: passes);
  ``RestartingCursorFileStreamSourceConnector`` starts over at a cursor past the end (OFF-04).
- ``SideFileFileStreamSourceConnector`` keeps its position in a file of its own, which wins over
  the worker's offsets, so resetting those changes nothing (OFF-08).

Sources that declare exactly-once support (``exactly_once_support`` SUPPORTED), wrongly (OFF-13):

- ``EosAheadSourceConnector`` resumes one row past its stored offset, as if each record's
  offset pointed past the record (an offset ahead of what it emitted): a row is lost per crash;
- ``EosRepeatsSourceConnector`` resumes with the row of its stored offset (``id >= last``),
  as if two records had the same offset: a row is sent twice per crash;
- ``EosForgetsToCommitSourceConnector`` runs with ``transaction.boundary=connector``
  (``can_define_transaction_boundaries`` SUPPORTED) and never commits a transaction: nothing it
  sends is ever visible to a ``read_committed`` reader.

Sinks:

- ``EagerCommitFileStreamSinkConnector`` buffers records in put() and writes them only when it
  stops, while the default pre_commit() lets the worker commit them (OFF-05, OFF-07).
- ``ForgetfulFileStreamSinkConnector`` writes in chunks of 25 and drops the rest on stop
  (OFF-06).
- ``NeverCommitsFileStreamSinkConnector`` writes at once but returns no offsets from
  pre_commit(), so a restart writes everything again (OFF-06).
- ``SelfRewindingFileStreamSinkConnector`` keeps its offsets in a file of its own and rewinds to
  them in open(), so resetting the group's offsets changes nothing (OFF-08).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from typing_extensions import override

from cdk import (
    ConnectException,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    OffsetAndMetadata,
    Schema,
    SinkRecord,
    SinkTask,
    SourceRecord,
    SourceTask,
    TopicPartition,
)
from cdk.config import AbstractConfig
from reference_connectors.filestream import FileStreamSinkConnector, FileStreamSourceConnector
from reference_connectors.filestream._sink import FileStreamSinkTask
from reference_connectors.filestream._source import (
    BATCH_SIZE_CONFIG,
    CONFIG_DEF,
    FILE_CONFIG,
    FILENAME_FIELD,
    POSITION_FIELD,
    TOPIC_CONFIG,
    FileStreamSourceTask,
)
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify.broken._sqlite_base._source import SqliteSourceConnector, SqliteSourceTask
from tests.certify.broken._sqlite_base.certify import SqliteSourceDriver

log = logging.getLogger(__name__)


# ============================================================================ SQLite sources
class _IgnoresOffsetsTask(SqliteSourceTask):
    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        for table in self._tables:
            table.last = None  # "a full copy is safer": every restart re-reads every row


class SqliteIgnoresOffsetsSourceConnector(SqliteSourceConnector):
    """Reads every table from its first row, ignoring the stored offsets."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _IgnoresOffsetsTask


class IgnoresOffsetsDriver(SqliteSourceDriver):
    connector: ClassVar[type] = SqliteIgnoresOffsetsSourceConnector


class _RepeatsRowTask(SqliteSourceTask):
    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        for table in self._tables:
            if table.last is not None:
                table.last -= 1  # as if the query were "id >= last"


class SqliteRepeatsRowSourceConnector(SqliteSourceConnector):
    """Resumes with the last row it emitted (``id >= last``): one duplicate per resume."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _RepeatsRowTask


class RepeatsRowDriver(SqliteSourceDriver):
    connector: ClassVar[type] = SqliteRepeatsRowSourceConnector


class _SkipsRowTask(SqliteSourceTask):
    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        for table in self._tables:
            if table.last is not None:
                table.last += 1  # as if the stored value were the next row to skip past


class SqliteSkipsRowSourceConnector(SqliteSourceConnector):
    """Resumes one row too far (``id > last + 1``): one row lost per resume."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _SkipsRowTask


class SkipsRowDriver(SqliteSourceDriver):
    connector: ClassVar[type] = SqliteSkipsRowSourceConnector


# ======================================================================== FileStream sources
_READ_AHEAD = 10
_EMIT = 5


class _ReadAheadTask(FileStreamSourceTask):
    def __init__(self) -> None:
        super().__init__()
        self._pending: list[str] = []

    @override
    def poll(self) -> list[SourceRecord] | None:
        stream = self._open()
        if stream is None:
            self._stop.wait(0.2)
            return None
        while not self._pending or len(self._pending) < _READ_AHEAD:
            line = stream.readline()
            if not line or not line.endswith(b"\n"):
                stream.seek(self._position)  # nothing more, or a partial line: later
                break
            self._position += len(line)
            self._pending.append(line.rstrip(b"\r\n").decode("utf-8", errors="replace"))
        if not self._pending:
            self._stop.wait(0.2)
            return None
        batch, self._pending = self._pending[:_EMIT], self._pending[_EMIT:]
        # The defect: every record carries the read-ahead position, not the one after its line.
        return [
            SourceRecord(
                {FILENAME_FIELD: self._filename},
                {POSITION_FIELD: self._position},
                self._topic,
                None,
                value_schema=Schema.STRING_SCHEMA,
                value=text,
            )
            for text in batch
        ]


class ReadAheadFileStreamSourceConnector(FileStreamSourceConnector):
    """Gives every record the read-ahead position (up to ten lines past its own)."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _ReadAheadTask


class ReadAheadDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = ReadAheadFileStreamSourceConnector


def _file_size(filename: str | None) -> int:
    try:
        return os.path.getsize(filename or "")
    except OSError:
        return 0


class _RestartingTask(FileStreamSourceTask):
    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        if self._position > _file_size(self._filename):
            log.warning(
                "Stored position %d is past the end of the file: starting over", self._position
            )
            self._position = 0


class RestartingFileStreamSourceConnector(FileStreamSourceConnector):
    """Starts the file over when the stored position is past its end (re-emits everything)."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _RestartingTask


class RestartingDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = RestartingFileStreamSourceConnector


CURSOR_FIELD = "cursor"


class _CursorTask(FileStreamSourceTask):
    """Its offset is the position as 12 hex digits of text: no numeric field to push ahead."""

    @override
    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(CONFIG_DEF, props)
        self._filename = config.get_string(FILE_CONFIG)
        self._topic = config.get_string(TOPIC_CONFIG)
        self._batch_size = config.get_int(BATCH_SIZE_CONFIG)
        self._partition = {FILENAME_FIELD: self._filename}
        stored = self.context.offset_storage_reader.offset(self._partition)
        if stored is not None:
            self._position = int(str(stored[CURSOR_FIELD]), 16)

    @override
    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        return [_with_cursor(r) for r in records] if records else records


def _with_cursor(record: SourceRecord) -> SourceRecord:
    position = int(record.source_offset[POSITION_FIELD])  # type: ignore[index]
    return SourceRecord(
        record.source_partition,
        {CURSOR_FIELD: f"{position:012x}"},
        record.topic,
        record.kafka_partition,
        value_schema=record.value_schema,
        value=record.value,
    )


class CursorFileStreamSourceConnector(FileStreamSourceConnector):
    """A correct source whose offset is a text cursor."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _CursorTask


class CursorDriver(FileStreamSourceDriver):
    """Knows no cursor beyond the data: OFF-04 is not verified."""

    connector: ClassVar[type] = CursorFileStreamSourceConnector


class CursorFutureDriver(CursorDriver):
    """Gives the cursor of a position far beyond the end of the file."""

    @override
    def future_offset(
        self, partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        return {CURSOR_FIELD: f"{int(str(offset[CURSOR_FIELD]), 16) + 10**9:012x}"}


class _RestartingCursorTask(_CursorTask):
    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        if self._position > _file_size(self._filename):
            self._position = 0  # an unknown cursor: start over


class RestartingCursorFileStreamSourceConnector(FileStreamSourceConnector):
    """Starts the file over when the cursor is past its end (re-emits everything)."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _RestartingCursorTask


class RestartingCursorDriver(CursorFutureDriver):
    connector: ClassVar[type] = RestartingCursorFileStreamSourceConnector


class _RejectingTask(FileStreamSourceTask):
    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        size = _file_size(self._filename)
        if self._position > size:
            raise ConnectException(
                f"Stored position {self._position} is past the end of {self._filename} "
                f"({size} bytes)"
            )


class RejectingFileStreamSourceConnector(FileStreamSourceConnector):
    """Fails to start when the stored position is past the end of the file."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _RejectingTask


class RejectingDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = RejectingFileStreamSourceConnector


class _SideFileTask(FileStreamSourceTask):
    @property
    def _side(self) -> Path:
        return Path(f"{self._filename}.position")

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        if self._side.exists():
            self._position = int(self._side.read_text(encoding="utf-8"))  # wins over the offset

    @override
    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        if records:
            self._side.write_text(str(self._position), encoding="utf-8")
        return records


class SideFileFileStreamSourceConnector(FileStreamSourceConnector):
    """Resumes from a position file of its own, whatever the worker's offsets say."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _SideFileTask


class SideFileDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = SideFileFileStreamSourceConnector


# ========================================================================== FileStream sinks
class _EagerCommitTask(FileStreamSinkTask):
    def __init__(self) -> None:
        super().__init__()
        self._pending: list[SinkRecord] = []

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        self._pending.extend(records)  # written on stop; pre_commit still commits them
        if len(self._pending) >= 100_000:
            super().put(self._pending)
            self._pending = []

    @override
    def stop(self) -> None:
        if self._pending and self._out is not None:
            super().put(self._pending)
            self._pending = []
            super().flush({})
        super().stop()


class EagerCommitFileStreamSinkConnector(FileStreamSinkConnector):
    """Buffers records until it stops, while the default pre_commit commits their offsets."""

    @override
    def task_class(self) -> type[SinkTask]:
        return _EagerCommitTask


class EagerCommitDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = EagerCommitFileStreamSinkConnector


_CHUNK = 25


class _ForgetfulTask(FileStreamSinkTask):
    def __init__(self) -> None:
        super().__init__()
        self._pending: list[SinkRecord] = []

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        self._pending.extend(records)
        while len(self._pending) >= _CHUNK:
            super().put(self._pending[:_CHUNK])
            self._pending = self._pending[_CHUNK:]

    @override
    def stop(self) -> None:
        self._pending = []  # the defect: the partial chunk is dropped, its offsets committed
        super().stop()


class ForgetfulFileStreamSinkConnector(FileStreamSinkConnector):
    """Writes in chunks of 25 records and drops the partial chunk on stop."""

    @override
    def task_class(self) -> type[SinkTask]:
        return _ForgetfulTask


class ForgetfulDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = ForgetfulFileStreamSinkConnector


class _NeverCommitsTask(FileStreamSinkTask):
    @override
    def pre_commit(
        self, current_offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        self.flush(current_offsets)
        return {}  # the defect: nothing is ever committed, a restart writes everything again


class NeverCommitsFileStreamSinkConnector(FileStreamSinkConnector):
    """Writes at once but never lets the worker commit offsets."""

    @override
    def task_class(self) -> type[SinkTask]:
        return _NeverCommitsTask


class NeverCommitsDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = NeverCommitsFileStreamSinkConnector


class _SelfRewindingTask(FileStreamSinkTask):
    def __init__(self) -> None:
        super().__init__()
        self._side = Path()
        self._next: dict[str, int] = {}

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self._side = Path(f"{props['file']}.offsets")
        if self._side.exists():
            stored: dict[str, Any] = json.loads(self._side.read_text(encoding="utf-8"))
            self._next = {k: int(v) for k, v in stored.items()}

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        super().put(records)
        for record in records:
            self._next[f"{record.topic}:{record.kafka_partition}"] = record.kafka_offset + 1

    @override
    def pre_commit(
        self, current_offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        self.flush(current_offsets)
        if self._next:
            self._side.write_text(json.dumps(self._next), encoding="utf-8")
        return current_offsets

    @override
    def open(self, partitions: Collection[TopicPartition]) -> None:
        rewinds = {
            tp: self._next[f"{tp.topic}:{tp.partition}"]
            for tp in partitions
            if f"{tp.topic}:{tp.partition}" in self._next
        }
        if rewinds:
            self.context.offset(rewinds)  # the defect: wins over the (reset) group offsets


class SelfRewindingFileStreamSinkConnector(FileStreamSinkConnector):
    """Rewinds to offsets kept in a file of its own, whatever the consumer group says."""

    @override
    def task_class(self) -> type[SinkTask]:
        return _SelfRewindingTask


class SelfRewindingDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = SelfRewindingFileStreamSinkConnector


# ============================================================================ exactly-once claims
class EosAheadSourceConnector(SqliteSkipsRowSourceConnector):
    """Declares exactly-once support; resumes one row past its offset (a row lost per crash)."""

    @override
    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED


class EosAheadDriver(SqliteSourceDriver):
    connector: ClassVar[type] = EosAheadSourceConnector


class EosRepeatsSourceConnector(SqliteRepeatsRowSourceConnector):
    """Declares exactly-once support; resumes with the row of its offset (a duplicate a crash)."""

    @override
    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED


class EosRepeatsDriver(SqliteSourceDriver):
    connector: ClassVar[type] = EosRepeatsSourceConnector


class EosForgetsToCommitSourceConnector(SqliteSourceConnector):
    """Defines its own transaction boundaries and never commits one."""

    @override
    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED

    @override
    def can_define_transaction_boundaries(
        self, props: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED


class EosForgetsToCommitDriver(SqliteSourceDriver):
    connector: ClassVar[type] = EosForgetsToCommitSourceConnector

    @override
    def example_config(self, topic: str) -> dict[str, str]:
        return {**super().example_config(topic), "transaction.boundary": "connector"}
