"""Connectors that fail the Spark pipeline checks (OFF-10, OFF-11, OFF-12), and their drivers.

- ``DestructiveReadDriver``: the source deletes each row once it has read it, as a queue
  consumer would. The embedded worker delivers every row, but then nothing is left for Spark
  (OFF-10), and a Spark micro-batch cannot be replayed from its start offsets (the rows are
  gone, OFF-11).
- ``LazySinkDriver``: the sink buffers what ``put`` receives and writes it only once 10,000
  records have piled up; ``flush`` does nothing and ``stop`` drops the buffer, so a Spark
  micro-batch (open, put, flush, close, stop) stores nothing (OFF-12).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from typing import Any, ClassVar

from typing_extensions import override

from cdk import SinkRecord, SinkTask, SourceRecord, SourceTask
from cdk.api import OffsetAndMetadata, TopicPartition
from tests.certify.broken._sqlite_base._sink import SqliteSinkConnector, SqliteSinkTask
from tests.certify.broken._sqlite_base._source import SqliteSourceConnector, SqliteSourceTask
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver

__all__ = ["DestructiveReadDriver", "LazySinkDriver"]


class _DestructiveReadTask(SqliteSourceTask):
    @override
    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        if records:
            with sqlite3.connect(self._path, timeout=30) as db:
                for record in records:
                    table = record.source_partition["table"]
                    db.execute(f'DELETE FROM "{table}" WHERE {self._column} = ?', (record.key,))
        return records


class DestructiveReadSourceConnector(SqliteSourceConnector):
    """Consumes its input: a row read is a row deleted."""

    @override
    def task_class(self) -> type[SourceTask]:
        return _DestructiveReadTask


class DestructiveReadDriver(SqliteSourceDriver):
    connector: ClassVar[type] = DestructiveReadSourceConnector


class _LazySinkTask(SqliteSinkTask):
    _pending: list[SinkRecord]

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        pending = getattr(self, "_pending", [])
        pending.extend(records)
        self._pending = pending
        if len(pending) >= 10_000:
            super().put(pending)
            self._pending = []

    @override
    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Nothing: the buffer is written when it is full."""

    @override
    def close(self, partitions: Collection[TopicPartition]) -> None:
        """Nothing either."""

    @override
    def stop(self) -> None:
        self._pending = []
        super().stop()


class LazySinkConnector(SqliteSinkConnector):
    """Writes in blocks of 10,000 records and never on flush."""

    @override
    def task_class(self) -> type[SinkTask]:
        return _LazySinkTask


class LazySinkDriver(SqliteSinkDriver):
    connector: ClassVar[Any] = LazySinkConnector
