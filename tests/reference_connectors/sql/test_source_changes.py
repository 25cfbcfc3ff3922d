"""The SQL source while tables change: ALTER TABLE, tables created and dropped during a run."""

from __future__ import annotations

import datetime as dt

import pytest

from tests._wait import wait_until
from tests.reference_connectors.sql._databases import TestDatabase
from tests.reference_connectors.sql._support import ddl, drain, insert, start_connector, start_task

T0 = dt.datetime(2026, 1, 1, 10, 0, 0)


def test_an_added_column_gives_a_new_schema_version(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"))
    insert(db, "items", [(1, "a", "1.00", T0)])
    task = start_task(db, ["items"], mode="incrementing", **{"incrementing.column.name": "id"})
    try:
        [first] = drain(task)
        assert first.value_schema.version == 1
        assert "note" not in [f.name for f in first.value_schema.fields]
        db.execute(f"ALTER TABLE {db.quote('items')} ADD COLUMN note VARCHAR(20)")
        insert(db, "items", [(2, "b", "2.00", T0)])
        db.execute("UPDATE items SET note = 'hello' WHERE id = 2")
        [second] = drain(task)
        assert second.value_schema.version == 2
        assert second.value_schema.field("note").schema.optional
        assert second.value.get("note") == "hello"
        second.value.validate()
        insert(db, "items", [(3, "c", "3.00", T0)])
        [third] = drain(task)
        assert third.value_schema.version == 2  # unchanged columns: same version
    finally:
        task.stop()


def test_a_table_dropped_under_a_running_task_is_left_out(
    sql_database: TestDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    db = sql_database
    db.execute(ddl(db, "keep"), ddl(db, "gone"))
    insert(db, "keep", [(1, "a", "1.00", T0)])
    insert(db, "gone", [(1, "a", "1.00", T0)])
    task = start_task(
        db, ["gone", "keep"], mode="incrementing", **{"incrementing.column.name": "id"}
    )
    try:
        assert len(drain(task)) + len(drain(task)) == 2
        db.execute(f"DROP TABLE {db.quote('gone')}")
        insert(db, "keep", [(2, "b", "2.00", T0)])
        records = []
        for _ in range(20):
            records.extend(task.poll() or [])
        assert [r.value.get("id") for r in records] == [2]
        assert any("gone was dropped" in r.getMessage() for r in caplog.records)
    finally:
        task.stop()


def test_the_monitor_notices_created_and_dropped_tables(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "first"))
    connector, context = start_connector(db, mode="bulk", **{"table.poll.interval.ms": "50"})
    try:
        assert [c["tables"] for c in connector.task_configs(4)] == ['["first"]']
        db.execute(ddl(db, "second"))
        wait_until(lambda: context.reconfigurations >= 1, 20, message="a reconfiguration")
        configs = connector.task_configs(4)
        assert sorted(c["tables"] for c in configs) == ['["first"]', '["second"]']
        db.execute(f"DROP TABLE {db.quote('first')}")
        wait_until(lambda: context.reconfigurations >= 2, 20, message="a second one")
        assert [c["tables"] for c in connector.task_configs(4)] == ['["second"]']
        assert context.errors == []
    finally:
        connector.stop()


def test_whitelist_and_blacklist_pick_the_tables(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "a"), ddl(db, "b"), ddl(db, "c"))
    connector, _ = start_connector(db, mode="bulk", **{"table.whitelist": "a,c,later"})
    try:
        assert [c["tables"] for c in connector.task_configs(1)] == ['["a", "c"]']
    finally:
        connector.stop()
    connector, _ = start_connector(db, mode="bulk", **{"table.blacklist": "a"})
    try:
        assert sorted(c["tables"] for c in connector.task_configs(2)) == ['["b"]', '["c"]']
    finally:
        connector.stop()
