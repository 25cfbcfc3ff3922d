"""Slow connectors for the PRF checks (which fail them through configured thresholds).

They are correct, only slow: subclasses of the baseline SQLite connectors (``_sqlite_base``)
that wait where a real connector might do a slow round trip per batch or per record.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import ClassVar

from typing_extensions import override

from cdk import SinkRecord, SinkTask, SourceRecord, SourceTask
from tests.certify.broken._sqlite_base import (
    SqliteSinkConnector,
    SqliteSinkTask,
    SqliteSourceConnector,
    SqliteSourceTask,
)
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver


class SlowSourceTask(SqliteSourceTask):
    """Takes half a second more for every batch it returns (a slow upstream round trip).

    At most ``batch.max.rows`` (100) rows per 0.5 s: about 200 records/s, and every record
    waits at least 500 ms.
    """

    DELAY_S = 0.5

    @override
    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        if records:
            self._stopping.wait(self.DELAY_S)  # stop() interrupts the wait
        return records


class SlowSourceConnector(SqliteSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return SlowSourceTask


class SlowSourceDriver(SqliteSourceDriver):
    connector: ClassVar[type] = SlowSourceConnector


class SlowSinkTask(SqliteSinkTask):
    """Spends 3 ms per record (a row-at-a-time remote write): at most ~330 records/s."""

    PER_RECORD_S = 0.003

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        time.sleep(self.PER_RECORD_S * len(records))
        super().put(records)


class SlowSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return SlowSinkTask


class SlowSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = SlowSinkConnector


class SlowWritingSourceDriver(SqliteSourceDriver):
    """A correct connector behind a slow API: the driver's writes take 3 s per call (5,000
    records one by one against a REST API), the connector reads them at its usual speed.

    PRF-01 must report the connector's speed, not the driver's.
    """

    WRITE_S = 3.0

    @override
    def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
        time.sleep(self.WRITE_S)  # the slow API's cost, not a wait for a condition
        super().write_records(ids, stream=stream)
