"""A deterministic generator source connector for the runtime's integration tests.

It emits records for ``partitions`` independent source partitions (streams ``p0``, ``p1``, ...);
record ``seq`` of stream ``pN`` is always the same record, so a test can compute exactly what a
sink must receive (:func:`expected_value`, :func:`expected_key`). Source partitions and offsets
are ``{"partition": "p0"} -> {"seq": n}`` (``n`` = the last emitted sequence number); a task
resumes from the committed offsets through ``context.offset_storage_reader``.

Fault injection (for the error-handling tests):

- ``fail.after=N``: the task raises a non-retriable ConnectException once, after it emitted N
  records (once per connector and task id in this process: a restarted task carries on);
  ``fail.stream=pK`` limits it to the task of stream ``pK``.
- ``retriable.failures=N``: the first N polls that would emit records raise RetriableException
  instead (Kafka drops nothing then: poll is simply called again).

Reconfiguration: with ``streams.file`` set, the number of streams is read from that file (its
content is a decimal number); a connector thread watches it and calls
``context.request_task_reconfiguration()`` when the number changes.
"""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import time
from pathlib import Path
from typing import Any

from cdk.api import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    Header,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    group_partitions,
)
from cdk.config import AbstractConfig, ConfigDef, Importance, Type
from cdk.config.validators import Range
from cdk.data import Decimal, Schema, SchemaBuilder, Struct, Timestamp
from cdk.errors import ConfigException, ConnectException, RetriableException

__all__ = [
    "GENERATOR_CONFIG",
    "KEY_SCHEMA",
    "VALUE_SCHEMA",
    "GeneratorSourceConnector",
    "GeneratorSourceTask",
    "expected_key",
    "expected_value",
]

TOPIC = "topic"
RECORDS = "records"
PARTITIONS = "partitions"
BATCH_SIZE = "batch.size"
POLL_INTERVAL_MS = "poll.interval.ms"
SCHEMA_ENABLE = "schema.enable"
FAIL_AFTER = "fail.after"
FAIL_STREAM = "fail.stream"
TASK_CLASS_OVERRIDE = "task.class.override"
RETRIABLE_FAILURES = "retriable.failures"
STREAMS_FILE = "streams.file"
SECRET = "generator.secret"
TASK_STREAMS = "task.streams"  # set by the connector in each task config
EOS_SUPPORT = "eos.support"
EOS_BOUNDARIES = "eos.boundaries"
EOS_COMMIT_EVERY = "eos.commit.every"

GENERATOR_CONFIG = (
    ConfigDef()
    .define(TOPIC, Type.STRING, importance=Importance.HIGH, documentation="Topic to write to.")
    .define(
        RECORDS,
        Type.LONG,
        -1,
        Range.at_least(-1),
        Importance.HIGH,
        "Records to emit per stream (source partition); -1 means unbounded.",
    )
    .define(
        PARTITIONS,
        Type.INT,
        1,
        Range.at_least(1),
        Importance.MEDIUM,
        "Number of streams (source partitions p0, p1, ...), split across the tasks.",
    )
    .define(
        BATCH_SIZE,
        Type.INT,
        100,
        Range.at_least(1),
        Importance.LOW,
        "Records per stream per poll.",
    )
    .define(
        POLL_INTERVAL_MS,
        Type.LONG,
        0,
        Range.at_least(0),
        Importance.LOW,
        "Minimum time between two polls that emit records (throttling).",
    )
    .define(
        SCHEMA_ENABLE,
        Type.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        documentation="Emit Structs with a schema (true) or schemaless dicts (false).",
    )
    .define(
        FAIL_AFTER,
        Type.LONG,
        -1,
        Range.at_least(-1),
        Importance.LOW,
        "Raise a non-retriable error once after this many records (-1: never).",
    )
    .define(
        TASK_CLASS_OVERRIDE,
        Type.STRING,
        "",
        importance=Importance.LOW,
        documentation="The task class to run instead of GeneratorSourceTask (a subclass).",
    )
    .define(
        FAIL_STREAM,
        Type.STRING,
        "",
        importance=Importance.LOW,
        documentation="Only the task of this stream fails with fail.after (empty: every task).",
    )
    .define(
        RETRIABLE_FAILURES,
        Type.INT,
        0,
        Range.at_least(0),
        Importance.LOW,
        "Number of polls that raise RetriableException before emitting.",
    )
    .define(
        STREAMS_FILE,
        Type.STRING,
        "",
        importance=Importance.LOW,
        documentation="File holding the current number of streams; watched for changes.",
    )
    .define(
        EOS_SUPPORT,
        Type.STRING,
        "",
        importance=Importance.LOW,
        documentation="What exactly_once_support() answers: SUPPORTED, UNSUPPORTED, empty: None.",
    )
    .define(
        EOS_BOUNDARIES,
        Type.STRING,
        "UNSUPPORTED",
        importance=Importance.LOW,
        documentation="What can_define_transaction_boundaries() answers.",
    )
    .define(
        EOS_COMMIT_EVERY,
        Type.INT,
        0,
        Range.at_least(0),
        importance=Importance.LOW,
        documentation="With transaction.boundary=connector: commit the transaction after each "
        "record whose seq + 1 is a multiple of this (0: never; the task then relies on aborts).",
    )
    .define(
        SECRET,
        Type.PASSWORD,
        None,
        importance=Importance.LOW,
        documentation="A secret that is never echoed (for the secrets tests).",
    )
)

