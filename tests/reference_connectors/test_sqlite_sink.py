"""SqliteSinkConnector and its task, driven directly (no worker): DDL, schema checks, errors."""

from __future__ import annotations

import datetime as dt
import decimal
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from cdk import (
    ConfigException,
    ConnectException,
    DataException,
    Decimal,
    RetriableException,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
)
from harness import default_sink_value, default_sink_value_schema
from reference_connectors.sqlite import SqliteSinkConnector, SqliteSinkTask
from reference_connectors.sqlite.certify import SqliteSinkDriver
from tests._contexts import StubSinkTaskContext

TOPIC = "orders-v1"


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[SqliteSinkDriver]:
    d = SqliteSinkDriver(tmp_path)
    d.setup()
    yield d
    d.teardown()


def _stored(driver: SqliteSinkDriver) -> list[int]:
    """The ids in the sink's database, sorted (with duplicates)."""
    return sorted(cast(int, i) for i in driver.read_back())


def _task(driver: SqliteSinkDriver, **extra: str) -> SqliteSinkTask:
    connector = SqliteSinkConnector()
    connector.start({**driver.example_config(TOPIC), **extra})
    (config,) = connector.task_configs(1)
    task = SqliteSinkTask()
    task.initialize(StubSinkTaskContext())
    task.start(config)
    return task


SCHEMA = default_sink_value_schema()


def _record(
    record_id: int, schema: Schema = SCHEMA, *, offset: int | None = None, **changes: Any
) -> SinkRecord:
    value = default_sink_value(record_id, schema)
    for name, changed in changes.items():
        value.put(name, changed)
    return SinkRecord(
        TOPIC,
        0,
        Schema.INT64_SCHEMA,
        record_id,
        schema,
        value,
        record_id if offset is None else offset,
    )


def _evolved(schema: Schema, *, add: dict[str, Schema] | None = None, drop: str = "") -> Schema:
    builder = SchemaBuilder.struct().name("cdk.certify.Record")
    for field in schema.fields:
        if field.name != drop:
            builder.field(field.name, field.schema)
    for name, field_schema in (add or {}).items():
        builder.field(name, field_schema)
    return builder.build()


def _table_sql(driver: SqliteSinkDriver, table: str = TOPIC) -> str:
    with sqlite3.connect(driver.database.path) as db:
        row = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    db.close()
    return str(row[0]) if row else ""


def test_auto_create_builds_the_table_and_values_round_trip(driver: SqliteSinkDriver) -> None:
    task = _task(driver)
    records = [_record(i) for i in range(1, 6)]
    task.put(records)
    assert _table_sql(driver) == (
        'CREATE TABLE "orders-v1" ("id" INTEGER NOT NULL, "name" TEXT NOT NULL, '
        '"amount" DECIMAL_TEXT(2), "created" TIMESTAMP, "active" BOOLEAN, "score" REAL, '
        'PRIMARY KEY ("id"))'
    )
    stored = driver.read_values()
    for record in records:
        assert isinstance(record.value, Struct)
        assert dict(stored[record.key]) == record.value.to_dict()
    with sqlite3.connect(driver.database.path) as db:
        raw = db.execute('SELECT amount, created, active FROM "orders-v1" WHERE id = 1').fetchone()
    db.close()
    assert raw == ("0.08", "2026-01-01T00:01:01.001+00:00", 0)  # exact decimal text, ISO UTC
    task.stop()


def test_upserts_make_redelivery_idempotent(driver: SqliteSinkDriver) -> None:
    task = _task(driver)
    batch = [_record(i) for i in range(1, 4)]
    task.put(batch)
    task.put(batch)  # redelivered after a crash
    task.put([_record(2, name="renamed")])
    assert _stored(driver) == [1, 2, 3]
    assert driver.read_values()[2]["name"] == "renamed"
    task.stop()


def test_insert_mode_fails_on_a_duplicate_with_table_and_database(
    driver: SqliteSinkDriver,
) -> None:
    task = _task(driver, **{"insert.mode": "insert"})
    task.put([_record(1)])
    with pytest.raises(ConnectException, match="UNIQUE constraint failed") as info:
        task.put([_record(2), _record(1)])
    assert '"orders-v1"' in str(info.value)
    assert str(driver.database.path) in str(info.value)
    assert _stored(driver) == [1]  # the batch is all or nothing
    task.stop()


