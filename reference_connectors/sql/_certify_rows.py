"""The source driver's tables: their columns on each dialect, the values in them, the limits.

Every table has ``id`` (the incrementing column), ``name``, ``amount`` (a decimal), ``created``
(a timestamp), ``active`` (a boolean) and a column of each other type the source maps, all
nullable: ``tiny``, ``small``, ``count``, ``big`` (integers of each width the dialect has),
``ratio`` and ``score`` (single and double precision floats), ``data`` (bytes), ``day`` (a
date) and ``at`` (a time). :func:`source_schema` is what the source emits for them, and
:func:`source_limits` what they cannot hold (found by running SCH-09).
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from cdk import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp
from harness import Limit

__all__ = [
    "COLUMNS",
    "ddl",
    "row_values",
    "server_value",
    "source_limits",
    "source_schema",
    "sqlite_value",
]

_BASE_TIME = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
_OPTIONAL_DATE = Date.builder().optional().build()
_OPTIONAL_TIME = Time.builder().optional().build()

#: Each column: its type on (sqlite, postgresql, mariadb) and the schema the source emits
#: for it on each.
_TABLE: tuple[tuple[str, tuple[str, str, str], tuple[Schema, Schema, Schema]], ...] = (
    ("id", ("INTEGER", "BIGINT", "BIGINT"), (Schema.INT64_SCHEMA,) * 3),
    ("name", ("TEXT", "VARCHAR(100)", "VARCHAR(100)"), (Schema.STRING_SCHEMA,) * 3),
    (
        "amount",
        ("DECIMAL_TEXT(2)", "NUMERIC(12,2)", "DECIMAL(12,2)"),
        (Decimal.builder(2).optional().build(),) * 3,
    ),
    (
        "created",
        ("TIMESTAMP", "TIMESTAMP(3)", "DATETIME(3)"),
        (Timestamp.builder().optional().build(),) * 3,
    ),
    ("active", ("BOOLEAN",) * 3, (Schema.OPTIONAL_BOOLEAN_SCHEMA,) * 3),
    (
        "tiny",
        ("TINYINT", "SMALLINT", "TINYINT"),
        (Schema.OPTIONAL_INT64_SCHEMA, Schema.OPTIONAL_INT16_SCHEMA, Schema.OPTIONAL_INT8_SCHEMA),
    ),
    (
        "small",
        ("SMALLINT",) * 3,
        (Schema.OPTIONAL_INT64_SCHEMA, Schema.OPTIONAL_INT16_SCHEMA, Schema.OPTIONAL_INT16_SCHEMA),
    ),
    (
        "count",
        ("INTEGER", "INTEGER", "INT"),
        (Schema.OPTIONAL_INT64_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA),
    ),
    ("big", ("BIGINT",) * 3, (Schema.OPTIONAL_INT64_SCHEMA,) * 3),
    (
        "ratio",
        ("REAL", "REAL", "FLOAT"),
        (
            Schema.OPTIONAL_FLOAT64_SCHEMA,  # SQLite has one floating point type, 64 bits
            Schema.OPTIONAL_FLOAT32_SCHEMA,
            Schema.OPTIONAL_FLOAT32_SCHEMA,
        ),
    ),
    (
        "score",
        ("DOUBLE", "DOUBLE PRECISION", "DOUBLE"),
        (Schema.OPTIONAL_FLOAT64_SCHEMA,) * 3,
    ),
    ("data", ("BLOB", "BYTEA", "LONGBLOB"), (Schema.OPTIONAL_BYTES_SCHEMA,) * 3),
    ("day", ("DATE",) * 3, (_OPTIONAL_DATE,) * 3),
    ("at", ("TIME", "TIME(3)", "TIME(3)"), (_OPTIONAL_TIME,) * 3),
)
_DIALECTS = ("sqlite", "postgresql", "mariadb")

#: The columns, in order.
COLUMNS: tuple[str, ...] = tuple(name for name, _, _ in _TABLE)


def ddl(dialect: str) -> str:
    """The column definitions of a table on ``dialect`` (for ``CREATE TABLE``)."""
    index = _DIALECTS.index(dialect)
    parts = []
    for name, types, _ in _TABLE:
        quoted = f"`{name}`" if dialect == "mariadb" else f'"{name}"'
        constraint = ""
        if name == "id":
            constraint = " NOT NULL PRIMARY KEY"
        elif name == "name":
            constraint = " NOT NULL"
        parts.append(f"{quoted} {types[index]}{constraint}")
    return ", ".join(parts)


def source_schema(dialect: str) -> Schema:
    """The value schema the source emits for a table on ``dialect``."""
    index = _DIALECTS.index(dialect)
    builder = SchemaBuilder.struct()
    for name, _, schemas in _TABLE:
        builder.field(name, schemas[index])
    return builder.build()


def source_limits(dialect: str) -> list[Limit]:
    """The values the tables cannot hold on ``dialect``, each with its reason."""
    if dialect == "sqlite":
        return [Limit.no_negative_zero("*", _SQLITE_ZERO)]
    out = [
        Limit.max_length("name", 100, "the column is VARCHAR(100)"),
        Limit.digits(
            "amount",
            12,
            f"the column is {'NUMERIC' if dialect == 'postgresql' else 'DECIMAL'}(12,2)",
        ),
    ]
    if dialect == "postgresql":
        out.append(Limit.excludes("*", "\x00", "PostgreSQL's text types cannot hold NUL (U+0000)"))
    else:
        out.append(Limit.no_negative_zero("*", _MARIADB_ZERO))
    return out


_SQLITE_ZERO = "SQLite keeps a REAL value with no fraction as an integer: -0.0 reads back as 0"
_MARIADB_ZERO = "MariaDB's DOUBLE and FLOAT have no negative zero: -0.0 is stored as 0"


def row_values(i: int) -> dict[str, Any]:
    """Row ``i``'s columns as Connect values (what ``write_records`` writes)."""
    return {
        "id": i,
        "name": f"name-{i}",
        "amount": None if i % 5 == 0 else decimal.Decimal(i * 7 + 1).scaleb(-2),
        "created": _BASE_TIME + dt.timedelta(seconds=i * 61, milliseconds=i % 1000),
        "active": i % 2 == 0,
        "tiny": i % 100,
        "small": i % 30_000,
        "count": i * 1_000,
        "big": i * 2**33,
        "ratio": i / 4,
        "score": i / 3,
        "data": f"data-{i}".encode(),
        "day": _BASE_TIME.date() + dt.timedelta(days=i % 3650),
        "at": (_BASE_TIME + dt.timedelta(milliseconds=i * 1_234 % 86_400_000)).time(),
    }


def sqlite_value(value: Any) -> Any:
    """How the driver stores a Connect value in SQLite (as the source reads it back)."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat(timespec="milliseconds")
    if isinstance(value, bool):
        return int(value)
    return value


def server_value(value: Any) -> Any:
    """A Connect value as a PostgreSQL or MariaDB parameter (timestamps naive, in UTC)."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value
