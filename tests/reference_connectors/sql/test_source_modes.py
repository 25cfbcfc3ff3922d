"""The SQL source's modes on SQLite, PostgreSQL and MariaDB, its task driven directly."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from cdk import Struct
from tests.reference_connectors.sql._databases import TestDatabase
from tests.reference_connectors.sql._support import ddl, drain, insert, start_task

T0 = dt.datetime(2026, 1, 1, 10, 0, 0)


def _rows(first: int, count: int, at: dt.datetime = T0) -> list[tuple[int, str, str, dt.datetime]]:
    return [
        (i, f"n{i}", f"{i}.25", at + dt.timedelta(seconds=i)) for i in range(first, first + count)
    ]


def _ids(records: list) -> list[int]:
    return [r.value.get("id") for r in records]


def test_bulk_reads_the_whole_table_at_every_round(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", _rows(1, 3))
    task = start_task(db, ["items"], mode="bulk")
    try:
        first = drain(task)
        assert sorted(_ids(first)) == [1, 2, 3]
        assert first[0].source_partition == {"table": "items"}
        assert first[0].source_offset is None
        assert first[0].topic == "db-items"
        insert(db, "items", _rows(4, 1))
        assert sorted(_ids(drain(task))) == [1, 2, 3, 4]
    finally:
        task.stop()


def test_incrementing_reads_new_rows_in_batches_with_offsets(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", _rows(1, 5))
    task = start_task(
        db,
        ["items"],
        mode="incrementing",
        **{"incrementing.column.name": "id", "batch.max.rows": "2"},
    )
    try:
        first = task.poll() or []
        assert _ids(first) == [1, 2]
        assert first[1].source_offset == {"incrementing": 2}
        assert _ids(drain(task)) == [3, 4, 5]
        insert(db, "items", _rows(6, 2))
        records = drain(task)
        assert _ids(records) == [6, 7]
        value = records[0].value
        assert isinstance(value, Struct)
        value.validate()
        assert value.get("name") == "n6"
        assert value.get("amount") == decimal.Decimal("6.25")
        assert value.get("updated") == (T0 + dt.timedelta(seconds=6)).replace(
            tzinfo=dt.timezone.utc
        )
        assert value.get("day") == dt.date(2026, 1, 7)
        assert value.get("at") == dt.time(10, 6)
        schema = records[0].value_schema
        assert schema.name == "items"
        assert schema.version == 1
        assert schema.field("amount").schema.name == "org.apache.kafka.connect.data.Decimal"
        assert not schema.field("name").schema.optional
        assert schema.field("amount").schema.optional
    finally:
        task.stop()


def test_incrementing_resumes_after_the_stored_offset(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", _rows(1, 5))
    task = start_task(
        db,
        ["items"],
        {"items": {"incrementing": 3}},
        mode="incrementing",
        **{"incrementing.column.name": "id"},
    )
    try:
        assert _ids(drain(task)) == [4, 5]
    finally:
        task.stop()


def test_timestamp_reads_new_and_updated_rows(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", _rows(1, 3))
    task = start_task(db, ["items"], mode="timestamp", **{"timestamp.column.name": "updated"})
    try:
        records = drain(task)
        assert _ids(records) == [1, 2, 3]
        last = T0 + dt.timedelta(seconds=3)
        epoch_ms = int(last.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
        assert records[-1].source_offset == {"timestamp": epoch_ms, "timestamp_nanos": 0}
        later = T0 + dt.timedelta(minutes=5)
        stamp = later if db.dialect != "sqlite" else later.strftime("%Y-%m-%d %H:%M:%S.000")
        db.execute("UPDATE items SET name = 'changed', updated = :u WHERE id = 2", u=stamp)
        again = drain(task)
        assert _ids(again) == [2]
        assert again[0].value.get("name") == "changed"
    finally:
        task.stop()


def test_timestamp_delay_holds_back_recent_rows(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    insert(db, "items", [(1, "old", "1.00", T0), (2, "recent", "2.00", now)])
    task = start_task(
        db,
        ["items"],
        mode="timestamp",
        **{"timestamp.column.name": "updated", "timestamp.delay.interval.ms": "3600000"},
    )
    try:
        assert _ids(drain(task)) == [1]
    finally:
        task.stop()


def test_timestamp_incrementing_never_skips_rows_of_one_instant(
    sql_database: TestDatabase,
) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", [(i, f"n{i}", "1.00", T0) for i in range(1, 6)])
    task = start_task(
        db,
        ["items"],
        mode="timestamp+incrementing",
        **{
            "timestamp.column.name": "updated",
            "incrementing.column.name": "id",
            "batch.max.rows": "2",
        },
    )
    try:
        assert _ids(drain(task)) == [1, 2, 3, 4, 5]
        insert(db, "items", [(6, "n6", "1.00", T0)])  # same instant, larger id
        records = drain(task)
        assert _ids(records) == [6]
        assert records[0].source_offset["incrementing"] == 6
        assert set(records[0].source_offset) == {"timestamp", "timestamp_nanos", "incrementing"}
    finally:
        task.stop()


def test_timestamp_initial_skips_older_rows(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", _rows(1, 4))
    start = T0.replace(tzinfo=dt.timezone.utc) + dt.timedelta(seconds=2, milliseconds=500)
    task = start_task(
        db,
        ["items"],
        mode="timestamp",
        **{
            "timestamp.column.name": "updated",
            "timestamp.initial": str(int(start.timestamp() * 1000)),
        },
    )
    try:
        assert _ids(drain(task)) == [3, 4]
    finally:
        task.stop()


def test_query_mode_is_one_partition_with_the_modes_condition(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", _rows(1, 4))
    task = start_task(
        db,
        [],
        mode="incrementing",
        query="SELECT id, name FROM items WHERE id <> 2",
        **{"incrementing.column.name": "id", "topic.prefix": "picked"},
    )
    try:
        records = drain(task)
        assert _ids(records) == [1, 3, 4]
        assert records[0].topic == "picked"
        assert records[0].source_partition == {"query": "query"}
        assert records[-1].source_offset == {"incrementing": 4}
        assert records[0].value.get("name") == "n1"
        insert(db, "items", _rows(5, 1))
        assert _ids(drain(task)) == [5]
    finally:
        task.stop()


@pytest.mark.parametrize("sql_database", ["postgresql", "mariadb"], indirect=True)
def test_numeric_mapping_best_fit(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(
        "CREATE TABLE nums (id INTEGER NOT NULL PRIMARY KEY, small NUMERIC(4,0), "
        "big NUMERIC(18,0), frac NUMERIC(10,3), huge NUMERIC(30,2))",
        "INSERT INTO nums VALUES (1, 12, 123456789012345678, 1.5, 12345678901234567890.12)",
    )
    for mapping, expected in {
        "none": ("Decimal", "Decimal", "Decimal", "Decimal"),
        "precision_only": ("INT16", "INT64", "Decimal", "Decimal"),
        "best_fit": ("INT16", "INT64", "FLOAT64", "Decimal"),
        "best_fit_eager_double": ("INT16", "INT64", "FLOAT64", "FLOAT64"),
    }.items():
        task = start_task(db, ["nums"], mode="bulk", **{"numeric.mapping": mapping})
        try:
            [record] = drain(task)
        finally:
            task.stop()
        schema = record.value_schema
        kinds = tuple(
            "Decimal" if schema.field(f).schema.name else schema.field(f).schema.type.name
            for f in ("small", "big", "frac", "huge")
        )
        assert kinds == expected, mapping
        value = record.value
        assert int(value.get("big")) == 123456789012345678
        assert float(value.get("frac")) == 1.5


def test_query_mode_with_timestamp_and_incrementing(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", [(i, f"n{i}", "1.00", T0) for i in range(1, 4)])
    task = start_task(
        db,
        [],
        mode="timestamp+incrementing",
        query="SELECT id, name, updated FROM items",
        **{"incrementing.column.name": "id", "timestamp.column.name": "updated"},
    )
    try:
        records = drain(task)
        assert _ids(records) == [1, 2, 3]
        stamp = T0.replace(tzinfo=dt.timezone.utc)
        assert records[0].value.get("updated") == stamp
        assert records[-1].source_offset == {
            "timestamp": int(stamp.timestamp() * 1000),
            "timestamp_nanos": 0,
            "incrementing": 3,
        }
        insert(db, "items", [(4, "n4", "1.00", T0)])
        assert _ids(drain(task)) == [4]
    finally:
        task.stop()


def test_a_timestamp_column_must_hold_timestamps(sql_database: TestDatabase) -> None:
    from cdk import ConnectException

    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", _rows(1, 1))
    task = start_task(db, ["items"], mode="timestamp", **{"timestamp.column.name": "name"})
    try:
        with pytest.raises(ConnectException, match=r"items\.name .*not a timestamp column"):
            task.poll()
    finally:
        task.stop()
