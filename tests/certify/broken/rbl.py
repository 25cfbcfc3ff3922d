"""Connectors with rebalance defects, one per RBL check, and their drivers.

The source ones are small subclasses of the baseline SQLite source (``_sqlite_base``: several
tables, so tasks have work to split); the sink one is a FileStream sink that buffers its records.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import ClassVar

from typing_extensions import override

from cdk import OffsetAndMetadata, SinkRecord, SinkTask, TopicPartition
from reference_connectors.filestream import FileStreamSinkConnector, FileStreamSinkTask
from reference_connectors.filestream.certify import FileStreamSinkDriver
from tests.certify.broken._sqlite_base import SqliteSourceConnector
from tests.certify.broken._sqlite_base._config import TASK_TABLES
from tests.certify.broken._sqlite_base.certify import SqliteSourceDriver


# ------------------------------------------------------------------------------------- RBL-01
class OneTaskSqliteSourceConnector(SqliteSourceConnector):
    """Ignores max_tasks: one task copies every table, however many tasks are allowed."""

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return super().task_configs(1)


class OneTaskDriver(SqliteSourceDriver):
    connector: ClassVar[type] = OneTaskSqliteSourceConnector


# ------------------------------------------------------------------------------------- RBL-02
class TablePerTaskSqliteSourceConnector(SqliteSourceConnector):
    """Gives each task one table: with fewer tasks than tables, the other tables are dropped."""

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        with self._lock:
            tables = list(self._tables)
        return [{**self._props, TASK_TABLES: json.dumps([t])} for t in tables[:max_tasks]]


class TablePerTaskDriver(SqliteSourceDriver):
    connector: ClassVar[type] = TablePerTaskSqliteSourceConnector


# ------------------------------------------------------------------------------------- RBL-03
class BlindSqliteSourceConnector(SqliteSourceConnector):
    """The table monitor is disabled: tables created after start() are never copied."""

    @override
    def _watch(self, interval_s: float) -> None:
        return


class BlindDriver(SqliteSourceDriver):
    connector: ClassVar[type] = BlindSqliteSourceConnector


# ------------------------------------------------------------------------------------- RBL-04
class StopOnlyWriterSinkTask(FileStreamSinkTask):
    """Buffers records and writes them only when the task stops.

    pre_commit() reports every offset as safe (the records are "as good as written"), and
    close() forgets the buffers of the partitions it loses instead of writing them.
    """

    def __init__(self) -> None:
        super().__init__()
        self._buffers: dict[TopicPartition, list[str]] = {}

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        for record in records:
            partition = TopicPartition(record.topic, record.kafka_partition or 0)
            self._buffers.setdefault(partition, []).append(f"{record.value}\n")

    @override
    def pre_commit(
        self, current_offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        return current_offsets

    @override
    def close(self, partitions: Collection[TopicPartition]) -> None:
        for partition in partitions:
            self._buffers.pop(partition, None)

    @override
    def stop(self) -> None:
        if self._out is not None:
            for lines in self._buffers.values():
                self._out.writelines(lines)
        self._buffers.clear()
        super().stop()


class StopOnlyWriterSinkConnector(FileStreamSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return StopOnlyWriterSinkTask


class StopOnlyWriterDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = StopOnlyWriterSinkConnector
