"""The SQL sink's insert and pk modes, deletes and offsets, on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from cdk import DataException, Date, Schema, SchemaBuilder, Time, Timestamp, TopicPartition
from tests.reference_connectors.sql._databases import TestDatabase
from tests.reference_connectors.sql._sink_support import (
    TOPIC,
    record,
    rows,
    start_task,
    stored_offsets,
    struct_key,
    tombstone,
)

_KAFKA_PK = "__connect_topic, __connect_partition, __connect_offset"


@pytest.mark.parametrize("pk_mode", ["none", "kafka", "record_key", "record_value"])
def test_insert_mode_writes_each_record_once_per_pk_mode(
    sql_database: TestDatabase, pk_mode: str
) -> None:
    pk_fields = {"record_key": "id", "record_value": "id"}.get(pk_mode, "")
    task, _ = start_task(sql_database, pk_mode=pk_mode, pk_fields=pk_fields)
    try:
        task.put([record(i) for i in range(5)])
        task.put([record(i) for i in range(5, 8)])
    finally:
        task.stop()
    db = sql_database
    stored = rows(db, columns="id, name, amount, active", order="id")
    assert [r[0] for r in stored] == list(range(8))
    assert stored[3][1] == "name-3"
    assert decimal.Decimal(str(stored[3][2])) == decimal.Decimal("0.22")
    assert stored[0][2] is None  # every fifth amount is null
    assert [bool(r[3]) for r in stored[:2]] == [True, False]
    if pk_mode == "kafka":
        coordinates = rows(db, columns=_KAFKA_PK, order="__connect_offset")
        assert coordinates[2] == (TOPIC, 0, 2)
    assert stored_offsets(db) == [(TOPIC, 0, 8)]


@pytest.mark.parametrize("pk_mode", ["kafka", "record_key", "record_value"])
def test_upsert_overwrites_the_row_with_the_same_key(
    sql_database: TestDatabase, pk_mode: str
) -> None:
    pk_fields = {"record_key": "id", "record_value": "id"}.get(pk_mode, "")
    task, _ = start_task(sql_database, insert_mode="upsert", pk_mode=pk_mode, pk_fields=pk_fields)
    try:
        task.put([record(i) for i in range(4)])
        # the same ids again, with new names, at later offsets
        task.put([record(i, name=f"renamed-{i}", offset=4 + i) for i in range(4)])
    finally:
        task.stop()
    stored = rows(sql_database, columns="id, name", order="id, name")
    if pk_mode == "kafka":  # keyed by coordinates: every record is a row of its own
        assert stored == sorted(
            [(i, f"name-{i}") for i in range(4)] + [(i, f"renamed-{i}") for i in range(4)]
        )
    else:
        assert stored == [(i, f"renamed-{i}") for i in range(4)]


def test_update_mode_changes_existing_rows_only(sql_database: TestDatabase) -> None:
    task, _ = start_task(sql_database, insert_mode="upsert", pk_mode="record_key", pk_fields="id")
    task.put([record(i) for i in range(3)])
    task.stop()
    task, _ = start_task(sql_database, insert_mode="update", pk_mode="record_key", pk_fields="id")
    try:
        task.put([record(1, name="one", offset=3), record(7, name="seven", offset=4)])
    finally:
        task.stop()
    assert rows(sql_database, columns="id, name", order="id") == [
        (0, "name-0"),
        (1, "one"),
        (2, "name-2"),
    ]


def test_tombstones_delete_rows_when_enabled(sql_database: TestDatabase) -> None:
    task, _ = start_task(
        sql_database,
        insert_mode="upsert",
        pk_mode="record_key",
        pk_fields="id",
        delete_enabled="true",
    )
    try:
        task.put([record(i) for i in range(4)])
        # a delete and a re-insert in one batch keep their order
        task.put([tombstone(1, offset=4), tombstone(2, offset=5), record(2, offset=6)])
    finally:
        task.stop()
    assert [r[0] for r in rows(sql_database, columns="id", order="id")] == [0, 2, 3]
    assert stored_offsets(sql_database) == [(TOPIC, 0, 7)]


def test_tombstones_are_skipped_when_deletes_are_off(sql_database: TestDatabase) -> None:
    task, _ = start_task(sql_database)
    try:
        task.put([record(0), tombstone(0, offset=1), record(1, offset=2)])
    finally:
        task.stop()
    assert [r[0] for r in rows(sql_database, columns="id", order="id")] == [0, 1]
    assert stored_offsets(sql_database) == [(TOPIC, 0, 3)]


def test_struct_keys_give_a_composite_primary_key(sql_database: TestDatabase) -> None:
    key_schema = (
        SchemaBuilder.struct()
        .field("region", Schema.STRING_SCHEMA)
        .field("id", Schema.INT64_SCHEMA)
        .build()
    )
    task, _ = start_task(sql_database, insert_mode="upsert", pk_mode="record_key")
    try:
        batch = [
            record(i, key=struct_key(key_schema, region=r, id=i), key_schema=key_schema, offset=n)
            for n, (r, i) in enumerate([("eu", 1), ("us", 1), ("eu", 2), ("eu", 1)])
        ]
        task.put(batch)
    finally:
        task.stop()
    assert rows(sql_database, columns="region, id", order="region, id") == [
        ("eu", 1),
        ("eu", 2),
        ("us", 1),
    ]


def test_a_primitive_key_needs_one_pk_field(sql_database: TestDatabase) -> None:
    task, _ = start_task(sql_database, pk_mode="record_key")
    try:
        with pytest.raises(DataException, match=r"offset 0: .*pk.fields to exactly one"):
            task.put([record(0)])
    finally:
        task.stop()


def test_redelivered_records_the_database_holds_are_not_written_again(
    sql_database: TestDatabase,
) -> None:
    """Offsets in the database: a new task seeds its consumer from them and skips redeliveries."""
    task, _ = start_task(sql_database)
    task.put([record(i) for i in range(5)])
    task.stop()
    task, context = start_task(sql_database)
    try:
        partition = TopicPartition(TOPIC, 0)
        task.open({partition, TopicPartition(TOPIC, 1)})
        assert context.offsets == {partition: 5}  # partition 1 has no stored offset
        # Kafka never saw the commit: the same records come again, then new ones.
        task.put([record(i) for i in range(3, 8)])
    finally:
        task.stop()
    assert [r[0] for r in rows(sql_database, columns="id", order="id")] == list(range(8))
    assert stored_offsets(sql_database) == [(TOPIC, 0, 8)]


def test_values_of_every_type_and_table_name_format(sql_database: TestDatabase) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("small", Schema.INT8_SCHEMA)
        .field("f32", Schema.OPTIONAL_FLOAT32_SCHEMA)
        .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
        .field("day", Date.builder().optional().build())
        .field("at", Time.builder().optional().build())
        .field("ts", Timestamp.builder().optional().build())
        .build()
    )
    when = dt.datetime(2026, 3, 1, 12, 30, 15, 123000, tzinfo=dt.timezone.utc)
    task, _ = start_task(sql_database, table_name_format="kafka_${topic}")
    try:
        task.put([record(1, schema, small=-3, f32=1.5, blob=b"\x00\xff", ts=when)])
    finally:
        task.stop()
    (row,) = rows(sql_database, "kafka_orders", "id, small, f32, " + sql_database.quote("blob"))
    assert (row[0], row[1], row[2]) == (1, -3, 1.5)
    assert bytes(row[3]) == b"\x00\xff"
    (stamp,) = rows(sql_database, "kafka_orders", "ts")[0]
    if isinstance(stamp, str):  # SQLite: ISO text in UTC
        assert stamp == "2026-03-01T12:30:15.123+00:00"
    else:
        assert stamp == when.replace(tzinfo=None)
