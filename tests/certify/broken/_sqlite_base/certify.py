"""Certification drivers of the baseline SQLite connectors (a test fixture).

The certify-suite tests build projects from them (``tests.certify._support.project_for``), and the
broken variants subclass them with a broken connector. Each driver owns one database file in
its working directory:

- :class:`SqliteSourceDriver` writes rows into tables ``t0`` .. ``t3`` (one per input stream),
  adds columns to evolve their schema, and lets the harness check that the source copies them.
- :class:`SqliteSinkDriver` reads back the rows the sink wrote, with their values converted to
  Connect values (decimals, timestamps, booleans), so the harness can compare them with what it
  sent.

Both can break the database for good (overwrite the file with garbage: the connector must fail
with a ConnectException, not hang) or make it unavailable for a while (another connection holds
an exclusive lock: the connector must retry and lose nothing). Writes and reads that the harness
makes during such an outage go through the connection that holds the lock, and become visible to
the connector when the outage ends.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import os
import sqlite3
import threading
from collections.abc import Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from cdk import Connector, Decimal, Schema, SchemaBuilder, Timestamp
from harness import Delivery, Limit, SinkDriver, SourceDriver
from tests.certify.broken._sqlite_base._config import quote
from tests.certify.broken._sqlite_base._sink import SqliteSinkConnector
from tests.certify.broken._sqlite_base._source import SqliteSourceConnector
from tests.certify.broken._sqlite_base._types import column_type, format_timestamp

__all__ = ["SqliteSinkDriver", "SqliteSourceDriver"]

#: How long the drivers wait for the connector's locks (they are held for milliseconds).
_DRIVER_TIMEOUT_S = 30.0
_BASE_TIME = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


class _Database:
    """One database file, with failure injection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._held: sqlite3.Connection | None = None  # the outage's connection

    def create(self) -> None:
        """Create the database, empty, in rollback-journal mode (readers block on writers)."""
        connection = sqlite3.connect(self.path, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=DELETE")
            connection.execute("PRAGMA user_version=1")  # writes the header: a real database
        finally:
            connection.close()

    def remove(self) -> None:
        with self._lock:
            if self._held is not None:
                self._held.close()
                self._held = None
        for path in (self.path, self.path.with_name(self.path.name + "-journal")):
            path.unlink(missing_ok=True)

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """A connection to use inside one transaction (the outage's, while one is on)."""
        with self._lock:
            if self._held is not None:
                yield self._held  # its transaction commits when the outage ends
                return
            connection = sqlite3.connect(self.path, timeout=_DRIVER_TIMEOUT_S, isolation_level=None)
            try:
                connection.execute("BEGIN IMMEDIATE")
                yield connection
                connection.execute("COMMIT")
            finally:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                connection.close()

    def tables(self) -> list[str]:
        if not self.path.exists():
            return []
        with self.connection() as connection:
            rows = connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
            ).fetchall()
        return [str(row[0]) for row in rows]

    def break_for_good(self) -> None:
        """Overwrite the file in place, so open connections see the garbage too."""
        with self._lock:
            if self._held is not None:
                self._held.close()
                self._held = None
            size = self.path.stat().st_size if self.path.exists() else 0
            garbage = b"this is not a SQLite database\n" * (max(size, 8192) // 30 + 1)
            with open(self.path, "r+b" if self.path.exists() else "wb") as out:
                out.write(garbage)
                out.truncate()
                out.flush()
                os.fsync(out.fileno())
            self.path.with_name(self.path.name + "-journal").unlink(missing_ok=True)

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        """Hold an exclusive lock: every other connection gets "database is locked"."""
        connection = sqlite3.connect(
            self.path, timeout=_DRIVER_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute("BEGIN EXCLUSIVE")
            with self._lock:
                self._held = connection
            try:
                yield
            finally:
                with self._lock:
                    self._held = None
                connection.execute("COMMIT")  # what the harness wrote meanwhile
        finally:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            connection.close()


# ---------------------------------------------------------------------------------------------


class SqliteSourceDriver(SourceDriver):
    """Input streams are tables ``t0`` .. ``t3`` of one database in the working directory.

    Every table has ``id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount DECIMAL_TEXT(2),
    created TIMESTAMP, active BOOLEAN``; :meth:`evolve_schema` adds optional TEXT columns.
    """

    connector: ClassVar[type[Connector] | str] = SqliteSourceConnector
    delivery: ClassVar[Delivery] = Delivery.AT_LEAST_ONCE
    streams: ClassVar[int] = 4
    detects_new_streams: ClassVar[bool] = True

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.database = _Database(Path(workdir).absolute() / "source.db")
        self._added: dict[int, list[str]] = {}
        self._written: dict[int, dict[str, Any]] = {}

    def setup(self) -> None:
        self.database.create()

    def teardown(self) -> None:
        self.database.remove()

    def example_config(self, topic: str) -> dict[str, str]:
        return {
            "connection.url": str(self.database.path),
            "topic.prefix": topic,
            "poll.interval.ms": "100",
            "table.poll.interval.ms": "500",
        }

    @staticmethod
    def table(stream: int) -> str:
        """The table of input stream ``stream``."""
        return f"t{stream}"

    def _create_table(self, connection: sqlite3.Connection, stream: int) -> None:
        connection.execute(
            f"CREATE TABLE IF NOT EXISTS {quote(self.table(stream))} (id INTEGER PRIMARY KEY, "
            "name TEXT NOT NULL, amount DECIMAL_TEXT(2), created TIMESTAMP, active BOOLEAN)"
        )

    def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
        added = self._added.get(stream, [])
        self._insert([self._values(i, added) for i in ids], stream)

    def value_schema(self) -> Schema:
        return (
            SchemaBuilder.struct()
            .field("id", Schema.INT64_SCHEMA)
            .field("name", Schema.STRING_SCHEMA)
            .field("amount", Decimal.builder(2).optional().build())
            .field("created", Timestamp.builder().optional().build())
            .field("active", Schema.OPTIONAL_BOOLEAN_SCHEMA)
            .build()
        )

    def write_values(self, values: Sequence[Any], *, stream: int = 0) -> list[Hashable]:
        added = self._added.get(stream, [])
        rows = [
            {**{f.name: value.get(f.name) for f in value.schema.fields}, **dict.fromkeys(added)}
            for value in values
        ]
        self._insert(rows, stream)
        return [row["id"] for row in rows]

    def _insert(self, values: Sequence[dict[str, Any]], stream: int) -> None:
        added = self._added.get(stream, [])
        columns = ["id", "name", "amount", "created", "active", *added]
        sql = (
            f"INSERT INTO {quote(self.table(stream))} ({', '.join(map(quote, columns))}) "
            f"VALUES ({', '.join('?' for _ in columns)})"
        )
        rows = [
            (
                v["id"],
                v["name"],
                None if v["amount"] is None else str(v["amount"]),
                None if v["created"] is None else format_timestamp(v["created"]),
                None if v["active"] is None else int(v["active"]),
                *(v[name] for name in added),
            )
            for v in values
        ]
        with self.database.connection() as connection:
            self._create_table(connection, stream)
            connection.executemany(sql, rows)
        self._written.update((v["id"], v) for v in values)

    @staticmethod
    def _values(i: int, added: Sequence[str]) -> dict[str, Any]:
        """Record ``i``'s columns as Connect values (what the source must emit)."""
        return {
            "id": i,
            "name": f"name-{i}",
            "amount": None if i % 5 == 0 else decimal.Decimal(i * 7 + 1).scaleb(-2),
            "created": _BASE_TIME + dt.timedelta(seconds=i * 61, milliseconds=i % 1000),
            "active": i % 2 == 0,
            **{name: f"{name}-{i}" for name in added},
        }

    def expected_value(self, record_id: int) -> Any:
        return self._written[record_id]

    def evolve_schema(self, *, stream: int = 0) -> str:
        added = self._added.setdefault(stream, [])
        name = f"note{len(added) + 1}"
        with self.database.connection() as connection:
            self._create_table(connection, stream)
            connection.execute(
                f"ALTER TABLE {quote(self.table(stream))} ADD COLUMN {quote(name)} TEXT"
            )
        added.append(name)
        return name

    def break_external_system(self) -> None:
        self.database.break_for_good()

    def outage(self) -> contextlib.AbstractContextManager[None]:
        return self.database.outage()


class SqliteSinkDriver(SinkDriver):
    """The sink writes to one database in the working directory, a table per topic.

    Upserts on the primary key (``id``) make redelivered records overwrite their own rows, so
    the driver claims exactly-once results.
    """

    connector: ClassVar[type[Connector] | str] = SqliteSinkConnector
    delivery: ClassVar[Delivery] = Delivery.EXACTLY_ONCE
    value_limits: Sequence[Limit] = (
        Limit.no_negative_zero(
            "*", "SQLite keeps a REAL value with no fraction as an integer: -0.0 reads back as 0"
        ),
    )

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.database = _Database(Path(workdir).absolute() / "sink.db")

    def setup(self) -> None:
        self.database.create()

    def teardown(self) -> None:
        self.database.remove()

    def example_config(self, topics: str) -> dict[str, str]:
        return {
            "connection.url": str(self.database.path),
            "topics": topics,
            "retry.backoff.ms": "200",
        }

    def _rows(self) -> Iterator[dict[str, Any]]:
        """Every stored row as Connect values, from every table that has an ``id`` column."""
        for table in self.database.tables():
            with self.database.connection() as connection:
                info = connection.execute(f"PRAGMA table_info({quote(table)})").fetchall()
                if not any(row[1] == "id" for row in info):
                    continue
                rows = connection.execute(f"SELECT * FROM {quote(table)}").fetchall()
            types = [column_type(str(row[2] or "")) for row in info]
            names = [str(row[1]) for row in info]
            for row in rows:
                yield {
                    name: (ctype.to_connect(value) if ctype is not None else value)
                    for name, ctype, value in zip(names, types, row, strict=True)
                }

    def read_back(self) -> list[Hashable]:
        return [row["id"] for row in self._rows()]

    def read_values(self) -> dict[Hashable, Mapping[str, Any]]:
        return {row["id"]: row for row in self._rows()}

    def break_external_system(self) -> None:
        self.database.break_for_good()

    def outage(self) -> contextlib.AbstractContextManager[None]:
        return self.database.outage()
