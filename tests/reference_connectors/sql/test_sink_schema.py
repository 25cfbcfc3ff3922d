"""The SQL sink's tables follow the records' schemas: auto.create, auto.evolve, projection."""

from __future__ import annotations

import pytest

from cdk import ConnectException, DataException, Schema, SchemaBuilder
from tests.reference_connectors.sql._databases import TestDatabase
from tests.reference_connectors.sql._sink_support import (
    Context,
    Reporter,
    evolved,
    record,
    rows,
    start_task,
    stored_offsets,
)

TOPIC = "orders"


def test_schema_evolution_during_a_run_adds_nullable_columns(sql_database: TestDatabase) -> None:
    """New optional and defaulted fields become columns; older records leave them null."""
    newer = evolved(
        add={
            "note": Schema.OPTIONAL_STRING_SCHEMA,
            "qty": SchemaBuilder.int32().default_value(7).build(),
        }
    )
    task, _ = start_task(sql_database, auto_evolve="true")
    try:
        task.put([record(1), record(2)])
        task.put([record(3, newer, note="hello", qty=3)])
        task.put([record(4, offset=4)])  # an older producer: no note, no qty
    finally:
        task.stop()
    stored = rows(sql_database, columns="id, note, qty", order="id")
    assert stored[:2] == [(1, None, 7), (2, None, 7)]  # the DEFAULT filled existing rows
    assert stored[2] == (3, "hello", 3)
    assert stored[3][:2] == (4, None)


def test_an_incompatible_change_is_refused_naming_the_field_and_the_table(
    sql_database: TestDatabase,
) -> None:
    changed = evolved(drop="name", add={"name": Schema.INT64_SCHEMA})
    required = evolved(add={"code": Schema.STRING_SCHEMA})
    task, _ = start_task(sql_database, auto_evolve="true")
    try:
        task.put([record(1)])
        refused = r"offset 2: field 'name' is INT64, but column"
        with pytest.raises(DataException, match=refused) as e:
            task.put([record(2, changed, name=5)])
        assert "table 'orders'" in str(e.value)
        with pytest.raises(DataException, match=r"field 'code' is required and has no default"):
            task.put([record(3, required, code="x")])
        assert isinstance(e.value, ConnectException)
    finally:
        task.stop()
    assert [r[0] for r in rows(sql_database, columns="id")] == [1]  # nothing of them written
    assert stored_offsets(sql_database) == [(TOPIC, 0, 2)]


def test_without_auto_evolve_or_auto_create_the_error_names_what_is_missing(
    sql_database: TestDatabase,
) -> None:
    task, _ = start_task(sql_database, auto_create="false")
    try:
        with pytest.raises(DataException, match=r"table 'orders' does not exist and auto.create"):
            task.put([record(1)])
    finally:
        task.stop()
    task, _ = start_task(sql_database)
    try:
        task.put([record(1)])
        newer = evolved(add={"note": Schema.OPTIONAL_STRING_SCHEMA})
        with pytest.raises(DataException, match=r"no column for field 'note' and auto.evolve"):
            task.put([record(2, newer, note="x")])
    finally:
        task.stop()


def test_older_schema_versions_are_projected_onto_the_newest(sql_database: TestDatabase) -> None:
    """A v1 record after v2 ones is projected: the field it lacks gets v2's default."""
    v1 = evolved(version=1)
    v2 = evolved(add={"tier": SchemaBuilder.string().optional().default_value("gold").build()})
    v2 = evolved(v2, version=2)
    task, _ = start_task(sql_database, auto_evolve="true")
    try:
        task.put([record(1, v2, tier="silver")])
        task.put([record(2, v1)])
    finally:
        task.stop()
    assert rows(sql_database, columns="id, tier", order="id") == [(1, "silver"), (2, "gold")]


def test_bad_records_go_to_the_reporter_and_the_rest_is_written(
    sql_database: TestDatabase,
) -> None:
    reporter = Reporter()
    changed = evolved(drop="id", add={"id": Schema.STRING_SCHEMA})
    task, _ = start_task(
        sql_database,
        Context(reporter),
        insert_mode="insert",
        pk_mode="record_value",
        pk_fields="id",
    )
    try:
        task.put([record(1), record(2)])
        # a schema the table refuses, and a duplicate key the database refuses
        task.put([record(3), record(4, changed, id="x"), record(1, offset=5), record(6)])
    finally:
        task.stop()
    assert [r[0] for r in rows(sql_database, columns="id", order="id")] == [1, 2, 3, 6]
    reported = {r.kafka_offset: str(e) for r, e in reporter.reported}
    assert set(reported) == {4, 5}
    assert "field 'id' is STRING" in reported[4]
    assert "offset 5" in reported[5]
    assert stored_offsets(sql_database) == [(TOPIC, 0, 7)]


def test_a_column_type_the_sink_cannot_write_is_named(sql_database: TestDatabase) -> None:
    db = sql_database
    if db.dialect == "postgresql":
        db.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, name INTEGER[])")
        expected = r"column 'name' of table 'orders' has the type INTEGER\[\]"
    else:
        kind = "JSON_ARRAY_OF_NOTHING" if db.dialect == "sqlite" else "GEOMETRY"
        db.execute(f"CREATE TABLE orders (id BIGINT PRIMARY KEY, name {kind})")
        expected = rf"column 'name' of table 'orders' has the type {kind}"
    schema = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA)
    schema = schema.field("name", Schema.STRING_SCHEMA).build()
    task, _ = start_task(db)
    try:
        with pytest.raises(DataException, match=expected):
            task.put([record(1, schema)])
    finally:
        task.stop()
