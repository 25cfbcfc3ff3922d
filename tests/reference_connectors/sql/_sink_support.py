"""Helpers of the SQL sink tests: a task driven directly, records, and reading rows back."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from typing_extensions import override

from cdk import Schema, SchemaBuilder, SinkRecord, Struct, TopicPartition
from cdk.api import ErrantRecordReporter
from harness import default_sink_value, default_sink_value_schema
from reference_connectors.sql import SqlSinkConnector, SqlSinkTask
from tests._contexts import StubSinkTaskContext
from tests.reference_connectors.sql._databases import TestDatabase

TOPIC = "orders"
SCHEMA = default_sink_value_schema()


class Reporter(ErrantRecordReporter):
    """Collects the reported records (the futures are done at once)."""

    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, BaseException]] = []

    @override
    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        self.reported.append((record, error))
        future: Future[None] = Future()
        future.set_result(None)
        return future


class Context(StubSinkTaskContext):
    """Records the offsets the task asks the framework to consume from."""

    def __init__(self, reporter: ErrantRecordReporter | None = None) -> None:
        super().__init__(reporter)
        self.offsets: dict[TopicPartition, int] = {}

    @override
    def offset(self, target: Any, offset: int | None = None, /) -> None:
        if isinstance(target, TopicPartition):
            assert offset is not None
            self.offsets[target] = offset
        else:
            self.offsets.update(target)


def sink_config(db: TestDatabase, **extra: str) -> dict[str, str]:
    return {
        "name": "sink-test",
        **db.config(),
        "topics": TOPIC,
        "auto.create": "true",
        "connection.attempts": "1",
        **{k.replace("_", "."): v for k, v in extra.items()},
    }


def start_task(
    db: TestDatabase, context: Context | None = None, **extra: str
) -> tuple[SqlSinkTask, Context]:
    connector = SqlSinkConnector()
    connector.start(sink_config(db, **extra))
    (config,) = connector.task_configs(1)
    task = SqlSinkTask()
    context = context or Context()
    task.initialize(context)
    task.start(config)
    return task, context


def record(
    record_id: int,
    schema: Schema = SCHEMA,
    *,
    offset: int | None = None,
    key: Any = ...,
    key_schema: Schema | None = Schema.INT64_SCHEMA,
    topic: str = TOPIC,
    partition: int = 0,
    **changes: Any,
) -> SinkRecord:
    value = default_sink_value(record_id, schema)
    for name, changed in changes.items():
        value.put(name, changed)
    return SinkRecord(
        topic,
        partition,
        key_schema,
        record_id if key is ... else key,
        schema,
        value,
        record_id if offset is None else offset,
    )


def tombstone(record_id: int, *, offset: int) -> SinkRecord:
    return SinkRecord(TOPIC, 0, Schema.INT64_SCHEMA, record_id, None, None, offset)


def evolved(
    schema: Schema = SCHEMA,
    *,
    add: dict[str, Schema] | None = None,
    drop: str = "",
    version: int | None = None,
) -> Schema:
    builder = SchemaBuilder.struct().name("cdk.certify.Record")
    if version is not None:
        builder.version(version)
    for field in schema.fields:
        if field.name != drop:
            builder.field(field.name, field.schema)
    for name, field_schema in (add or {}).items():
        builder.field(name, field_schema)
    return builder.build()


def struct_key(schema: Schema, **values: Any) -> Struct:
    key = Struct(schema)
    for name, value in values.items():
        key.put(name, value)
    return key


def rows(db: TestDatabase, table: str = TOPIC, columns: str = "*", order: str = "") -> list[Any]:
    query = f"SELECT {columns} FROM {db.quote(table)}"
    return db.rows(query + (f" ORDER BY {order}" if order else ""))


def stored_offsets(db: TestDatabase) -> list[tuple[Any, ...]]:
    return db.rows(
        f"SELECT {db.quote('topic')}, {db.quote('partition')}, {db.quote('offset')} "
        f"FROM {db.quote('__connect_offsets')}"
    )
