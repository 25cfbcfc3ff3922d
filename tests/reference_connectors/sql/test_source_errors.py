"""Bad input to the SQL source: clear errors that name the problem, at validate time if possible."""

from __future__ import annotations

import socket

import pytest

from cdk import ConnectException, DataException
from reference_connectors.sql import SqlSourceConnector
from tests.reference_connectors.sql._databases import TestDatabase
from tests.reference_connectors.sql._support import ddl, start_task

_UNSUPPORTED = {
    "sqlite": ("WIDGET", "WIDGET"),
    "postgresql": ("INTERVAL", "INTERVAL"),
    "mariadb": ("POINT", "POINT"),
}


def _errors(props: dict[str, str]) -> dict[str, list[str]]:
    config = SqlSourceConnector().validate(props)
    return {v.name: v.error_messages for v in config.config_values if v.error_messages}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_database_is_reported_on_connection_url() -> None:
    port = _free_port()
    errors = _errors(
        {
            "connection.url": f"postgresql://postgres@127.0.0.1:{port}/postgres",
            "connection.password": "pw-never-shown",
            "mode": "bulk",
            "topic.prefix": "x-",
        }
    )
    assert list(errors) == ["connection.url"]
    [message] = errors["connection.url"]
    assert f"127.0.0.1:{port}" in message
    assert "unreachable" in message
    assert "pw-never-shown" not in message


def test_a_password_in_the_url_is_refused() -> None:
    errors = _errors(
        {"connection.url": "mysql://root:topsecret9@h/d", "mode": "bulk", "topic.prefix": "x"}
    )
    assert "connection.password" in errors["connection.url"][0]
    assert "topsecret9" not in str(errors)


def test_cross_key_problems() -> None:
    errors = _errors(
        {
            "connection.url": "sqlite:///nowhere/x.db",
            "mode": "timestamp",
            "topic.prefix": "x",
            "table.whitelist": "a",
            "table.blacklist": "b",
        }
    )
    assert "not both" in errors["table.blacklist"][0]
    assert "timestamp.column.name" in errors["timestamp.column.name"][0]
    assert "does not exist" in errors["connection.url"][0]
    assert "mode" in _errors({"connection.url": "sqlite:///x.db", "topic.prefix": "x"})


@pytest.mark.parametrize("sql_database", ["mariadb"], indirect=True)
def test_wrong_credentials_are_named(sql_database: TestDatabase) -> None:
    url = sql_database.url.set(username="cdk_nobody", password=None).render_as_string()
    errors = _errors(
        {
            "connection.url": url,
            "connection.password": "wrong-pass-xyz",
            "mode": "bulk",
            "topic.prefix": "x",
        }
    )
    [message] = errors["connection.url"]
    assert "wrong user name or password" in message
    assert "wrong-pass-xyz" not in message


def test_missing_and_nullable_columns_are_named(sql_database: TestDatabase) -> None:
    db = sql_database
    db.execute(ddl(db, "items"), "CREATE TABLE loose (id INTEGER, changed TIMESTAMP NULL)")
    base = {**db.config(), "topic.prefix": "x"}
    errors = _errors(
        {
            **base,
            "mode": "incrementing",
            "table.whitelist": "items",
            "incrementing.column.name": "nope",
        }
    )
    assert "Table items has no column 'nope'" in errors["incrementing.column.name"][0]
    errors = _errors(
        {
            **base,
            "mode": "timestamp",
            "table.whitelist": "loose",
            "timestamp.column.name": "changed",
        }
    )
    assert "loose.changed is nullable" in errors["timestamp.column.name"][0]
    assert "validate.non.null" in errors["timestamp.column.name"][0]
    errors = _errors(
        {
            **base,
            "mode": "timestamp",
            "table.whitelist": "loose",
            "timestamp.column.name": "changed",
            "validate.non.null": "false",
        }
    )
    assert errors == {}


def test_a_failing_query_is_reported_on_query(sql_database: TestDatabase) -> None:
    db = sql_database
    errors = _errors(
        {**db.config(), "topic.prefix": "x", "mode": "bulk", "query": "SELECT * FROM no_such_table"}
    )
    assert "the table does not exist" in errors["query"][0]


def test_an_unsupported_column_type_names_table_and_column(sql_database: TestDatabase) -> None:
    db = sql_database
    declared, shown = _UNSUPPORTED[db.dialect]
    db.execute(f"CREATE TABLE odd (id INTEGER NOT NULL PRIMARY KEY, shape {declared})")
    base = {**db.config(), "topic.prefix": "x", "mode": "bulk"}
    errors = _errors({**base, "table.whitelist": "odd"})
    assert "odd.shape" in errors["table.whitelist"][0]
    assert shown.lower() in errors["table.whitelist"][0].lower()
    task = start_task(db, ["odd"], mode="bulk")
    try:
        with pytest.raises(ConnectException, match=r"odd\.shape"):
            task.poll()
    finally:
        task.stop()


def test_an_unreachable_database_fails_the_task_start_after_its_attempts() -> None:
    port = _free_port()
    from reference_connectors.sql import SqlSourceTask
    from tests.reference_connectors.sql._support import Offsets, TaskContext

    task = SqlSourceTask()
    task.initialize(TaskContext(Offsets()))
    with pytest.raises(ConnectException, match=r"unreachable.*after 2 attempts"):
        task.start(
            {
                "connection.url": f"mysql://root@127.0.0.1:{port}/test",
                "mode": "bulk",
                "topic.prefix": "x",
                "connection.attempts": "2",
                "connection.backoff.ms": "10",
                "tables": "[]",
            }
        )


@pytest.mark.parametrize("sql_database", ["sqlite"], indirect=True)
def test_a_value_that_cannot_be_read_names_its_column(sql_database: TestDatabase) -> None:
    """SQLite keeps what it is given: text in an INTEGER column, 123456 in a NUMERIC(3,0) one.

    The first column (in column order) whose value cannot be converted or does not fit its
    schema is named, whichever step fails.
    """
    db = sql_database
    db.execute(
        "CREATE TABLE odd (id INTEGER NOT NULL PRIMARY KEY, n NUMERIC(3,0), q INTEGER)",
        "INSERT INTO odd VALUES (1, 5, 'abc')",
        "CREATE TABLE odder (id INTEGER NOT NULL PRIMARY KEY, n NUMERIC(3,0), q INTEGER)",
        "INSERT INTO odder VALUES (1, 123456, 'abc')",
    )
    for table, column, detail in (
        ("odd", "q", "invalid literal for int()"),
        ("odder", "n", "123456 is out of range"),
    ):
        task = start_task(db, [table], mode="bulk", **{"numeric.mapping": "best_fit"})
        try:
            with pytest.raises(DataException) as info:
                task.poll()
        finally:
            task.stop()
        assert str(info.value).startswith(
            f"Cannot read column {column!r} of a row of table {table}: "
        ), info.value
        assert detail in str(info.value)
        assert info.value.field == column
