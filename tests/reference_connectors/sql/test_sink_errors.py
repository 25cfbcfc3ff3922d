"""Bad input to the SQL sink: clear errors that name the problem, never the password."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest

from cdk import ConnectException, RetriableException
from reference_connectors.sql import SqlSinkConnector
from tests.reference_connectors.sql._databases import TestDatabase
from tests.reference_connectors.sql._sink_support import (
    record,
    rows,
    sink_config,
    start_task,
    stored_offsets,
)

SECRET = "s3cret-Pa55"


def _errors(props: dict[str, str]) -> dict[str, list[str]]:
    config = SqlSinkConnector().validate(props)
    return {v.name: v.error_messages for v in config.config_values if v.error_messages}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_password_in_the_url_is_refused_without_echoing_it() -> None:
    errors = _errors(
        {"connection.url": f"postgresql://app:{SECRET}@127.0.0.1:5432/db", "topics": "t"}
    )
    (message,) = errors["connection.url"]
    assert "the URL contains a password" in message
    assert SECRET not in str(errors)


def test_an_unreachable_server_is_reported_on_the_url() -> None:
    url = f"postgresql://postgres@127.0.0.1:{_free_port()}/nowhere"
    errors = _errors({"connection.url": url, "topics": "t"})
    assert "unreachable" in errors["connection.url"][0], errors


@pytest.mark.parametrize("sql_database", ["postgresql", "mariadb"], indirect=True)
def test_wrong_credentials_are_named_and_the_password_is_masked(
    sql_database: TestDatabase,
) -> None:
    props = {**sink_config(sql_database), "connection.user": "no_such_user_x"}
    props["connection.password"] = SECRET
    errors = _errors(props)
    (message,) = errors["connection.url"]
    assert "connection.user" in message, message
    assert SECRET not in str(errors)
    with pytest.raises(ConnectException, match=r"connection\.user") as failure:
        start_task(sql_database, connection_user="no_such_user_x", connection_password=SECRET)
    assert SECRET not in str(failure.value)


def test_keys_that_do_not_go_together_are_reported(tmp_path: Path) -> None:
    base = {"connection.url": f"sqlite:///{tmp_path / 'x.db'}", "topics": "t"}
    errors = _errors({**base, "insert.mode": "upsert"})
    assert "needs a primary key" in errors["pk.mode"][0]
    errors = _errors({**base, "delete.enabled": "true", "pk.mode": "record_value"})
    assert "needs pk.mode=record_key" in errors["delete.enabled"][0]
    errors = _errors({**base, "pk.mode": "kafka", "pk.fields": "a,b"})
    assert "exactly three" in errors["pk.fields"][0]
    errors = _errors({"connection.url": str(tmp_path / "no" / "such" / "dir.db"), "topics": "t"})
    assert "directory" in errors["connection.url"][0]
    assert _errors(base) == {}  # a SQLite file the sink will create


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("x" * 300, "File name too long"),  # a bare name is a SQLite file
        ("sqlite:///" + "d" * 300, "File name too long"),
        ("sqlite:///a\x00b", "a file name cannot hold NUL"),
    ],
)
def test_a_file_name_the_os_refuses_is_an_error_on_the_url(url: str, why: str) -> None:
    # validate() raised OSError: [Errno 36] on these (found by CFG-04's hostile values)
    errors = _errors({"connection.url": url, "topics": "t"})
    (message,) = errors["connection.url"]
    assert "is not a usable file path" in message
    assert why in message


def test_missing_tables_are_reported_at_validate_time(sql_database: TestDatabase) -> None:
    sql_database.execute(f"CREATE TABLE {sql_database.quote('present')} (id INTEGER)")
    props = {**sink_config(sql_database), "auto.create": "false", "topics": "present,absent"}
    errors = _errors(props)
    (message,) = errors["table.name.format"]
    assert "'absent'" in message
    assert "'present'" not in message
    assert "auto.create=false" in message


def test_a_locked_database_is_retried_then_fails_after_max_retries(
    sql_database_sqlite: TestDatabase,
) -> None:
    db = sql_database_sqlite
    task, context = start_task(db, retry_backoff_ms="5", max_retries="1")
    path = db.url.database
    assert path is not None
    lock = sqlite3.connect(path, isolation_level=None)
    try:
        task.put([record(1)])
        lock.execute("BEGIN EXCLUSIVE")
        with pytest.raises(RetriableException, match="the database is locked"):
            task.put([record(2)])
        assert context.timeouts == [5]
        with pytest.raises(ConnectException, match=r"max.retries=1") as failure:
            task.put([record(2)])
        assert not isinstance(failure.value, RetriableException)
        lock.execute("ROLLBACK")
        task.put([record(2)])  # the database is back: the batch is written
    finally:
        lock.close()
        task.stop()
    assert [r[0] for r in rows(db, columns="id", order="id")] == [1, 2]
    assert stored_offsets(db) == [("orders", 0, 3)]


@pytest.fixture
def sql_database_sqlite(tmp_path: Path) -> TestDatabase:
    import sqlalchemy as sa

    url = sa.make_url(f"sqlite:///{tmp_path / 'locked.db'}")
    return TestDatabase("sqlite", url, sa.create_engine(url, poolclass=sa.pool.NullPool))