KEY_SCHEMA = Schema.STRING_SCHEMA
VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .name("tests.generator.Event")
    .version(1)
    .field("stream", Schema.STRING_SCHEMA)
    .field("seq", Schema.INT64_SCHEMA)
    .field("small", Schema.INT16_SCHEMA)
    .field("ratio", Schema.FLOAT64_SCHEMA)
    .field("even", Schema.BOOLEAN_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("blob", Schema.BYTES_SCHEMA)
    .field("created", Timestamp.SCHEMA)
    .field("amount", Decimal.schema(2))
    .build()
)
_EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)

# (connector name, task id) pairs whose injected failure already happened in this process.
_FAILED_ONCE: set[tuple[str, str]] = set()
_FAILED_LOCK = threading.Lock()


def expected_key(stream: str, seq: int) -> str:
    """The key of record ``seq`` of ``stream``."""
    return f"{stream}-{seq}"


def expected_value(stream: str, seq: int, *, schema: bool = True) -> Any:
    """The value of record ``seq`` of ``stream``: a Struct, or a dict when schemaless."""
    body: dict[str, Any] = {
        "stream": stream,
        "seq": seq,
        "small": seq % 30000,
        "ratio": seq / 4,
        "even": seq % 2 == 0,
        "note": None if seq % 3 == 0 else f"note {seq}",
    }
    if not schema:
        return body
    struct = Struct(VALUE_SCHEMA)
    for name, value in body.items():
        struct.put(name, value)
    struct.put("blob", seq.to_bytes(8, "big"))
    struct.put("created", _EPOCH + dt.timedelta(milliseconds=seq))
    struct.put("amount", decimal.Decimal(seq).scaleb(-2))
    return struct


def stream_names(count: int) -> list[str]:
    """The stream names for ``count`` streams."""
    return [f"p{i}" for i in range(count)]


def _read_streams_file(path: str) -> int:
    try:
        text = Path(path).read_text().strip()
        count = int(text)
    except (OSError, ValueError) as e:
        raise ConfigException(STREAMS_FILE, path, f"cannot read a stream count: {e}") from e
    if count < 1:
        raise ConfigException(STREAMS_FILE, path, "the stream count must be at least 1")
    return count


