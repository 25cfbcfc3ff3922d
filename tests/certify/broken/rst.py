"""Connectors with restart, pause and stop defects, one or more per RST check, and their drivers.

Each is a small subclass of a FileStream reference connector that gets one thing wrong; its
driver is the FileStream driver pointed at it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from confluent_kafka import OFFSET_BEGINNING, TopicPartition
from typing_extensions import override

from cdk import ConnectException, SinkRecord, SinkTask, SourceRecord, SourceTask
from cdk.converters import JsonConverter
from cdk.kafka import consumer_config, new_consumer
from reference_connectors.filestream import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)
from reference_connectors.filestream._source import FILE_CONFIG
from reference_connectors.filestream.certify import FileStreamSinkDriver, FileStreamSourceDriver


def _lock(path: Path, what: str) -> None:
    """Take a lock file (O_EXCL), as a connector guarding its file against a second reader."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        raise ConnectException(f"the lock file {path} exists: another {what} holds it") from None


# ------------------------------------------------------------------------------------- RST-01
class LockingSourceConnector(FileStreamSourceConnector):
    """Takes a lock file next to the input in start() and never removes it.

    The first start works; a restart in the same worker (a new instance, start() again) finds
    the lock and fails.
    """

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        _lock(Path(props[FILE_CONFIG] + ".connector.lock"), "connector")

    # stop() is inherited: it forgets the lock file


class LockingConnectorDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = LockingSourceConnector


# ------------------------------------------------------------------------------------- RST-02
class LockingSourceTask(FileStreamSourceTask):
    """Takes a lock file in start() and forgets it in stop(): a restarted task fails to start."""

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        _lock(Path(props[FILE_CONFIG] + ".task.lock"), "task")


class LockingTaskSourceConnector(FileStreamSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return LockingSourceTask


class LockingTaskDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = LockingTaskSourceConnector


# ------------------------------------------------------------------------------------- RST-03
class BookmarkSourceTask(FileStreamSourceTask):
    """Keeps its position in a bookmark file it moves in poll(), before Kafka has the records.

    It resumes from the bookmark instead of the committed offset: after a clean stop the two
    agree, but when the task fails on a batch it already bookmarked, that batch is skipped.
    """

    _bookmark = Path()

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self._bookmark = Path(props[FILE_CONFIG] + ".bookmark")
        if self._bookmark.exists():
            self._position = int(self._bookmark.read_text(encoding="utf-8"))

    @override
    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        if records:
            self._bookmark.write_text(str(self._position), encoding="utf-8")
        return records


class BookmarkSourceConnector(FileStreamSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return BookmarkSourceTask


class BookmarkDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = BookmarkSourceConnector


# ------------------------------------------------------------------------------------- RST-04
class BlockingPollSourceTask(FileStreamSourceTask):
    """poll() waits until a line arrives instead of returning None: the worker cannot pause it."""

    @override
    def poll(self) -> list[SourceRecord] | None:
        while not self._stop.is_set():
            records = super().poll()
            if records:
                return records
        return None


class BlockingPollSourceConnector(FileStreamSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return BlockingPollSourceTask


class BlockingPollDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = BlockingPollSourceConnector


class ReadAheadSinkTask(FileStreamSinkTask):
    """Reads its topic with a consumer of its own and writes from a background thread.

    It never looks at what put() gets (the worker's consumer only drives the offsets), so
    pausing the connector does not stop it. ``bootstrap_servers`` is set by the test.
    """

    bootstrap_servers: ClassVar[str] = ""

    def __init__(self) -> None:
        super().__init__()
        self._halt = threading.Event()
        self._reader: threading.Thread | None = None

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        topics = [t.strip() for t in props["topics"].split(",") if t.strip()]
        self._halt.clear()
        self._reader = threading.Thread(
            target=self._read_ahead, args=(topics,), name="read-ahead", daemon=True
        )
        self._reader.start()

    def _read_ahead(self, topics: list[str]) -> None:
        converter = JsonConverter()
        converter.configure({"schemas.enable": "true"}, False)
        consumer = new_consumer(consumer_config(self.bootstrap_servers))
        try:
            partitions = []
            for topic in topics:
                meta = consumer.list_topics(topic, timeout=10).topics[topic]
                partitions += [TopicPartition(topic, p, OFFSET_BEGINNING) for p in meta.partitions]
            consumer.assign(partitions)
            while not self._halt.is_set():
                messages = consumer.consume(100, 0.2)
                lines = []
                for msg in messages:
                    if msg.error() is None:
                        value = converter.to_connect_data(msg.topic() or "", msg.value()).value
                        lines.append(f"{value}\n")
                if lines and self._out is not None:
                    self._out.writelines(lines)
                    self._out.flush()
        finally:
            consumer.close()

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        """The reader thread has written them already."""

    @override
    def stop(self) -> None:
        self._halt.set()
        if self._reader is not None:
            self._reader.join(10)
        super().stop()


class ReadAheadSinkConnector(FileStreamSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return ReadAheadSinkTask


class ReadAheadDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = ReadAheadSinkConnector


class DroppingSourceTask(FileStreamSourceTask):
    """A reader thread tails the file into a buffer that evicts lines older than a second.

    poll() drains the buffer long before that while the connector runs; while it is paused
    nobody drains it, so the lines written meanwhile go stale and are dropped.
    """

    max_age_s: ClassVar[float] = 1.0

    def __init__(self) -> None:
        super().__init__()
        self._held: list[tuple[float, SourceRecord]] = []
        self._held_lock = threading.Lock()
        self._reader: threading.Thread | None = None

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self._reader = threading.Thread(target=self._tail, name="tail", daemon=True)
        self._reader.start()

    def _tail(self) -> None:
        while not self._stop.is_set():
            records = super().poll()
            now = time.monotonic()
            with self._held_lock:
                self._held.extend((now, record) for record in records or ())
                self._held = [(t, r) for t, r in self._held if now - t <= self.max_age_s]

    @override
    def poll(self) -> list[SourceRecord] | None:
        with self._held_lock:
            records, self._held = [r for _, r in self._held], []
        if not records:
            self._stop.wait(0.05)
        return records or None

    @override
    def stop(self) -> None:
        self._stop.set()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(5)
        super().stop()


class DroppingSourceConnector(FileStreamSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return DroppingSourceTask


class DroppingDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = DroppingSourceConnector


# ------------------------------------------------------------------------------------- RST-05
class SlowStopSourceTask(FileStreamSourceTask):
    """stop() waits for a poll that will never signal it, giving up after 7 s."""

    @override
    def stop(self) -> None:
        threading.Event().wait(7.0)
        super().stop()


class SlowStopSourceConnector(FileStreamSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return SlowStopSourceTask


class SlowStopDriver(FileStreamSourceDriver):
    connector: ClassVar[type] = SlowStopSourceConnector


#: Set by the tests when they end: the leaked threads of :class:`LeakyThreadSinkTask` then exit.
RELEASE_LEAKED = threading.Event()


class LeakyThreadSinkTask(FileStreamSinkTask):
    """Starts a flusher thread in start() and never stops it."""

    @override
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        threading.Thread(target=self._flusher, name="leaky-flusher", daemon=False).start()

    @staticmethod
    def _flusher() -> None:
        RELEASE_LEAKED.wait(120.0)  # runs until the test lets it go


class LeakyThreadSinkConnector(FileStreamSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return LeakyThreadSinkTask


class LeakyThreadDriver(FileStreamSinkDriver):
    connector: ClassVar[type] = LeakyThreadSinkConnector
