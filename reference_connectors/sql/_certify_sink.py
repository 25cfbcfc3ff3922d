"""The SQL sink's certification drivers (re-exported by :mod:`reference_connectors.sql.certify`).

The dialect is chosen as for the source driver: ``CDK_SQL_DIALECT`` (``sqlite``, the default,
``postgresql`` or ``mariadb``) for :class:`SqlSinkDriver`, or a dialect's class directly
(:class:`SqliteSinkDriver`, :class:`PostgresqlSinkDriver`, :class:`MariadbSinkDriver`). Each
driver owns one database (:class:`~reference_connectors.sql.certify.CertDatabase`: a SQLite file,
or a fresh database on the server reached through a TCP proxy that outages cut).

The sink runs with ``insert.mode=insert`` and ``pk.mode=none``: nothing but the offsets it keeps
in the database (``__connect_offsets``, written in the rows' transaction) stops a redelivered
record from becoming a second row. So the driver claims exactly-once delivery, and any duplicate
(after a crash, a rebalance, an outage) fails a check. Tables are created and evolved by the sink
(``auto.create``, ``auto.evolve``). :meth:`SqlSinkDriver.read_values` reads the rows back as
Connect values, through the column types the SQL source maps.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cdk import Connector, Date, Schema, SchemaBuilder, Time
from harness import Delivery, Limit, SinkDriver, default_sink_value_schema
from reference_connectors.sql._eos import OFFSETS_TABLE
from reference_connectors.sql._reflect import select_column
from reference_connectors.sql._sink import SqlSinkConnector
from reference_connectors.sql._types_in import from_declared_sqlite, from_reflected

if TYPE_CHECKING:
    from reference_connectors.sql.certify import CertDatabase

__all__ = ["MariadbSinkDriver", "PostgresqlSinkDriver", "SqlSinkDriver", "SqliteSinkDriver"]

_UTC = dt.timezone.utc


class SqlSinkDriver(SinkDriver):
    """The sink writes a table per topic into one database (dialect: ``CDK_SQL_DIALECT``)."""

    connector: ClassVar[type[Connector] | str] = SqlSinkConnector
    delivery: ClassVar[Delivery] = Delivery.EXACTLY_ONCE
    dialect: ClassVar[str | None] = None

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        from reference_connectors.sql.certify import CertDatabase, _dialect

        self.database: CertDatabase = CertDatabase(_dialect(self.dialect), workdir)

    @property
    def value_limits(self) -> list[Limit]:
        """What the dialect's columns cannot hold (SCH-09), found by running the check."""
        return value_limits(self.database.dialect)

    def value_schema(self) -> Schema:
        """The default record with a field of every other type the sink maps to a column."""
        base = default_sink_value_schema()
        builder = SchemaBuilder.struct().name(base.name or "cdk.certify.Record")
        for f in base.fields:
            builder.field(f.name, f.schema)
        for name, schema in _MORE_FIELDS:
            builder.field(name, schema)
        return builder.build()

    def setup(self) -> None:
        self.database.create()

    def teardown(self) -> None:
        self.database.remove()

    def example_config(self, topics: str) -> dict[str, str]:
        return {
            **self.database.connector_config(),
            "topics": topics,
            "insert.mode": "insert",
            "pk.mode": "none",
            "auto.create": "true",
            "auto.evolve": "true",
            "retry.backoff.ms": "200",
            "max.retries": "100",
            "connection.attempts": "3",
            "connection.backoff.ms": "500",
        }

    # ------------------------------------------------------------------ reading back
    def _rows(self) -> Iterator[dict[str, Any]]:
        """Every stored row as Connect values, from every table that has an ``id`` column."""
        if self.database.dialect == "sqlite":
            yield from self._sqlite_rows()
        else:
            yield from self._server_rows()

    def _sqlite_rows(self) -> Iterator[dict[str, Any]]:
        db = self.database
        if not db.path.exists():
            return
        with db._sqlite() as connection:
            names = [
                str(row[0])
                for row in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
                )
            ]
            tables = []
            for table in names:
                if table == OFFSETS_TABLE or table.startswith("sqlite_"):
                    continue
                info = connection.execute(f"PRAGMA table_info({db.quote(table)})").fetchall()
                # by name: the sink may add a column between the two statements
                listed = ", ".join(db.quote(str(row[1])) for row in info)
                rows = connection.execute(f"SELECT {listed} FROM {db.quote(table)}").fetchall()
                tables.append((info, rows))
        for info, rows in tables:
            columns = [str(row[1]) for row in info]
            if "id" not in columns:
                continue
            types = [from_declared_sqlite(str(row[2] or "")) for row in info]
            converters = [t.converter(_UTC) if t is not None else _same for t in types]
            for row in rows:
                yield {
                    name: convert(value)
                    for name, convert, value in zip(columns, converters, row, strict=True)
                }

    def _server_rows(self) -> Iterator[dict[str, Any]]:
        import sqlalchemy as sa

        engine = self.database.engine
        assert engine is not None
        family = "mysql" if self.database.dialect == "mariadb" else "postgresql"
        with engine.connect() as connection:
            inspector = sa.inspect(connection)
            for table in sorted(inspector.get_table_names()):
                if table == OFFSETS_TABLE:
                    continue
                reflected = inspector.get_columns(table)
                columns = [str(info["name"]) for info in reflected]
                if "id" not in columns:
                    continue
                types = [from_reflected(family, info["type"]) for info in reflected]
                converters = [t.converter(_UTC) if t is not None else _same for t in types]
                # the reflected columns by name: the sink may add one (auto.evolve) between
                # the reflection and the query; the next read sees it
                listed = ", ".join(
                    select_column(connection, name, t)
                    if t is not None
                    else self.database.quote(name)
                    for name, t in zip(columns, types, strict=True)
                )
                rows = connection.exec_driver_sql(
                    f"SELECT {listed} FROM {self.database.quote(table)}"
                ).fetchall()
                for row in rows:
                    yield {
                        name: convert(value)
                        for name, convert, value in zip(columns, converters, row, strict=True)
                    }

    def read_back(self) -> list[Hashable]:
        return [row["id"] for row in self._rows()]

    def read_values(self) -> dict[Hashable, Any]:
        return {row["id"]: row for row in self._rows()}

    # ------------------------------------------------------------------ failures
    def break_external_system(self) -> None:
        self.database.break_for_good()

    def outage(self) -> contextlib.AbstractContextManager[None]:
        return self.database.outage()