class GeneratorSourceConnector(SourceConnector):
    """Emits deterministic records for N streams; see the module docstring."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._streams = 1
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def version(self) -> str:
        return "1.0.0-test"

    def config(self) -> ConfigDef:
        return GENERATOR_CONFIG

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(GENERATOR_CONFIG, props)
        self._props = dict(props)
        path = config.get_string(STREAMS_FILE)
        if path:
            self._streams = _read_streams_file(path)
            self._stop.clear()
            self._watcher = threading.Thread(
                target=self._watch,
                args=(path,),
                name=f"generator-watch-{props.get('name', '?')}",
            )
            self._watcher.start()
        else:
            self._streams = config.get_int(PARTITIONS)

    def _watch(self, path: str) -> None:
        known = self._streams
        while not self._stop.wait(0.05):
            try:
                current = _read_streams_file(path)
            except ConfigException:
                continue  # being rewritten
            if current != known:
                known = current
                self._streams = current
                self.context.request_task_reconfiguration()

    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        answer = props.get(EOS_SUPPORT, "")
        return ExactlyOnceSupport(answer) if answer else None

    def can_define_transaction_boundaries(
        self, props: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries(props.get(EOS_BOUNDARIES, "UNSUPPORTED"))

    def task_class(self) -> type[Task]:
        override = self._props.get(TASK_CLASS_OVERRIDE)
        if override:
            from cdk.config import load_class

            loaded = load_class(override)
            assert isinstance(loaded, type)
            return loaded
        return GeneratorSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        streams = stream_names(self._streams)
        groups = group_partitions(streams, min(max_tasks, len(streams)))
        return [{**self._props, TASK_STREAMS: ",".join(group)} for group in groups]

    def stop(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(5)
            self._watcher = None


class GeneratorSourceTask(SourceTask):
    """Emits the records of the streams listed in ``task.streams``."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}
        self._stopping = threading.Event()
        self._emitted = 0
        self._last_poll = 0.0

    def version(self) -> str:
        return "1.0.0-test"

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(GENERATOR_CONFIG, props)
        self._topic = config.get_string(TOPIC)
        self._records = config.get_long(RECORDS)
        self._batch = config.get_int(BATCH_SIZE)
        self._interval = config.get_long(POLL_INTERVAL_MS) / 1000
        self._schema = config.get_boolean(SCHEMA_ENABLE)
        self._fail_after = config.get_long(FAIL_AFTER)
        only = config.get_string(FAIL_STREAM)
        if only and only not in props.get(TASK_STREAMS, "p0").split(","):
            self._fail_after = -1
        self._retriable_left = config.get_int(RETRIABLE_FAILURES)
        self._commit_every = config.get_int(EOS_COMMIT_EVERY)
        self._failure_key = (props.get("name", ""), props.get(TASK_STREAMS, ""))
        streams = [s for s in props.get(TASK_STREAMS, "p0").split(",") if s]
        stored = self.context.offset_storage_reader.offsets([{"partition": s} for s in streams])
        for partition, offset in stored:
            self._next[partition["partition"]] = 0 if offset is None else int(offset["seq"]) + 1

    def _remaining(self, stream: str) -> int:
        if self._records < 0:
            return self._batch
        return max(0, min(self._batch, self._records - self._next[stream]))

    def poll(self) -> list[SourceRecord] | None:
        if self._interval:
            # Throttle without blocking stop(): wait on the stop event, not a plain sleep.
            wait = self._last_poll + self._interval - time.monotonic()
            if wait > 0 and self._stopping.wait(wait):
                return None
            self._last_poll = time.monotonic()
        if not any(self._remaining(s) for s in self._next):
            self._stopping.wait(0.05)  # all done: idle briefly instead of spinning
            return None
        if self._retriable_left > 0:
            self._retriable_left -= 1
            raise RetriableException("generator: injected transient failure")
        limit = None  # records this poll may emit before the injected failure
        if self._fail_after >= 0:
            with _FAILED_LOCK:
                pending = self._failure_key not in _FAILED_ONCE
                if pending and self._emitted >= self._fail_after:
                    _FAILED_ONCE.add(self._failure_key)
                    raise ConnectException(
                        f"generator: injected failure after {self._emitted} records"
                    )
            if pending:
                limit = self._fail_after - self._emitted
        records: list[SourceRecord] = []
        transactions = self.context.transaction_context if self._commit_every else None
        for stream in self._next:
            for _ in range(self._remaining(stream)):
                if limit is not None and len(records) >= limit:
                    break
                seq = self._next[stream]
                record = self._record(stream, seq)
                records.append(record)
                if transactions is not None and (seq + 1) % self._commit_every == 0:
                    transactions.commit_transaction(record)
                self._next[stream] += 1
        self._emitted += len(records)
        return records

    def _record(self, stream: str, seq: int) -> SourceRecord:
        value = expected_value(stream, seq, schema=self._schema)
        return SourceRecord(
            {"partition": stream},
            {"seq": seq},
            self._topic,
            None,
            KEY_SCHEMA if self._schema else None,
            expected_key(stream, seq),
            VALUE_SCHEMA if self._schema else None,
            value,
            headers=[Header("gen.stream", Schema.STRING_SCHEMA, stream)],
        )

    def stop(self) -> None:
        self._stopping.set()
