"""Connectors that do not ride out a stalled Kafka broker (ERR-04, ERR-05), and their drivers.

Each is a FileStream connector with a Kafka timeout of its own, a habit met in real connectors:
one gives up (fails its task), the other drops what it could not send or receive in time. The
drivers are the reference FileStream drivers pointed at them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import ClassVar

from typing_extensions import override

from cdk import ConnectException, RecordMetadata, SinkRecord, SinkTask, SourceRecord, SourceTask
from reference_connectors.filestream import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver

#: How late Kafka may be before these sources lose patience (less than the 10 s stall).
PATIENCE_S = 4.0
#: The same for the sinks, from a record's timestamp (a sink's group join takes about 3 s).
SINK_PATIENCE_S = 7.0


# ------------------------------------------------------------------------------------- ERR-04
class _AckWatchingTask(FileStreamSourceTask):
    """Notes when Kafka last acknowledged a record, and what is still unacknowledged."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._unacked = 0
        self._acked = False
        self._last_ack = time.monotonic()

    def _kafka_is_late(self) -> bool:
        # once Kafka has acknowledged a record (the topic's creation may take longer)
        with self._lock:
            return (
                self._acked and self._unacked > 0 and time.monotonic() - self._last_ack > PATIENCE_S
            )

    @override
    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        if records:
            with self._lock:
                if not self._unacked:
                    self._last_ack = time.monotonic()
                self._unacked += len(records)
        return records

    @override
    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        with self._lock:
            self._unacked -= 1
            self._acked = True
            self._last_ack = time.monotonic()


class GivesUpSourceTask(_AckWatchingTask):
    """Fails its task when Kafka has not acknowledged its records for 4 s."""

    @override
    def poll(self) -> list[SourceRecord] | None:
        if self._kafka_is_late():
            raise ConnectException(f"Kafka did not acknowledge records for {PATIENCE_S:g}s")
        return super().poll()


class GivesUpSourceConnector(FileStreamSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return GivesUpSourceTask


class GivesUpSourceDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = GivesUpSourceConnector


class SkipsAheadSourceTask(_AckWatchingTask):
    """When Kafka is late, skips what is already in the file ("catch up with live data")."""

    @override
    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        if records and self._kafka_is_late():
            return None  # read and dropped: the position moved past them
        return records


class SkipsAheadSourceConnector(FileStreamSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return SkipsAheadSourceTask


class SkipsAheadSourceDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = SkipsAheadSourceConnector


# ------------------------------------------------------------------------------------- ERR-05
def _late(records: Sequence[SinkRecord]) -> list[SinkRecord]:
    now_ms = time.time() * 1000
    return [
        r
        for r in records
        if r.timestamp is not None and now_ms - r.timestamp > SINK_PATIENCE_S * 1000
    ]


class GivesUpSinkTask(FileStreamSinkTask):
    """Fails its task on a record that reaches it more than 7 s after it was produced."""

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        late = _late(records)
        if late:
            raise ConnectException(
                f"{len(late)} records arrived more than {SINK_PATIENCE_S:g}s late: "
                "Kafka is too slow"
            )
        super().put(records)


class GivesUpSinkConnector(FileStreamSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return GivesUpSinkTask


class GivesUpSinkDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = GivesUpSinkConnector


class DropsStaleSinkTask(FileStreamSinkTask):
    """Drops records that reach it more than 7 s after they were produced ("stale data")."""

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        late = {id(r) for r in _late(records)}
        super().put([r for r in records if id(r) not in late])


class DropsStaleSinkConnector(FileStreamSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return DropsStaleSinkTask


class DropsStaleSinkDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = DropsStaleSinkConnector
