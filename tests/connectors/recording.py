"""A recording sink connector for the runtime's integration tests.

Every task instance appends JSON lines to its own file in the ``store.dir`` directory: one line per
record it receives (topic, partition, offset, key, value, headers) and one per lifecycle call
(start, open, close, flush, stop). ``put`` writes through a buffered file and ``flush`` makes the
writes durable (``fsync``), as a real sink would, so a ``kill -9`` loses exactly what was not
flushed (and therefore not committed). :func:`read_store` reads a directory back, from any
process; a torn last line (killed mid-write) is ignored. The connector instance records its own
``start`` and ``stop`` calls in ``<store.dir>/connector-<instance>.events`` (read them with
:func:`read_connector_events`), apart from the tasks' files.

Fault injection:

- ``fail.on``: record keys that are poison. ``fail.mode=raise`` (default) raises a DataException
  from ``put`` (the task fails); ``fail.mode=report`` hands them to the errant record reporter
  (DLQ) and keeps going.
- ``retriable.failures=N``: the first N non-empty ``put`` calls raise RetriableException before
  writing anything (the runtime must redeliver the same batch).
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import json
import os
import threading
import uuid
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, TextIO

from cdk.api import (
    OffsetAndMetadata,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Task,
    TopicPartition,
)
from cdk.config import AbstractConfig, ConfigDef, Importance, Type
from cdk.config.validators import Range, ValidString
from cdk.data import Struct
from cdk.errors import ConnectException, DataException, RetriableException

__all__ = [
    "RECORDING_CONFIG",
    "RecordingSinkConnector",
    "RecordingSinkTask",
    "Store",
    "normalize",
    "read_connector_events",
    "read_store",
]

STORE_DIR = "store.dir"
FAIL_ON = "fail.on"
FAIL_MODE = "fail.mode"
RETRIABLE_FAILURES = "retriable.failures"
RETRY_TIMEOUT_MS = "retry.timeout.ms"
PASSWORD = "connection.password"

RECORDING_CONFIG = (
    ConfigDef()
    .define(
        STORE_DIR,
        Type.STRING,
        importance=Importance.HIGH,
        documentation="Directory the tasks write their JSON-lines files to.",
    )
    .define(FAIL_ON, Type.LIST, "", importance=Importance.LOW, documentation="Poison record keys.")
    .define(
        FAIL_MODE,
        Type.STRING,
        "raise",
        ValidString.of("raise", "report"),
        Importance.LOW,
        "What to do with a poison record: raise a DataException, or report it (DLQ).",
    )
    .define(
        RETRIABLE_FAILURES,
        Type.INT,
        0,
        Range.at_least(0),
        Importance.LOW,
        "Number of put() calls that raise RetriableException first.",
    )
    .define(
        RETRY_TIMEOUT_MS,
        Type.LONG,
        100,
        Range.at_least(0),
        Importance.LOW,
        "The context.timeout(ms) set before raising a RetriableException.",
    )
    .define(
        PASSWORD,
        Type.PASSWORD,
        None,
        importance=Importance.MEDIUM,
        documentation="A secret for the external system; never echoed.",
    )
)


def normalize(value: Any) -> Any:
    """A JSON-ready, comparable form of a Connect value (Structs become dicts)."""
    if isinstance(value, Struct):
        return {f.name: normalize(value.get(f.name)) for f in value.schema.fields}
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, decimal.Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return {"$time": value.isoformat()}
    return value


class RecordingSinkConnector(SinkConnector):
    """Hands every task the same config; the tasks record what they get.

    The connector records its own ``start``/``stop`` calls (see :func:`read_connector_events`).
    """

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._instance = uuid.uuid4().hex[:12]
        self._events: Path | None = None

    def _event(self, name: str) -> None:
        if self._events is not None:
            line = {"event": name, "instance": self._instance}
            with self._events.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line, sort_keys=True) + "\n")

    def version(self) -> str:
        return "1.0.0-test"

    def config(self) -> ConfigDef:
        return RECORDING_CONFIG

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(RECORDING_CONFIG, props)  # fail fast on a bad config
        self._props = dict(props)
        directory = Path(config.get_string(STORE_DIR))
        directory.mkdir(parents=True, exist_ok=True)
        self._events = directory / f"connector-{self._instance}.events"
        self._event("start")

    def task_class(self) -> type[Task]:
        return RecordingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        self._event("stop")
        self._props = {}


class RecordingSinkTask(SinkTask):
    """Appends what it receives to ``<store.dir>/<instance>.jsonl``."""

    def __init__(self) -> None:
        self._file: TextIO | None = None
        self._lock = threading.Lock()
        self._instance = uuid.uuid4().hex[:12]

    def version(self) -> str:
        return "1.0.0-test"

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(RECORDING_CONFIG, props)
        directory = Path(config.get_string(STORE_DIR))
        directory.mkdir(parents=True, exist_ok=True)
        self._poison = set(config.get_list(FAIL_ON))
        self._mode = config.get_string(FAIL_MODE)
        self._retriable_left = config.get_int(RETRIABLE_FAILURES)
        self._retry_ms = config.get_long(RETRY_TIMEOUT_MS)
        self._file = open(directory / f"{self._instance}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        self._event("start")

    def _write(self, line: dict[str, Any]) -> None:
        if self._file is None:
            raise ConnectException("RecordingSinkTask used before start()")
        line["instance"] = self._instance
        self._file.write(json.dumps(line, sort_keys=True) + "\n")

    def _event(self, name: str, partitions: Collection[TopicPartition] = ()) -> None:
        tps = sorted([tp.topic, tp.partition] for tp in partitions)
        with self._lock:
            self._write({"event": name, "partitions": tps})
            if self._file is not None:
                self._file.flush()  # lifecycle events are visible at once

    def put(self, records: Sequence[SinkRecord]) -> None:
        if records and self._retriable_left > 0:
            self._retriable_left -= 1
            self.context.timeout(self._retry_ms)
            raise RetriableException("recording sink: injected transient failure")
        reporter = None
        with self._lock:
            for record in records:
                if record.key in self._poison:
                    if self._mode == "raise":
                        raise DataException(f"recording sink: poison record key {record.key!r}")
                    reporter = reporter or self.context.errant_record_reporter()
                    if reporter is None:
                        raise ConnectException(
                            "recording sink: fail.mode=report needs an errant record reporter"
                        )
                    reporter.report(record, DataException(f"poison record key {record.key!r}"))
                    continue
                self._write(
                    {
                        "topic": record.topic,
                        "partition": record.kafka_partition,
                        "offset": record.kafka_offset,
                        "key": normalize(record.key),
                        "value": normalize(record.value),
                        "headers": [[h.key, normalize(h.value)] for h in record.headers],
                    }
                )

    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        with self._lock:
            if self._file is not None:
                self._file.flush()
                os.fsync(self._file.fileno())

    def open(self, partitions: Collection[TopicPartition]) -> None:
        self._event("open", partitions)

    def close(self, partitions: Collection[TopicPartition]) -> None:
        self._event("close", partitions)

    def stop(self) -> None:
        self._event("stop")
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


@dataclasses.dataclass
class Store:
    """What the recording sink tasks wrote to a directory."""

    records: list[dict[str, Any]]
    events: list[dict[str, Any]]

    def keys(self) -> Counter[Any]:
        """How many times each record key was received."""
        return Counter(r["key"] for r in self.records)

    def coordinates(self) -> Counter[tuple[str, int, int]]:
        """How many times each (topic, partition, offset) was received."""
        return Counter((r["topic"], r["partition"], r["offset"]) for r in self.records)

    def events_named(self, name: str) -> list[dict[str, Any]]:
        """The lifecycle events called ``name`` (start, open, close, stop)."""
        return [e for e in self.events if e["event"] == name]


def read_store(directory: str | os.PathLike[str]) -> Store:
    """Read every task file in ``directory`` (missing directory: empty store)."""
    records: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    path = Path(directory)
    if not path.is_dir():
        return Store(records, events)
    for file in sorted(path.glob("*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a torn last line after kill -9
            (events if "event" in item else records).append(item)
    return Store(records, events)


def read_connector_events(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The connector instances' ``start``/``stop`` calls in ``directory``, in file order.

    Each event is ``{"event": "start" | "stop", "instance": <connector instance id>}``; with more
    than one connector instance the files are read in name order.
    """
    path = Path(directory)
    if not path.is_dir():
        return []
    events: list[dict[str, Any]] = []
    for file in sorted(path.glob("connector-*.events")):
        events.extend(json.loads(line) for line in file.read_text(encoding="utf-8").splitlines())
    return events
