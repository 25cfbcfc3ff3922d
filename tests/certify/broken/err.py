"""Connectors with error-handling defects, one or more per ERR check, and their drivers.

Each is a small subclass of a reference connector (SQLite, whose drivers can make the database
unavailable or break it; FileStream for the tolerance defects) that gets one thing wrong; its
driver is the reference driver pointed at it.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from typing import ClassVar

from typing_extensions import override

from cdk import (
    ConnectException,
    DataException,
    RecordMetadata,
    RetriableException,
    SinkRecord,
    SinkTask,
    SourceRecord,
    SourceTask,
    TopicPartition,
)
from reference_connectors.filestream import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver
from tests.certify.broken._sqlite_base import (
    SqliteSinkConnector,
    SqliteSinkTask,
    SqliteSourceConnector,
    SqliteSourceTask,
)
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------- ERR-01
class TransientIsFatalSinkTask(SqliteSinkTask):
    """Reports "database is locked" as a plain ConnectException: the runtime fails the task."""

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        try:
            super().put(records)
        except RetriableException as exc:
            raise ConnectException(f"Cannot write to the database: {exc}") from exc


class TransientIsFatalSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return TransientIsFatalSinkTask


class TransientIsFatalSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = TransientIsFatalSinkConnector


class TransientIsFatalSourceTask(SqliteSourceTask):
    """Reports "database is locked" while polling as a plain ConnectException."""

    @override
    def poll(self) -> list[SourceRecord] | None:
        try:
            return super().poll()
        except RetriableException as exc:
            raise ConnectException(f"Cannot read the database: {exc}") from exc


class TransientIsFatalSourceConnector(SqliteSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return TransientIsFatalSourceTask


class TransientIsFatalSourceDriver(SqliteSourceDriver):
    connector: ClassVar[type] = TransientIsFatalSourceConnector


class DatabaseBusy(RetriableException):
    """A connector's own retriable error: a subclass of RetriableException."""


class SubclassRetriableSourceTask(SqliteSourceTask):
    """Not broken: raises its own subclass of RetriableException during the outage.

    ERR-01 must see it retried exactly as a plain RetriableException (the runtime treats both
    alike).
    """

    @override
    def poll(self) -> list[SourceRecord] | None:
        try:
            return super().poll()
        except RetriableException as exc:
            # from None: the trace names DatabaseBusy only, not the RetriableException behind it
            raise DatabaseBusy(f"The database is busy: {exc}") from None


class SubclassRetriableSourceConnector(SqliteSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return SubclassRetriableSourceTask


class SubclassRetriableSourceDriver(SqliteSourceDriver):
    connector: ClassVar[type] = SubclassRetriableSourceConnector


# ------------------------------------------------------------------------------------- ERR-02
class SwallowingSinkTask(SqliteSinkTask):
    """Logs a failed write and carries on: the task stays RUNNING and the batch is lost."""

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        try:
            super().put(records)
        except RetriableException:
            raise
        except ConnectException as exc:
            log.error("Could not write %d records, skipping them: %s", len(records), exc)


class SwallowingSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return SwallowingSinkTask


class SwallowingSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = SwallowingSinkConnector


class RawErrorSinkTask(SqliteSinkTask):
    """Lets sqlite3's own exception escape instead of a ConnectException that explains it.

    The runtime still fails the task (wrapping the error in a ConnectException of its own), but
    the trace's error, ``sqlite3.DatabaseError: file is not a database``, says neither which
    database nor what the connector was doing.
    """

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        try:
            super().put(records)
        except RetriableException:
            raise
        except ConnectException as exc:
            cause = exc.__cause__
            if isinstance(cause, sqlite3.Error):
                raise cause from None
            raise


class RawErrorSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return RawErrorSinkTask


class RawErrorSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = RawErrorSinkConnector


# ------------------------------------------------------------------------------------- ERR-03
class GapIntolerantSinkTask(FileStreamSinkTask):
    """Checks that offsets are contiguous "to detect lost records" and fails on a gap.

    Kafka offsets have gaps whenever records are skipped before the task sees them (tolerated
    conversion errors, filtering transformations, compaction, transaction markers), so the task
    dies on the first poison record the runtime tolerated.
    """

    def __init__(self) -> None:
        super().__init__()
        self._next: dict[TopicPartition, int] = {}

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        for record in records:
            tp = TopicPartition(record.topic, record.kafka_partition or 0)
            expected = self._next.get(tp)
            if expected is not None and record.kafka_offset != expected:
                raise DataException(
                    f"Offset gap on {tp}: expected offset {expected}, got "
                    f"{record.kafka_offset}; refusing to continue after lost records"
                )
            self._next[tp] = record.kafka_offset + 1
        super().put(records)


class GapIntolerantSinkConnector(FileStreamSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return GapIntolerantSinkTask


class GapIntolerantSinkDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = GapIntolerantSinkConnector


class SkipIsFailureSourceTask(FileStreamSourceTask):
    """Takes ``commit_record(record, None)`` for a failed send and fails the task "to lose nothing".

    ``metadata=None`` means the record was filtered out by a transformation or skipped under
    ``errors.tolerance=all``, both on purpose; this task fails on the first tolerated record.
    """

    def __init__(self) -> None:
        super().__init__()
        self._unsent: list[SourceRecord] = []

    @override
    def poll(self) -> list[SourceRecord] | None:
        if self._unsent:
            raise ConnectException(
                f"Kafka did not acknowledge the line ending at {self._unsent[0].source_offset} "
                "of the file; stopping so that it is not lost"
            )
        return super().poll()

    @override
    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if metadata is None:
            self._unsent.append(record)


class SkipIsFailureSourceConnector(FileStreamSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return SkipIsFailureSourceTask


class SkipIsFailureSourceDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = SkipIsFailureSourceConnector