def test_newer_schema_adds_a_column_and_older_schema_leaves_it_null(
    driver: SqliteSinkDriver,
) -> None:
    task = _task(driver)
    task.put([_record(1)])
    newer = _evolved(SCHEMA, add={"note": Schema.OPTIONAL_STRING_SCHEMA})
    task.put([_record(2, newer)])
    older = _evolved(SCHEMA, drop="score")
    task.put([_record(3, older)])
    values = driver.read_values()
    assert values[2]["note"] == "note-2"
    assert values[1]["note"] is None
    assert values[3]["score"] is None
    assert values[3]["note"] is None
    assert values[3]["name"] == "name-3"
    task.stop()


def test_auto_evolve_off_names_the_missing_field(driver: SqliteSinkDriver) -> None:
    task = _task(driver, **{"auto.evolve": "false"})
    task.put([_record(1)])
    newer = _evolved(SCHEMA, add={"note": Schema.OPTIONAL_STRING_SCHEMA})
    with pytest.raises(DataException, match=r"'note' and auto.evolve=false") as info:
        task.put([_record(2, newer)])
    assert info.value.field == "note"
    assert _stored(driver) == [1]
    task.stop()


def test_incompatible_field_type_fails_with_coordinates_and_writes_nothing(
    driver: SqliteSinkDriver,
) -> None:
    task = _task(driver)
    task.put([_record(1)])
    bad = (
        SchemaBuilder.struct()
        .field("id", Schema.STRING_SCHEMA)
        .field("name", Schema.STRING_SCHEMA)
        .build()
    )
    bad_record = SinkRecord(
        TOPIC, 3, None, None, bad, Struct(bad).put("id", "7").put("name", "x"), 42
    )
    with pytest.raises(DataException) as info:
        task.put([_record(2), bad_record])
    message = str(info.value)
    assert "topic 'orders-v1' partition 3 offset 42" in message
    assert "field 'id'" in message
    assert "expected INT64, got STRING" in message
    assert info.value.field == "id"
    assert _stored(driver) == [1]  # neither the bad row nor its batch
    task.stop()


@pytest.mark.parametrize(
    ("field_schema", "value", "expected"),
    [
        (Decimal.builder(3).optional().build(), decimal.Decimal("1.234"), "Decimal(scale=2)"),
        (Schema.OPTIONAL_STRING_SCHEMA, "1.00", "Decimal(scale=2)"),
        (Schema.OPTIONAL_INT64_SCHEMA, 1, "Decimal(scale=2)"),
    ],
)
def test_decimal_columns_refuse_other_types(
    driver: SqliteSinkDriver, field_schema: Schema, value: Any, expected: str
) -> None:
    task = _task(driver)
    task.put([_record(1)])
    schema = _evolved(SCHEMA, drop="amount", add={"amount": field_schema})
    with pytest.raises(DataException, match=re.escape(f"expected {expected}, got")):
        task.put([_record(2, schema, amount=value)])
    task.stop()


def test_missing_required_column_and_null_key_are_data_errors(driver: SqliteSinkDriver) -> None:
    task = _task(driver)
    task.put([_record(1)])
    without_name = _evolved(SCHEMA, drop="name")
    with pytest.raises(DataException, match=r"column 'name' .* is NOT NULL.*required field"):
        task.put([_record(2, without_name)])
    optional_id = _evolved(SCHEMA, drop="id", add={"id": Schema.OPTIONAL_INT64_SCHEMA})
    with pytest.raises(DataException, match="field 'id' is null"):
        task.put([_record(3, optional_id, id=None)])
    assert _stored(driver) == [1]
    task.stop()


def test_schemaless_and_non_struct_values_are_refused_clearly(driver: SqliteSinkDriver) -> None:
    task = _task(driver)
    schemaless = SinkRecord(TOPIC, 0, None, 1, None, {"id": 1, "name": "x"}, 5)
    with pytest.raises(DataException, match=r"no value schema.*schemas\.enable=true"):
        task.put([schemaless])
    text = SinkRecord(TOPIC, 0, None, 1, Schema.STRING_SCHEMA, "hello", 6)
    with pytest.raises(DataException, match="STRING value; the SQLite sink writes STRUCT"):
        task.put([text])
    assert _stored(driver) == []
    task.stop()


def test_tombstones_fail_unless_deletes_are_enabled(driver: SqliteSinkDriver) -> None:
    task = _task(driver)
    with pytest.raises(DataException, match=r"tombstone.*delete.enabled=true"):
        task.put([SinkRecord(TOPIC, 0, Schema.INT64_SCHEMA, 1, None, None, 0)])
    task.stop()
    task = _task(driver, **{"pk.mode": "record_key", "delete.enabled": "true"})
    task.put([_record(i) for i in (1, 2, 3)])
    task.put([SinkRecord(TOPIC, 0, Schema.INT64_SCHEMA, 2, None, None, 9)])
    assert _stored(driver) == [1, 3]
    task.stop()


