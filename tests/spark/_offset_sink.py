"""A sink storing its rows and its offsets in one SQLite transaction (exactly-once by offsets).

``open()`` seeds the consumer position from the stored offsets (``context.offset``), as Kafka's
exactly-once sinks do; every ``put`` stores the rows and the next offset of each partition in
one transaction. Plain INSERTs with no key: a row delivered twice would be stored twice, so the
tests see any duplicate. ``fail.flush.file``: when that file exists, ``flush`` deletes it and
fails (after the puts were stored), which makes Spark replay the micro-batch. ``events.file``:
each ``start``/``stop`` appends a line ``start <pid> <id>`` / ``stop <pid> <id>`` there (the
task's process and object), and each ``open`` of a partition ``open <partition> <pid> <id>``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Collection, Sequence

from cdk import ConfigDef, Importance, SinkConnector, SinkRecord, SinkTask, Type
from cdk.api import OffsetAndMetadata, TopicPartition
from cdk.config import AbstractConfig
from cdk.errors import ConnectException

CONFIG = (
    ConfigDef()
    .define("db", Type.STRING, importance=Importance.HIGH, documentation="SQLite file")
    .define("fail.flush.file", Type.STRING, "", importance=Importance.LOW, documentation="x")
    .define("events.file", Type.STRING, "", importance=Importance.LOW, documentation="x")
)


def _connect(path: str) -> sqlite3.Connection:
    # a task kept across micro-batches is stopped on the kit's own thread once idle
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("CREATE TABLE IF NOT EXISTS rows (topic TEXT, part INT, off INT, value TEXT)")
    db.execute(
        "CREATE TABLE IF NOT EXISTS offsets (topic TEXT, part INT, next INT, "
        "PRIMARY KEY (topic, part))"
    )
    return db


class OffsetSinkTask(SinkTask):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(CONFIG, props)
        self._db = _connect(config.get_string("db"))
        self._fail = config.get_string("fail.flush.file")
        self._events = config.get_string("events.file")
        self._event("start")

    def _event(self, what: str) -> None:
        if self._events:
            with open(self._events, "a") as f:
                f.write(f"{what} {os.getpid()} {id(self)}\n")

    def open(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            self._event(f"open {tp.partition}")
            row = self._db.execute(
                "SELECT next FROM offsets WHERE topic = ? AND part = ?", (tp.topic, tp.partition)
            ).fetchone()
            if row is not None:
                self.context.offset(tp, row[0])

    def put(self, records: Sequence[SinkRecord]) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        for r in records:
            value = r.value.to_dict() if hasattr(r.value, "to_dict") else r.value
            self._db.execute(
                "INSERT INTO rows VALUES (?, ?, ?, ?)",
                (r.topic, r.kafka_partition, r.kafka_offset, json.dumps(value, default=str)),
            )
            self._db.execute(
                "INSERT OR REPLACE INTO offsets VALUES (?, ?, ?)",
                (r.topic, r.kafka_partition, r.kafka_offset + 1),
            )
        self._db.execute("COMMIT")

    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        if self._fail and os.path.exists(self._fail):
            os.remove(self._fail)
            raise ConnectException("injected failure in flush")

    def stop(self) -> None:
        self._event("stop")
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()


class OffsetSinkConnector(SinkConnector):
    def version(self) -> str:
        return "1"

    def config(self) -> ConfigDef:
        return CONFIG

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[SinkTask]:
        return OffsetSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass
