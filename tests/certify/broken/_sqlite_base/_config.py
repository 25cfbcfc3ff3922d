"""The configuration of the SQLite connectors, and how they reach the database.

Both connectors name the database with ``connection.url``: a file path, ``sqlite:///path``
(SQLAlchemy's form: ``sqlite:///data/app.db`` is relative, ``sqlite:////data/app.db`` absolute)
or ``jdbc:sqlite:path`` (Confluent's form). Connections use a short busy timeout so that a locked
database surfaces quickly as a :class:`~cdk.RetriableException` instead of blocking a task, and
every other :mod:`sqlite3` error becomes a :class:`~cdk.ConnectException` naming the table and the
database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from cdk import (
    NO_DEFAULT,
    ConfigDef,
    ConfigException,
    ConnectException,
    Importance,
    RetriableException,
    Type,
    Width,
)
from cdk.config import ConfigValue
from cdk.config.validators import CaseInsensitiveValidString, NonEmptyString, Range, Validator

__all__ = [
    "SINK_CONFIG_DEF",
    "SOURCE_CONFIG_DEF",
    "SOURCE_TASK_CONFIG_DEF",
    "VERSION",
    "DatabaseFile",
    "add_problems",
    "connect",
    "database_path",
    "is_busy",
    "list_tables",
    "quote",
    "sink_config_problems",
    "translate_error",
]

VERSION = "0.1.0"

#: Seconds a statement waits for a lock before SQLite reports "database is locked".
BUSY_TIMEOUT_S = 0.5

CONNECTION_URL = "connection.url"
# Source keys.
TABLE_WHITELIST = "table.whitelist"
INCREMENTING_COLUMN = "incrementing.column.name"
TOPIC_PREFIX = "topic.prefix"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_MAX_ROWS = "batch.max.rows"
TABLE_POLL_INTERVAL_MS = "table.poll.interval.ms"
TASK_TABLES = "tables"  # set by the source connector in each task config
# Sink keys.
TABLE_NAME_FORMAT = "table.name.format"
AUTO_CREATE = "auto.create"
AUTO_EVOLVE = "auto.evolve"
INSERT_MODE = "insert.mode"
PK_MODE = "pk.mode"
PK_FIELDS = "pk.fields"
BATCH_SIZE = "batch.size"
DELETE_ENABLED = "delete.enabled"
RETRY_BACKOFF_MS = "retry.backoff.ms"

_PREFIXES = ("sqlite:///", "jdbc:sqlite:")


def database_path(url: str) -> Path:
    """The database file that ``connection.url`` names.

    Raises:
        ConfigException: for an in-memory database or an empty path (naming ``connection.url``).
    """
    path = url.strip()
    for prefix in _PREFIXES:
        if path.lower().startswith(prefix):
            path = path[len(prefix) :]
            break
    if not path:
        raise ConfigException(CONNECTION_URL, url, "the URL names no database file")
    if path == ":memory:" or "mode=memory" in path:
        raise ConfigException(
            CONNECTION_URL,
            url,
            "an in-memory database is private to one connection; name a database file",
        )
    return Path(path)


class DatabaseFile(Validator):
    """Checks that ``connection.url`` names a usable database file.

    Args:
        must_exist: the file must exist (a source reads it); otherwise its directory must
            exist (a sink creates the file).
    """

    def __init__(self, *, must_exist: bool) -> None:
        self.must_exist = must_exist

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return  # a missing required key is reported by the ConfigDef itself
        if not isinstance(value, str):
            raise ConfigException(name, value, "expected a string")
        path = database_path(value)
        try:
            exists, is_dir = path.exists(), path.is_dir()
            parent_ok = path.parent.is_dir()
        except (OSError, ValueError) as exc:
            raise ConfigException(name, value, f"not a usable path: {exc}") from exc
        if is_dir:
            raise ConfigException(name, value, f"{path} is a directory, not a database file")
        if self.must_exist and not exists:
            raise ConfigException(name, value, f"the database file {path} does not exist")
        if not self.must_exist and not parent_ok:
            raise ConfigException(name, value, f"the directory {path.parent} does not exist")

    def __str__(self) -> str:
        what = "an existing SQLite database file" if self.must_exist else "a SQLite database file"
        return f"{what}: a path, sqlite:///path or jdbc:sqlite:path"


_URL_DOC = (
    "The SQLite database: a file path, sqlite:///relative/path, sqlite:////absolute/path or "
    "jdbc:sqlite:path. "
)

SOURCE_CONFIG_DEF = (
    ConfigDef()
    .define(
        CONNECTION_URL,
        Type.STRING,
        NO_DEFAULT,
        DatabaseFile(must_exist=True),
        Importance.HIGH,
        _URL_DOC + "The file must exist.",
        group="Database",
        order_in_group=1,
        width=Width.LONG,
        display_name="Database URL",
    )
    .define(
        TABLE_WHITELIST,
        Type.LIST,
        "",
        None,
        Importance.MEDIUM,
        "The tables to copy. Empty (the default) copies every user table. Tables that do not "
        "exist yet are picked up once they are created.",
        group="Database",
        order_in_group=2,
        width=Width.LONG,
        display_name="Table Whitelist",
    )
    .define(
        TABLE_POLL_INTERVAL_MS,
        Type.LONG,
        60_000,
        Range.at_least(1),
        Importance.LOW,
        "How often, in milliseconds, to look for new or removed tables; a change reconfigures "
        "the tasks.",
        group="Database",
        order_in_group=3,
        width=Width.SHORT,
        display_name="Table Poll Interval (ms)",
    )
    .define(
        INCREMENTING_COLUMN,
        Type.STRING,
        "id",
        NonEmptyString(),
        Importance.MEDIUM,
        "The strictly increasing INTEGER column of every copied table (typically the INTEGER "
        "PRIMARY KEY). Rows are read in its order, its value is the record key, and the last "
        "value read is the stored offset: rows inserted with a smaller value, or updated in "
        "place, are not copied.",
        group="Mode",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Incrementing Column Name",
    )
    .define(
        TOPIC_PREFIX,
        Type.STRING,
        NO_DEFAULT,
        NonEmptyString(),
        Importance.HIGH,
        "Prefix of the topic names: the rows of table t go to topic <topic.prefix>t.",
        group="Connector",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Topic Prefix",
    )
    .define(
        POLL_INTERVAL_MS,
        Type.INT,
        1000,
        Range.at_least(1),
        Importance.HIGH,
        "How long, in milliseconds, a task waits before it queries its tables again when they "
        "had no new rows.",
        group="Connector",
        order_in_group=2,
        width=Width.SHORT,
        display_name="Poll Interval (ms)",
    )
    .define(
        BATCH_MAX_ROWS,
        Type.INT,
        100,
        Range.at_least(1),
        Importance.LOW,
        "The maximum number of rows read from one table by one query.",
        group="Connector",
        order_in_group=3,
        width=Width.SHORT,
        display_name="Max Rows Per Batch",
    )
)

#: The task's configuration: the connector's, plus the tables the connector assigned to it.
SOURCE_TASK_CONFIG_DEF = ConfigDef(SOURCE_CONFIG_DEF).define(
    TASK_TABLES,
    Type.STRING,
    "[]",
    None,
    Importance.HIGH,
    "The tables this task copies, as a JSON array (set by the connector for each task).",
)

SINK_CONFIG_DEF = (
    ConfigDef()
    .define(
        CONNECTION_URL,
        Type.STRING,
        NO_DEFAULT,
        DatabaseFile(must_exist=False),
        Importance.HIGH,
        _URL_DOC + "The file is created if it does not exist; its directory must exist.",
        group="Connection",
        order_in_group=1,
        width=Width.LONG,
        display_name="Database URL",
    )
    .define(
        RETRY_BACKOFF_MS,
        Type.INT,
        3000,
        Range.at_least(0),
        Importance.MEDIUM,
        "How long, in milliseconds, to wait before the framework redelivers a batch that "
        "could not be written because the database was locked.",
        group="Connection",
        order_in_group=2,
        width=Width.SHORT,
        display_name="Retry Backoff (ms)",
    )
    .define(
        INSERT_MODE,
        Type.STRING,
        "upsert",
        CaseInsensitiveValidString.of("insert", "upsert"),
        Importance.HIGH,
        "How rows are written. insert: plain INSERT, so a redelivered record violates the "
        "primary key and fails the task. upsert: INSERT ... ON CONFLICT DO UPDATE on the "
        "primary key, which makes redelivery idempotent (exactly-once results); needs a "
        "pk.mode other than none.",
        group="Writes",
        order_in_group=1,
        width=Width.SHORT,
        display_name="Insert Mode",
    )
    .define(
        BATCH_SIZE,
        Type.INT,
        3000,
        Range.at_least(1),
        Importance.MEDIUM,
        "The maximum number of rows sent to SQLite in one statement batch. A whole put() is "
        "written in one transaction whatever its size.",
        group="Writes",
        order_in_group=2,
        width=Width.SHORT,
        display_name="Batch Size",
    )
    .define(
        DELETE_ENABLED,
        Type.BOOLEAN,
        False,
        None,
        Importance.MEDIUM,
        "Whether a record with a null value (a tombstone) deletes the row with its key. "
        "Needs pk.mode=record_key. When false, a tombstone fails the task.",
        group="Writes",
        order_in_group=3,
        width=Width.SHORT,
        display_name="Enable Deletes",
    )
    .define(
        TABLE_NAME_FORMAT,
        Type.STRING,
        "${topic}",
        NonEmptyString(),
        Importance.MEDIUM,
        "The table a record is written to; ${topic} is replaced by the record's topic. "
        "Names are quoted, so any topic name works.",
        group="Data Mapping",
        order_in_group=1,
        width=Width.LONG,
        display_name="Table Name Format",
    )
    .define(
        PK_MODE,
        Type.STRING,
        "record_value",
        CaseInsensitiveValidString.of("none", "record_key", "record_value"),
        Importance.HIGH,
        "Where the primary key comes from. none: no key (only with "
        "insert.mode=insert). record_key: the record key (a primitive key is stored in "
        "the single column named by pk.fields; a struct key gives the fields pk.fields "
        "names, or all its fields). record_value: the value fields pk.fields names "
        "(all value fields when empty).",
        group="Data Mapping",
        order_in_group=2,
        width=Width.MEDIUM,
        display_name="Primary Key Mode",
    )
    .define(
        PK_FIELDS,
        Type.LIST,
        "id",
        None,
        Importance.MEDIUM,
        "The primary key columns; see pk.mode.",
        group="Data Mapping",
        order_in_group=3,
        width=Width.LONG,
        display_name="Primary Key Fields",
    )
    .define(
        AUTO_CREATE,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Whether to create a missing table from the record schema (CREATE TABLE with the "
        "primary key, NOT NULL for required fields).",
        group="DDL Support",
        order_in_group=1,
        width=Width.SHORT,
        display_name="Auto-Create",
    )
    .define(
        AUTO_EVOLVE,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Whether to add a column (ALTER TABLE ADD COLUMN) for an optional field the table does "
        "not have yet. When false, such a record fails the task.",
        group="DDL Support",
        order_in_group=2,
        width=Width.SHORT,
        display_name="Auto-Evolve",
    )
)


def sink_config_problems(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Problems that span several sink keys, as ``(key, message)`` pairs.

    Args:
        values: parsed values by key; keys that did not parse are simply absent.
    """
    problems: list[tuple[str, str]] = []
    insert_mode = str(values.get(INSERT_MODE, "")).lower()
    pk_mode = str(values.get(PK_MODE, "")).lower()
    if insert_mode == "upsert" and pk_mode == "none":
        problems.append(
            (
                INSERT_MODE,
                "insert.mode=upsert needs a primary key: set pk.mode to record_key or "
                "record_value, or use insert.mode=insert",
            )
        )
    if values.get(DELETE_ENABLED) is True and pk_mode and pk_mode != "record_key":
        problems.append(
            (
                DELETE_ENABLED,
                "delete.enabled=true needs pk.mode=record_key (a tombstone only has its key)",
            )
        )
    return problems


def add_problems(config_values: Iterable[ConfigValue], problems: list[tuple[str, str]]) -> None:
    """Attach cross-key problems to the matching :class:`ConfigValue` objects."""
    by_name = {value.name: value for value in config_values}
    for key, message in problems:
        if key in by_name:
            by_name[key].add_error_message(message)


# ---------------------------------------------------------------------------------------------
# Connections and errors.


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with a short busy timeout.

    Args:
        path: the database file.
        create: create the file when it is missing (a sink); otherwise opening a missing file
            fails instead of silently creating an empty database (a source).

    Raises:
        sqlite3.Error: the database cannot be opened.
    """
    target = path.absolute().as_uri() + ("?mode=rwc" if create else "?mode=rw")
    return sqlite3.connect(
        target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False, uri=True
    )


def quote(identifier: str) -> str:
    """A quoted SQL identifier (table and column names may contain any character)."""
    return '"' + identifier.replace('"', '""') + '"'


_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED (primary result codes)


def is_busy(error: sqlite3.Error) -> bool:
    """Whether ``error`` means another connection holds a lock (a transient condition)."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _BUSY_CODES:
        return True
    text = str(error).lower()
    return "locked" in text or "busy" in text


def translate_error(error: sqlite3.Error, action: str, database: Path) -> ConnectException:
    """The connect-cdk exception for a :mod:`sqlite3` error.

    Args:
        error: what sqlite3 raised.
        action: what was being done, naming the table (``reading table "t0"``).
        database: the database file.

    Returns:
        A :class:`RetriableException` when the database is locked or busy, else a
        :class:`ConnectException`; both say what failed, on which table and database.
    """
    if is_busy(error):
        return RetriableException(
            f"SQLite database {database} is locked by another connection while {action}: "
            f"{error}; will retry"
        )
    return ConnectException(f"SQLite error while {action} in database {database}: {error}")


def list_tables(connection: sqlite3.Connection) -> list[str]:
    """The user tables of the database, sorted by name (SQLite's internal tables left out)."""
    rows = connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
    ).fetchall()
    return [str(row[0]) for row in rows]
