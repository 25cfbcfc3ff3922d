"""SqliteSourceConnector and its task, driven directly (no worker): offsets, schemas, errors."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from cdk import (
    ConfigException,
    ConnectException,
    RetriableException,
    Schema,
    SourceRecord,
    Struct,
)
from cdk.api import OffsetStorageReader, SourceConnectorContext, SourceTaskContext
from reference_connectors.sqlite import SqliteSourceConnector, SqliteSourceTask
from reference_connectors.sqlite.certify import SqliteSourceDriver
from tests._wait import wait_until


class _Offsets(OffsetStorageReader):
    def __init__(self, stored: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.stored = dict(stored or {})

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.stored.get(partition["table"])

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.offset(p)) for p in partitions]


class _TaskContext(SourceTaskContext):
    def __init__(self, offsets: _Offsets) -> None:
        self.offsets = offsets

    def configs(self) -> dict[str, str]:
        return {}

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.offsets


class _ConnectorContext(SourceConnectorContext):
    def __init__(self) -> None:
        self.reconfigurations = 0
        self.errors: list[BaseException] = []

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _Offsets()


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[SqliteSourceDriver]:
    d = SqliteSourceDriver(tmp_path)
    d.setup()
    yield d
    d.teardown()


def _config(driver: SqliteSourceDriver, **extra: str) -> dict[str, str]:
    return {**driver.example_config("db-"), "poll.interval.ms": "10", **extra}


def _task(
    driver: SqliteSourceDriver,
    tables: list[str],
    stored: Mapping[str, dict[str, Any]] | None = None,
    extra: Mapping[str, str] | None = None,
) -> SqliteSourceTask:
    task = SqliteSourceTask()
    task.initialize(_TaskContext(_Offsets(stored)))
    task.start({**_config(driver), **(extra or {}), "tables": json.dumps(tables)})
    return task


def _poll(task: SqliteSourceTask) -> list[SourceRecord]:
    return task.poll() or []


def _ids(records: list[SourceRecord]) -> list[int]:
    return [r.key for r in records]


def test_rows_come_in_order_in_batches_with_offsets(driver: SqliteSourceDriver) -> None:
    driver.write_records([1, 2, 3, 4, 5])
    task = _task(driver, ["t0"], extra={"batch.max.rows": "2"})
    assert _ids(_poll(task)) == [1, 2]
    second = _poll(task)
    assert _ids(second) == [3, 4]
    assert _ids(_poll(task)) == [5]
    assert task.poll() is None
    record = second[0]
    assert record.topic == "db-t0"
    assert record.source_partition == {"table": "t0"}
    assert record.source_offset == {"incrementing": 3}
    assert record.key_schema == Schema.INT64_SCHEMA
    value = record.value
    assert isinstance(value, Struct)
    value.validate()
    assert value.to_dict() == {
        "id": 3,
        "name": "name-3",
        "amount": decimal.Decimal("0.22"),
        "created": dt.datetime(2026, 1, 1, 0, 3, 3, 3000, tzinfo=dt.timezone.utc),
        "active": False,
    }
    schema = record.value_schema
    assert schema is not None
    assert schema.name == "t0"
    optional = {f.name: f.schema.optional for f in schema.fields}
    # INTEGER PRIMARY KEY (the rowid) and NOT NULL are required; the rest is nullable.
    assert optional == {
        "id": False,
        "name": False,
        "amount": True,
        "created": True,
        "active": True,
    }
    task.stop()


def test_task_resumes_after_the_stored_offset_and_a_future_offset_emits_nothing(
    driver: SqliteSourceDriver,
) -> None:
    driver.write_records([1, 2, 3, 4], stream=0)
    driver.write_records([5, 6], stream=1)
    task = _task(driver, ["t0", "t1"], {"t0": {"incrementing": 2}, "t1": {"incrementing": 1000}})
    assert _ids(_poll(task)) == [3, 4]
    assert task.poll() is None
    driver.write_records([1001], stream=1)
    assert _ids(_poll(task)) == [1001]
    task.stop()


def test_added_column_is_in_the_schema_on_the_next_poll(driver: SqliteSourceDriver) -> None:
    driver.write_records([1, 2])
    task = _task(driver, ["t0"])
    before = _poll(task)
    assert [f.name for f in before[0].value_schema.fields] == [  # type: ignore[union-attr]
        "id",
        "name",
        "amount",
        "created",
        "active",
    ]
    column = driver.evolve_schema(stream=0)
    driver.write_records([3])
    (after,) = _poll(task)
    assert after.value_schema is not None
    field = after.value_schema.field(column)
    assert field is not None
    assert field.schema == Schema.OPTIONAL_STRING_SCHEMA
    assert after.value.get(column) == f"{column}-3"
    task.stop()


def test_stop_from_another_thread_ends_a_waiting_poll_and_closes(
    driver: SqliteSourceDriver,
) -> None:
    driver.write_records([1])
    task = _task(driver, ["t0"], extra={"poll.interval.ms": "60000"})
    assert _ids(_poll(task)) == [1]
    results: list[Any] = []
    poller = threading.Thread(target=lambda: results.append(task.poll()))
    started = time.monotonic()
    poller.start()
    wait_until(lambda: poller.is_alive(), 5)
    task.stop()
    poller.join(5)
    assert not poller.is_alive()
    assert time.monotonic() - started < 5
    assert results == [None]
    assert task.poll() is None  # stopped: nothing, no error


def test_locked_database_is_retriable_and_nothing_is_lost(driver: SqliteSourceDriver) -> None:
    driver.write_records([1, 2])
    task = _task(driver, ["t0"])
    with driver.outage():
        driver.write_records([3])  # written while the database is locked
        with pytest.raises(RetriableException, match="locked"):
            task.poll()
    assert _ids(_poll(task)) == [1, 2, 3]
    task.stop()


def test_broken_database_fails_with_a_clear_connect_exception(
    driver: SqliteSourceDriver,
) -> None:
    driver.write_records([1])
    task = _task(driver, ["t0"])
    assert _ids(_poll(task)) == [1]
    driver.break_external_system()
    with pytest.raises(ConnectException, match="not a database") as info:
        task.poll()
    assert not isinstance(info.value, RetriableException)
    assert '"t0"' in str(info.value)
    assert str(driver.database.path) in str(info.value)
    task.stop()


def test_table_without_the_incrementing_column_is_named_in_the_error(
    driver: SqliteSourceDriver,
) -> None:
    with sqlite3.connect(driver.database.path) as db:
        db.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, body TEXT)")
        db.execute("CREATE TABLE notes (id TEXT, body TEXT)")
        db.execute("INSERT INTO events VALUES (1, 'a')")
    db.close()
    task = _task(driver, ["events"])
    with pytest.raises(ConnectException, match=r"'events'.*no column 'id'.*incrementing"):
        task.poll()
    task.stop()
    task = _task(driver, ["events"], extra={"incrementing.column.name": "seq"})
    assert _ids(_poll(task)) == [1]
    task.stop()
    task = _task(driver, ["notes"])
    with pytest.raises(ConnectException, match=r"'id' of table 'notes'.*must be an INTEGER"):
        task.poll()
    task.stop()


def test_columns_without_a_connect_type_are_left_out(driver: SqliteSourceDriver) -> None:
    with sqlite3.connect(driver.database.path) as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, anything, price DECIMAL(6,2))")
        db.execute("INSERT INTO t VALUES (1, x'00', '12.30')")
    db.close()
    task = _task(driver, ["t"])
    (record,) = _poll(task)
    assert record.value.to_dict() == {"id": 1, "price": decimal.Decimal("12.30")}
    task.stop()


def test_bad_stored_offset_is_refused(driver: SqliteSourceDriver) -> None:
    with pytest.raises(ConnectException, match="'incrementing': <integer>"):
        _task(driver, ["t0"], {"t0": {"incrementing": "7"}})


def test_connector_validates_and_reports_a_missing_database_on_its_key(tmp_path: Path) -> None:
    connector = SqliteSourceConnector()
    errors = {v.name: v.error_messages for v in connector.validate({}).config_values}
    assert errors["connection.url"]
    assert errors["topic.prefix"]
    missing = str(tmp_path / "nope.db")
    config = {"connection.url": missing, "topic.prefix": "p-", "batch.max.rows": "0"}
    errors = {v.name: v.error_messages for v in connector.validate(config).config_values}
    assert errors["connection.url"] == [
        f"Invalid value {missing} for configuration connection.url: the database file "
        f"{missing} does not exist"
    ]
    assert errors["batch.max.rows"] == [
        "Invalid value 0 for configuration batch.max.rows: Value must be at least 1"
    ]
    assert not errors["topic.prefix"]
    with pytest.raises(ConfigException, match=r"connection.url"):
        connector.start(config)
    assert not (tmp_path / "nope.db").exists()  # never created by a source


@pytest.mark.parametrize("max_tasks", range(1, 9))
def test_task_configs_split_tables_and_never_exceed_max_tasks(
    driver: SqliteSourceDriver, max_tasks: int
) -> None:
    for stream in range(4):
        driver.write_records([stream], stream=stream)
    connector = SqliteSourceConnector()
    connector.initialize(_ConnectorContext())
    connector.start(_config(driver))
    try:
        configs = connector.task_configs(max_tasks)
        assert 1 <= len(configs) <= max_tasks
        tables = [t for c in configs for t in json.loads(c["tables"])]
        assert sorted(tables) == ["t0", "t1", "t2", "t3"]
        assert all(c["topic.prefix"] == "db-" for c in configs)
    finally:
        connector.stop()


def test_no_tables_gives_one_idle_task(driver: SqliteSourceDriver) -> None:
    connector = SqliteSourceConnector()
    connector.initialize(_ConnectorContext())
    connector.start(_config(driver))
    try:
        (config,) = connector.task_configs(3)
    finally:
        connector.stop()
    task = SqliteSourceTask()
    task.initialize(_TaskContext(_Offsets()))
    task.start(config)
    assert task.poll() is None
    task.stop()


def test_whitelist_restricts_the_tables(driver: SqliteSourceDriver) -> None:
    for stream in range(3):
        driver.write_records([stream], stream=stream)
    connector = SqliteSourceConnector()
    connector.initialize(_ConnectorContext())
    connector.start(_config(driver, **{"table.whitelist": "t2,t0,missing"}))
    try:
        assert [json.loads(c["tables"]) for c in connector.task_configs(4)] == [["t0"], ["t2"]]
    finally:
        connector.stop()


def test_monitor_requests_reconfiguration_for_new_tables_and_fails_on_a_broken_db(
    driver: SqliteSourceDriver,
) -> None:
    driver.write_records([1], stream=0)
    context = _ConnectorContext()
    connector = SqliteSourceConnector()
    connector.initialize(context)
    connector.start(_config(driver, **{"table.poll.interval.ms": "20"}))
    try:
        driver.write_records([2], stream=1)
        wait_until(lambda: context.reconfigurations >= 1, 10, 0.02, "a reconfiguration request")
        assert [json.loads(c["tables"]) for c in connector.task_configs(2)] == [["t0"], ["t1"]]
        driver.break_external_system()
        wait_until(lambda: context.errors, 10, 0.02, "the monitor to raise an error")
        assert isinstance(context.errors[0], ConnectException)
        assert "not a database" in str(context.errors[0])
    finally:
        connector.stop()


def test_alter_offsets_checks_their_shape() -> None:
    connector = SqliteSourceConnector()
    assert connector.alter_offsets(
        {}, [({"table": "t0"}, {"incrementing": 3}), ({"table": "t1"}, None)]
    )
    with pytest.raises(ConnectException, match="'incrementing': <integer>"):
        connector.alter_offsets({}, [({"table": "t0"}, {"incrementing": 1.5})])
    with pytest.raises(ConnectException, match="'table': <table name>"):
        connector.alter_offsets({}, [({"file": "t0"}, None)])