#: The fields the driver adds to the default record: one of each type the sink maps.
_MORE_FIELDS = (
    ("tiny", Schema.OPTIONAL_INT8_SCHEMA),
    ("small", Schema.OPTIONAL_INT16_SCHEMA),
    ("count", Schema.OPTIONAL_INT32_SCHEMA),
    ("big", Schema.OPTIONAL_INT64_SCHEMA),
    ("ratio", Schema.OPTIONAL_FLOAT32_SCHEMA),
    ("data", Schema.OPTIONAL_BYTES_SCHEMA),
    ("day", Date.builder().optional().build()),
    ("at", Time.builder().optional().build()),
)


def value_limits(dialect: str) -> list[Limit]:
    """The values the sink's tables cannot hold on ``dialect``, each with its reason."""
    if dialect == "postgresql":
        return [Limit.excludes("*", "\x00", "PostgreSQL's text types cannot hold NUL (U+0000)")]
    if dialect == "sqlite":
        reason = "SQLite keeps a REAL value with no fraction as an integer: -0.0 reads back as 0"
    else:
        reason = "MariaDB's DOUBLE and FLOAT have no negative zero: -0.0 is stored as 0"
    return [Limit.no_negative_zero("*", reason)]


def _same(value: Any) -> Any:
    return value


class SqliteSinkDriver(SqlSinkDriver):
    """The sink driver on SQLite, whatever ``CDK_SQL_DIALECT`` says."""

    dialect: ClassVar[str | None] = "sqlite"


class PostgresqlSinkDriver(SqlSinkDriver):
    """The sink driver on PostgreSQL."""

    dialect: ClassVar[str | None] = "postgresql"


class MariadbSinkDriver(SqlSinkDriver):
    """The sink driver on MariaDB."""

    dialect: ClassVar[str | None] = "mariadb"
