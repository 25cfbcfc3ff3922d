"""Certification drivers: what ``cdk certify`` needs to know about the SQL databases.

``pyproject.toml`` names them under ``[tool.cdk] drivers``. The dialect is chosen by the
environment variable ``CDK_SQL_DIALECT`` (``sqlite``, the default, ``postgresql`` or
``mariadb``), so one project certifies against each database::

    CDK_SQL_DIALECT=postgresql cdk certify reference_connectors/sql

or by naming a dialect's driver class directly (:class:`SqliteSourceDriver`,
:class:`PostgresqlSourceDriver`, :class:`MariadbSourceDriver`). The servers are taken from
``CDK_TEST_POSTGRES_URL`` and ``CDK_TEST_MARIADB_URL`` (SQLAlchemy URLs of a user that may create
databases; default: the local servers, ``postgres@127.0.0.1:5432`` and ``root@127.0.0.1:3306``).

Each driver instance owns one database: a SQLite file in its working directory, or a fresh
database ``cdk_cert_<random>`` on the server, dropped by :meth:`teardown`. The source driver
writes rows into tables ``t0`` .. ``t3`` (one per input stream), adds columns to evolve their
schema, and knows the values the source must emit.

Failure injection: on a server, the connector reaches the database through a TCP proxy of the
driver (:class:`harness.providers.TcpProxy`); an outage cuts the proxy (the connector's
connection drops and new ones are refused) while the driver goes on writing to the server
directly, and breaking the database drops it for good. On SQLite, an outage holds an exclusive
lock ("database is locked"), and breaking overwrites the file with garbage.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import threading
from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import sqlalchemy as sa

from cdk import Connector, Schema
from harness import Delivery, Limit, SourceDriver
from harness.providers import TcpProxy
from reference_connectors.sql._certify_rows import (
    COLUMNS,
    ddl,
    row_values,
    server_value,
    source_limits,
    source_schema,
    sqlite_value,
)
from reference_connectors.sql._connection import share_preferred_tls
from reference_connectors.sql._source import SqlSourceConnector

__all__ = [
    "DIALECT_ENV",
    "MariadbSinkDriver",
    "MariadbSourceDriver",
    "PostgresqlSinkDriver",
    "SqlSinkDriver",
    "SqliteSinkDriver",
    "PostgresqlSourceDriver",
    "SqlSourceDriver",
    "SqliteSourceDriver",
    "CertDatabase",
]

DIALECT_ENV = "CDK_SQL_DIALECT"
_SERVERS = {
    "postgresql": (
        "CDK_TEST_POSTGRES_URL",
        "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
    ),
    "mariadb": ("CDK_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306/test"),
}
_DRIVERNAMES = {"postgresql": "postgresql+psycopg", "mariadb": "mysql+pymysql"}
_TIMEOUT_S = 30.0
#: The hosts a MariaDB user of a driver may connect from (TCP through the proxy, or a name).
_MARIADB_HOSTS = ("%", "localhost")


def _dialect(explicit: str | None) -> str:
    dialect = (explicit or os.environ.get(DIALECT_ENV) or "sqlite").strip().lower()
    if dialect not in ("sqlite", "postgresql", "mariadb"):
        raise ValueError(f"{DIALECT_ENV}={dialect!r}: use sqlite, postgresql or mariadb")
    return dialect


class CertDatabase:
    """One database of a dialect for a driver, with failure injection.

    Args:
        dialect: ``sqlite``, ``postgresql`` or ``mariadb``.
        workdir: where a SQLite file goes.
    """

    def __init__(self, dialect: str, workdir: Path) -> None:
        self.dialect = dialect
        self.path = Path(workdir).absolute() / "source.db"
        self.name = f"cdk_cert_{secrets.token_hex(5)}"
        self.password = f"pw-{secrets.token_hex(8)}"
        self._proxy: TcpProxy | None = None
        self._lock = threading.Lock()
        self._held: sqlite3.Connection | None = None
        self.engine: sa.Engine | None = None

    # ------------------------------------------------------------------ lifecycle
    def _server(self) -> sa.URL:
        variable, default = _SERVERS[self.dialect]
        url = sa.make_url(os.environ.get(variable) or default)
        return url.set(drivername=_DRIVERNAMES[self.dialect])

    def _admin(self) -> sa.Engine:
        return share_preferred_tls(sa.create_engine(self._server(), poolclass=sa.pool.NullPool))

    def create(self) -> None:
        if self.dialect == "sqlite":
            lite = sqlite3.connect(self.path, isolation_level=None)
            try:  # rollback-journal mode: an exclusive lock keeps readers out
                lite.execute("PRAGMA journal_mode=DELETE")
                lite.execute("PRAGMA user_version=1")
            finally:
                lite.close()
            return
        admin = self._admin()
        try:
            with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(sa.text(f"CREATE DATABASE {self.name}"))
                if self.dialect == "mariadb":  # a user of its own, with a password
                    for host in _MARIADB_HOSTS:
                        connection.execute(
                            sa.text(f"CREATE USER '{self.name}'@'{host}' IDENTIFIED BY :pw"),
                            {"pw": self.password},
                        )
                        connection.execute(
                            sa.text(
                                f"GRANT ALL PRIVILEGES ON {self.name}.* TO '{self.name}'@'{host}'"
                            )
                        )
        finally:
            admin.dispose()
        server = self._server()
        self.engine = share_preferred_tls(
            sa.create_engine(server.set(database=self.name), poolclass=sa.pool.NullPool)
        )
        self._proxy = TcpProxy((server.host or "127.0.0.1", server.port or _port(self.dialect)))
        self._proxy.start()

    def remove(self) -> None:
        with self._lock:
            if self._held is not None:
                self._held.close()
                self._held = None
        if self.dialect == "sqlite":
            for path in (self.path, self.path.with_name(self.path.name + "-journal")):
                path.unlink(missing_ok=True)
            return
        if self._proxy is not None:
            self._proxy.stop()
        if self.engine is not None:
            self.engine.dispose()
        self._drop()
        self._drop_users()

    def _drop(self) -> None:
        admin = self._admin()
        force = " WITH (FORCE)" if self.dialect == "postgresql" else ""
        try:
            with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(sa.text(f"DROP DATABASE IF EXISTS {self.name}{force}"))
        finally:
            admin.dispose()

    def _drop_users(self) -> None:
        if self.dialect != "mariadb":
            return
        admin = self._admin()
        try:
            with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                for host in _MARIADB_HOSTS:
                    connection.execute(sa.text(f"DROP USER IF EXISTS '{self.name}'@'{host}'"))
        finally:
            admin.dispose()

    def connector_config(self) -> dict[str, str]:
        """``connection.url`` (through the proxy for a server) and the user."""
        if self.dialect == "sqlite":
            return {"connection.url": f"sqlite:///{self.path}"}
        assert self._proxy is not None
        server = self._server()
        url = server.set(host="127.0.0.1", port=self._proxy.port, database=self.name, password=None)
        if self.dialect == "mariadb":
            url = url.set(username=self.name)
            return {"connection.url": url.render_as_string(), "connection.password": self.password}
        config = {"connection.url": url.render_as_string()}
        if server.password:
            config["connection.password"] = str(server.password)
        return config

    # ------------------------------------------------------------------ statements
    def quote(self, name: str) -> str:
        return '"' + name + '"' if self.dialect != "mariadb" else "`" + name + "`"

    def run(self, statements: Sequence[tuple[str, Any]]) -> None:
        """Run ``(sql, params)`` statements in one transaction (params: a dict or a list)."""
        if self.dialect == "sqlite":
            with self._sqlite() as connection:
                for sql, params in statements:
                    if isinstance(params, list):
                        connection.executemany(sql, params)
                    else:
                        connection.execute(sql, params or {})
            return
        assert self.engine is not None
        with self.engine.begin() as connection:
            for sql, params in statements:
                connection.execute(sa.text(sql), params or {})

    @contextlib.contextmanager
    def _sqlite(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._held is not None:
                yield self._held  # its transaction commits when the outage ends
                return
            connection = sqlite3.connect(self.path, timeout=_TIMEOUT_S, isolation_level=None)
            try:
                connection.execute("BEGIN IMMEDIATE")
                yield connection
                connection.execute("COMMIT")
            finally:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                connection.close()

    # ------------------------------------------------------------------ failures
    def break_for_good(self) -> None:
        if self.dialect != "sqlite":
            self._drop()
            return
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

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        if self.dialect != "sqlite":
            assert self._proxy is not None
            self._proxy.cut()
            try:
                yield
            finally:
                self._proxy.restore()
            return
        connection = sqlite3.connect(
            self.path, timeout=_TIMEOUT_S, isolation_level=None, check_same_thread=False
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
                connection.execute("COMMIT")
        finally:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            connection.close()


def _port(dialect: str) -> int:
    return 5432 if dialect == "postgresql" else 3306


class SqlSourceDriver(SourceDriver):
    """Input streams are tables ``t0`` .. ``t3`` of one database (dialect: ``CDK_SQL_DIALECT``).

    Every table has ``id`` (the incrementing column), ``name``, ``amount`` (a decimal),
    ``created`` (a timestamp), ``active`` (a boolean) and a column of each other type the
    source maps (:mod:`._certify_rows`); :meth:`evolve_schema` adds optional text columns. The
    source runs in ``incrementing`` mode.
    """

    connector: ClassVar[type[Connector] | str] = SqlSourceConnector
    delivery: ClassVar[Delivery] = Delivery.AT_LEAST_ONCE
    streams: ClassVar[int] = 4
    detects_new_streams: ClassVar[bool] = True
    dialect: ClassVar[str | None] = None

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.database = CertDatabase(_dialect(self.dialect), workdir)
        self._tables: set[int] = set()
        self._added: dict[int, list[str]] = {}
        self._written: dict[int, dict[str, Any]] = {}

    def setup(self) -> None:
        self.database.create()

    def teardown(self) -> None:
        self.database.remove()

    def example_config(self, topic: str) -> dict[str, str]:
        return {
            **self.database.connector_config(),
            "mode": "incrementing",
            "incrementing.column.name": "id",
            "topic.prefix": topic,
            "poll.interval.ms": "100",
            "table.poll.interval.ms": "500",
            "connection.attempts": "3",
            "connection.backoff.ms": "500",
        }

    @staticmethod
    def table(stream: int) -> str:
        """The table of input stream ``stream``."""
        return f"t{stream}"

    def _create(self, stream: int) -> list[tuple[str, Any]]:
        if stream in self._tables:
            return []
        self._tables.add(stream)
        db = self.database
        return [
            (
                f"CREATE TABLE IF NOT EXISTS {db.quote(self.table(stream))} ({ddl(db.dialect)})",
                None,
            )
        ]

    def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
        added = self._added.get(stream, [])
        rows = [{**row_values(i), **{name: f"{name}-{i}" for name in added}} for i in ids]
        self._insert(rows, stream)

    def value_schema(self) -> Schema:
        return source_schema(self.database.dialect)

    @property
    def value_limits(self) -> list[Limit]:
        """What the tables of the dialect cannot hold (SCH-09), found by running the check."""
        return source_limits(self.database.dialect)

    def write_values(self, values: Sequence[Any], *, stream: int = 0) -> list[Hashable]:
        rows = [{f: value.get(f) for f in COLUMNS} for value in values]
        self._insert(rows, stream)
        return [row["id"] for row in rows]

    def _insert(self, values: Sequence[dict[str, Any]], stream: int) -> None:
        db = self.database
        added = self._added.get(stream, [])
        columns = [*COLUMNS, *added]
        values = [{**dict.fromkeys(added), **v} for v in values]
        if db.dialect == "sqlite":
            marks = ", ".join("?" for _ in columns)
            rows: Any = [tuple(sqlite_value(v[c]) for c in columns) for v in values]
        else:
            marks = ", ".join(f":{c}" for c in columns)
            rows = None
        sql = (
            f"INSERT INTO {db.quote(self.table(stream))} "
            f"({', '.join(db.quote(c) for c in columns)}) VALUES ({marks})"
        )
        statements = self._create(stream)
        if rows is not None:
            statements.append((sql, rows))
        else:
            statements.extend((sql, {c: server_value(v[c]) for c in columns}) for v in values)
        db.run(statements)
        self._written.update((v["id"], v) for v in values)

    def expected_value(self, record_id: int) -> Any:
        return self._written[record_id]

    def evolve_schema(self, *, stream: int = 0) -> str:
        db = self.database
        added = self._added.setdefault(stream, [])
        name = f"note{len(added) + 1}"
        statements = self._create(stream)
        kind = "TEXT" if db.dialect == "sqlite" else "VARCHAR(100)"
        statements.append(
            (f"ALTER TABLE {db.quote(self.table(stream))} ADD COLUMN {db.quote(name)} {kind}", None)
        )
        db.run(statements)
        added.append(name)
        return name

    def break_external_system(self) -> None:
        self.database.break_for_good()

    def outage(self) -> contextlib.AbstractContextManager[None]:
        return self.database.outage()


class SqliteSourceDriver(SqlSourceDriver):
    """The source driver on SQLite, whatever ``CDK_SQL_DIALECT`` says."""

    dialect: ClassVar[str | None] = "sqlite"


class PostgresqlSourceDriver(SqlSourceDriver):
    """The source driver on PostgreSQL."""

    dialect: ClassVar[str | None] = "postgresql"


class MariadbSourceDriver(SqlSourceDriver):
    """The source driver on MariaDB."""

    dialect: ClassVar[str | None] = "mariadb"


# The sink's drivers (imported last: they build on CertDatabase above).
from reference_connectors.sql._certify_sink import (  # noqa: E402
    MariadbSinkDriver,
    PostgresqlSinkDriver,
    SqliteSinkDriver,
    SqlSinkDriver,
)