def test_struct_record_keys_give_a_composite_primary_key(driver: SqliteSinkDriver) -> None:
    key_schema = (
        SchemaBuilder.struct()
        .field("region", Schema.STRING_SCHEMA)
        .field("id", Schema.INT32_SCHEMA)
    ).build()
    value_schema = SchemaBuilder.struct().field("qty", Schema.INT32_SCHEMA).build()

    def record(region: str, record_id: int, qty: int) -> SinkRecord:
        key = Struct(key_schema).put("region", region).put("id", record_id)
        return SinkRecord(
            TOPIC, 0, key_schema, key, value_schema, Struct(value_schema).put("qty", qty), qty
        )

    task = _task(driver, **{"pk.mode": "record_key", "pk.fields": ""})
    task.put([record("eu", 1, 5), record("us", 1, 6), record("eu", 1, 7)])
    assert 'PRIMARY KEY ("region", "id")' in _table_sql(driver)
    with sqlite3.connect(driver.database.path) as db:
        rows = db.execute('SELECT region, id, qty FROM "orders-v1" ORDER BY region').fetchall()
    db.close()
    assert rows == [("eu", 1, 7), ("us", 1, 6)]
    task.stop()


def test_locked_database_is_retriable_with_backoff_and_loses_nothing(
    driver: SqliteSinkDriver,
) -> None:
    task = _task(driver)
    task.put([_record(1)])
    with driver.outage():
        with pytest.raises(RetriableException, match="locked"):
            task.put([_record(2)])
        assert isinstance(task.context, StubSinkTaskContext)
        assert task.context.timeouts == [200]  # retry.backoff.ms of the example config
    task.put([_record(2)])  # the framework redelivers the batch
    assert _stored(driver) == [1, 2]
    task.stop()


def test_broken_database_is_a_connect_exception_naming_it(driver: SqliteSinkDriver) -> None:
    task = _task(driver)
    task.put([_record(1)])
    driver.break_external_system()
    with pytest.raises(ConnectException, match="not a database") as info:
        task.put([_record(2)])
    assert not isinstance(info.value, RetriableException)
    assert '"orders-v1"' in str(info.value)
    assert str(driver.database.path) in str(info.value)
    task.stop()


def test_missing_table_without_auto_create_and_mismatched_primary_key(
    driver: SqliteSinkDriver,
) -> None:
    task = _task(driver, **{"auto.create": "false"})
    with pytest.raises(ConnectException, match=r"does not exist .* auto.create=false"):
        task.put([_record(1)])
    task.stop()
    with sqlite3.connect(driver.database.path) as db:
        db.execute(
            'CREATE TABLE "orders-v1" (id INTEGER, name TEXT NOT NULL, seq INTEGER PRIMARY KEY)'
        )
    db.close()
    task = _task(driver)
    with pytest.raises(
        ConnectException, match=r"UNIQUE index on \['id'\].*primary key is \['seq'\]"
    ):
        task.put([_record(1)])
    task.stop()


def test_connector_config_checks_span_keys(tmp_path: Path) -> None:
    connector = SqliteSinkConnector()
    config = {
        "connection.url": str(tmp_path / "out.db"),
        "pk.mode": "none",
        "delete.enabled": "true",
    }
    errors = {v.name: v.error_messages for v in connector.validate(config).config_values}
    assert "insert.mode=upsert needs a primary key" in errors["insert.mode"][0]
    assert "delete.enabled=true needs pk.mode=record_key" in errors["delete.enabled"][0]
    with pytest.raises(ConfigException, match=r"insert.mode"):
        connector.start(config)
    missing_dir = str(tmp_path / "no" / "such" / "dir" / "out.db")
    errors = {
        v.name: v.error_messages
        for v in connector.validate({"connection.url": missing_dir}).config_values
    }
    assert "does not exist" in errors["connection.url"][0]
    assert [len(connector.task_configs(n)) for n in range(1, 4)] == [1, 2, 3]
    assert not any(
        v.error_messages
        for v in connector.validate({"connection.url": str(tmp_path / "x.db")}).config_values
    )


def test_timestamps_with_offsets_are_stored_in_utc(driver: SqliteSinkDriver) -> None:
    task = _task(driver)
    local = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    task.put([_record(1, created=local)])
    assert driver.read_values()[1]["created"] == local
    with sqlite3.connect(driver.database.path) as db:
        (text,) = db.execute('SELECT created FROM "orders-v1"').fetchone()
    db.close()
    assert text == "2026-05-01T10:00:00.000+00:00"
    task.stop()
