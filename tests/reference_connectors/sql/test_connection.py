"""The SQL connectors' connection layer: URLs, credentials, and what errors say."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from cdk import ConfigException, ConnectException, RetriableException
from cdk.config import Password
from reference_connectors.sql._connection import (
    ConnectionSettings,
    check_connection,
    parse_url,
    translate_error,
)
from tests.reference_connectors.sql._databases import TestDatabase


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("postgresql://db.example:5432/shop", "postgresql+psycopg://db.example:5432/shop"),
        ("postgres://u@h/d", "postgresql+psycopg://u@h/d"),
        ("jdbc:postgresql://h:5432/d?user=alice", "postgresql+psycopg://alice@h:5432/d"),
        ("mysql://root@h:3306/d", "mysql+pymysql://root@h:3306/d"),
        ("jdbc:mariadb://h/d", "mariadb+pymysql://h/d"),
        ("mariadb+pymysql://h/d", "mariadb+pymysql://h/d"),
        ("sqlite:///data/app.db", "sqlite:///data/app.db"),
        ("jdbc:sqlite:/tmp/x.db", "sqlite:////tmp/x.db"),
        ("/tmp/x.db", "sqlite:////tmp/x.db"),
    ],
)
def test_urls_in_sqlalchemy_and_jdbc_forms(raw: str, expected: str) -> None:
    assert parse_url(raw).render_as_string() == expected


@pytest.mark.parametrize(
    "raw",
    [
        "postgresql://alice:s3cr3t-pw@h/d",
        "jdbc:postgresql://h/d?user=alice&password=s3cr3t-pw",
        "mysql://h/d?password=s3cr3t-pw",
    ],
)
def test_a_password_in_the_url_is_refused_without_echoing_it(raw: str) -> None:
    with pytest.raises(ConfigException) as caught:
        parse_url(raw)
    text = str(caught.value)
    assert "s3cr3t-pw" not in text
    assert "connection.password" in text
    assert "connection.url" in text


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("oracle://h/d", "unsupported database 'oracle'"),
        ("", "empty"),
        ("sqlite:///:memory:", "in-memory"),
        ("postgresql://h:notaport/d", "not a database URL"),
    ],
)
def test_bad_urls_say_what_is_wrong(raw: str, words: str) -> None:
    with pytest.raises(ConfigException, match=r"connection\.url") as caught:
        parse_url(raw)
    assert words in str(caught.value)


def test_user_and_password_keys_are_merged_and_masked() -> None:
    settings = ConnectionSettings.from_values(
        {
            "connection.url": "postgresql://h/d",
            "connection.user": "bob",
            "connection.password": Password("hunter2-x"),
        }
    )
    assert settings.dialect == "postgresql"
    assert settings.url.username == "bob"
    assert "hunter2-x" not in settings.describe()
    error = translate_error(
        RuntimeError('FATAL: password authentication failed for user "bob" hunter2-x'),
        "connecting",
        settings,
    )
    assert isinstance(error, ConnectException)
    assert not isinstance(error, RetriableException)
    assert "hunter2-x" not in str(error)
    assert "wrong user name or password" in str(error)


def test_an_unreachable_server_is_retriable_and_named() -> None:
    # A port nothing listens on: bind one and close it, so it is free.
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = ConnectionSettings.from_values(
        {"connection.url": f"postgresql://postgres@127.0.0.1:{port}/postgres"}
    )
    problem = check_connection(settings)
    assert problem is not None
    assert f"127.0.0.1:{port}" in problem
    assert "unreachable" in problem


def test_a_missing_sqlite_file_is_named(tmp_path: object) -> None:
    settings = ConnectionSettings.from_values({"connection.url": f"sqlite:///{tmp_path}/none.db"})
    assert "does not exist" in (check_connection(settings) or "")


def test_each_database_answers(sql_database: TestDatabase) -> None:
    settings = ConnectionSettings.from_values(sql_database.config())
    assert check_connection(settings) is None


@pytest.mark.parametrize("sql_database", ["postgresql", "mariadb"], indirect=True)
def test_an_unknown_database_and_user_are_named(sql_database: TestDatabase) -> None:
    base = sql_database.url.set(password=None)
    missing_db = base.set(database="cdk_no_such_database")
    settings = ConnectionSettings.from_values({"connection.url": missing_db.render_as_string()})
    assert "the database does not exist" in (check_connection(settings) or "")
    nobody = base.set(username="cdk_no_such_user")
    settings = ConnectionSettings.from_values({"connection.url": nobody.render_as_string()})
    problem = check_connection(settings) or ""
    assert "cdk_no_such_user" in problem or "user" in problem, problem


def test_an_unknown_table_is_named(sql_database: TestDatabase) -> None:
    settings = ConnectionSettings.from_values(sql_database.config())
    engine = settings.create_engine()
    try:
        with pytest.raises(sa.exc.SQLAlchemyError) as caught, engine.connect() as connection:
            connection.execute(sa.text("SELECT * FROM no_such_table"))
        error = translate_error(caught.value, "reading table no_such_table", settings)
        assert "the table does not exist" in str(error)
        assert "reading table no_such_table" in str(error)
    finally:
        engine.dispose()
